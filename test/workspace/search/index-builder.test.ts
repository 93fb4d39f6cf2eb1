import { describe, expect, it } from "vitest";
import { SearchIndexBuilder } from "../../../src/workspace/search/index-builder";
import { decodeDirectory, decodePostings } from "../../../src/workspace/search/index-layout";
import { BYTE_CLASS, TRIGRAM_KEY_MASK } from "../../../src/workspace/search/trigrams";

/** A bucket that keeps what is put, in memory. */
function memoryBucket() {
  const objects = new Map<string, Uint8Array>();
  const bucket = {
    put: async (key: string, value: Uint8Array) => {
      objects.set(key, new Uint8Array(value));
      return null;
    },
    delete: async () => {},
  } as unknown as R2Bucket;
  return { bucket, objects };
}

/** Deterministic bytes: code-like ASCII with some UTF-8 and control bytes. */
function fileBytes(seed: number, size: number): Uint8Array {
  const alphabet = new TextEncoder().encode("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 _$.(){};,:=\n\t\"'/*-<>!ü€😀\r");
  const out = new Uint8Array(size);
  let x = seed * 2654435761;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = alphabet[x % alphabet.length]!;
  }
  return out;
}

async function build(files: Uint8Array[], feed: (file: Uint8Array, add: (chunk: Uint8Array) => void) => void) {
  const { bucket, objects } = memoryBucket();
  const builder = new SearchIndexBuilder(bucket, "w_builder", 5_000);
  let offset = 0;
  for (const file of files) {
    builder.beginFile(offset);
    feed(file, (chunk) => builder.addBytes(chunk));
    await builder.endFile();
    offset += file.byteLength;
  }
  await builder.finish();
  return objects;
}

/** Every chunk is copied to an odd offset of its own buffer, so two-byte reads start misaligned. */
function misaligned(chunk: Uint8Array): Uint8Array {
  const buffer = new Uint8Array(chunk.byteLength + 1);
  buffer.set(chunk, 1);
  return buffer.subarray(1);
}

describe("SearchIndexBuilder", () => {
  const files = Array.from({ length: 40 }, (_, i) => fileBytes(i + 1, [0, 1, 2, 3, 5, 17, 100, 1000, 4099][i % 9]! + i * 37));

  it("stores the same index whatever the chunks the bytes arrive in, aligned or not", async () => {
    const whole = await build(files, (file, add) => add(file));
    const sizes = [1, 2, 3, 7, 64, 1001];
    const chunked = await build(files, (file, add) => {
      for (let at = 0, k = 0; at < file.byteLength; k++) {
        const size = sizes[k % sizes.length]!;
        const chunk = file.subarray(at, at + size);
        add(k % 2 === 0 ? misaligned(chunk) : chunk);
        at += size;
      }
    });
    expect([...chunked.keys()]).toEqual([...whole.keys()]);
    expect(whole.size).toBeGreaterThan(2); // several shards and the directory
    for (const [key, bytes] of whole) expect(chunked.get(key), key).toEqual(bytes);
  });

  it("lists for every file exactly the trigram keys of its bytes, counted one byte at a time", async () => {
    const objects = await build(files, (file, add) => add(misaligned(file)));
    const directory = decodeDirectory(objects.get("workspaces/w_builder/search/directory")!);
    const listed = files.map(() => new Set<number>());
    directory.shards.forEach((shard, n) => {
      const body = objects.get(`workspaces/w_builder/search/postings-${String(n).padStart(4, "0")}`)!;
      shard.keys.forEach((key, i) => {
        for (const local of decodePostings(body.subarray(i === 0 ? 0 : shard.ends[i - 1]!, shard.ends[i]!))) {
          listed[shard.firstFile + local]!.add(key);
        }
      });
    });
    files.forEach((file, n) => {
      const expected = new Set<number>();
      let key = 0;
      for (const byte of file) {
        key = ((key << 6) | BYTE_CLASS[byte]!) & TRIGRAM_KEY_MASK;
        expected.add(key);
      }
      expect(
        [...listed[n]!].sort((a, b) => a - b),
        `file ${n}`,
      ).toEqual([...expected].sort((a, b) => a - b));
    });
  });
});
