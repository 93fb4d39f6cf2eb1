import { describe, expect, it } from "vitest";
import { SEARCH_MAX_FILE_BYTES } from "../../../src/domain/limits";
import { SearchIndexBuilder } from "../../../src/workspace/search/index-builder";
import {
  decodeDirectory,
  decodePostings,
  FILE_BINARY,
  FILE_UNINDEXED,
  isDenseList,
  PIECES_PER_DOC,
} from "../../../src/workspace/search/index-layout";
import { SEARCH_PIECE_BYTES, searchTextOf } from "../../../src/workspace/search/search-text";
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
  const builder = new SearchIndexBuilder(bucket, "w_builder", 5_000, 4);
  let offset = 0;
  for (const file of files) {
    builder.beginFile(offset, file.byteLength);
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

/** Where searchTextOf starts each piece of a file (none for an empty file). */
function pieceStarts(bytes: Uint8Array): number[] {
  const starts: number[] = [];
  for (let start = 0; start < bytes.byteLength; ) {
    starts.push(start);
    const newline = bytes.indexOf(0x0a, start + SEARCH_PIECE_BYTES - 1);
    start = newline < 0 ? bytes.byteLength : newline + 1;
  }
  return starts;
}

describe("SearchIndexBuilder", () => {
  const small = Array.from({ length: 40 }, (_, i) => fileBytes(i + 1, [0, 1, 2, 3, 5, 17, 100, 1000, 4099][i % 9]! + i * 37));
  // Files cut into pieces: one ends with its cut "\n" exactly, one has a single line longer than a piece.
  const exact = fileBytes(90, SEARCH_PIECE_BYTES + 500).map((b) => (b === 0x0a ? 0x20 : b));
  exact[SEARCH_PIECE_BYTES + 499] = 0x0a;
  const longLine = fileBytes(91, 3 * SEARCH_PIECE_BYTES).map((b) => (b === 0x0a ? 0x20 : b));
  const binary = fileBytes(92, 20_000);
  binary[7_000] = 0;
  const multiPiece = fileBytes(93, 70_000);
  // Many one-doc files, so doc marks run out (255) and start over twice; a binary file among them.
  const tiny = Array.from({ length: 600 }, (_, i) => fileBytes(300 + i, 20 + (i % 60)));
  const binaryAmongTiny = fileBytes(97, 300);
  binaryAmongTiny[100] = 0;
  const files = [
    ...tiny.slice(0, 250),
    binaryAmongTiny,
    ...tiny.slice(250),
    ...small.slice(0, 20),
    multiPiece,
    binary,
    fileBytes(94, 40_000),
    exact,
    ...small.slice(20),
    longLine,
    fileBytes(95, 5 * SEARCH_PIECE_BYTES),
    fileBytes(96, 20 * SEARCH_PIECE_BYTES),
  ];

  it("stores the same index whatever the chunks the bytes arrive in, aligned or not", async () => {
    const whole = await build(files, (file, add) => add(file));
    const sizes = [1, 2, 3, 7, 64, 1001, 16_383, 5_000];
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

  it("lists every doc of a shard of thousands of docs exactly, gaps of one to three bytes, dense keys among them", async () => {
    // 20,000 one-doc files in one shard: gaps up to 20,000, past one (128) and two (16,384) bytes of LEB128.
    // Each starts with "the ": its keys are in every doc, so the shard stores them as dense.
    const the = new TextEncoder().encode("the ");
    const tiny = Array.from({ length: 20_000 }, (_, i) => new Uint8Array([...the, ...fileBytes(1_000 + i, 3 + (i % 11))]));
    const { bucket, objects } = memoryBucket();
    const builder = new SearchIndexBuilder(bucket, "w_builder", 1 << 20, 16);
    let offset = 0;
    for (const file of tiny) {
      builder.beginFile(offset, file.byteLength);
      builder.addBytes(file);
      await builder.endFile();
      offset += file.byteLength;
    }
    await builder.finish();
    const directory = decodeDirectory(objects.get("workspaces/w_builder/search/directory")!);
    expect(directory.shards.map((shard) => shard.docCount)).toEqual([20_000]);
    const expected = new Map<number, number[]>();
    tiny.forEach((file, doc) => {
      let key = 0;
      const keys = new Set<number>();
      for (const byte of file) {
        key = ((key << 6) | BYTE_CLASS[byte]!) & TRIGRAM_KEY_MASK;
        keys.add(key);
      }
      for (const k of keys) expected.set(k, [...(expected.get(k) ?? []), doc]);
    });
    const [shard] = directory.shards;
    const body = objects.get("workspaces/w_builder/search/postings-0000")!;
    expect([...shard!.keys]).toEqual([...expected.keys()].sort((a, b) => a - b));
    let dense = 0;
    let wide = 0;
    shard!.keys.forEach((key, i) => {
      const list = body.subarray(i === 0 ? 0 : shard!.ends[i - 1]!, shard!.ends[i]!);
      const docs = expected.get(key)!;
      if (isDenseList(list)) {
        dense++;
        expect(docs.length, `key ${key}`).toBeGreaterThanOrEqual(10_000);
        return;
      }
      expect([...decodePostings(list)], `key ${key}`).toEqual(docs);
      if (list.byteLength > docs.length + 1) wide++;
    });
    expect(dense).toBeGreaterThan(0);
    expect(wide).toBeGreaterThan(100);
  });

  it("lists a file larger than grep searches without indexing it: no pieces, no docs, flagged unindexed", async () => {
    const needle = new TextEncoder().encode("a needle here\n");
    const big = new Uint8Array(SEARCH_MAX_FILE_BYTES + 1);
    for (let at = 0; at < big.byteLength; at += needle.byteLength) big.set(needle.subarray(0, big.byteLength - at), at);
    const before = fileBytes(97, 3_000);
    const after = fileBytes(98, 3_000);
    const objects = await build([before, big, after], (file, add) => {
      for (let at = 0; at < file.byteLength; at += 1 << 20) add(file.subarray(at, at + (1 << 20)));
    });
    const directory = decodeDirectory(objects.get("workspaces/w_builder/search/directory")!);
    expect([...directory.flags]).toEqual([0, FILE_UNINDEXED, 0]);
    expect([...directory.pieces!.firstPiece]).toEqual([0, 1, 1, 2]);
    // Two docs in all (one per small file): the posting lists are those of the small files alone.
    expect(directory.shards.reduce((sum, shard) => sum + shard.docCount, 0)).toBe(2);
    const alone = await build([before, after], (file, add) => add(file));
    const shardKeys = (stored: Map<string, Uint8Array>) => [...stored.keys()].filter((k) => k.includes("/postings-"));
    expect(shardKeys(objects)).toEqual(["workspaces/w_builder/search/postings-0000"]);
    for (const key of shardKeys(alone)) expect(objects.get(key), key).toEqual(alone.get(key));
    const aloneDirectory = decodeDirectory(alone.get("workspaces/w_builder/search/directory")!);
    expect(directory.shards).toEqual(aloneDirectory.shards);
  });

  it("cuts files into the pieces searchTextOf cuts, and lists for every piece exactly the trigram keys ending in it", async () => {
    const objects = await build(files, (file, add) => add(misaligned(file)));
    const directory = decodeDirectory(objects.get("workspaces/w_builder/search/directory")!);
    const table = directory.pieces!;
    expect(table.pieceBytes).toBe(SEARCH_PIECE_BYTES);
    const expectedStarts = files.map((file) => (file === binary || file === binaryAmongTiny ? [] : pieceStarts(file)));
    expect(expectedStarts[files.indexOf(exact)]).toEqual([0]); // its only cut is its last byte
    expect(expectedStarts[files.indexOf(longLine)]).toEqual([0]);
    expect(expectedStarts[files.indexOf(multiPiece)]!.length).toBeGreaterThan(3);
    expect(table.piecesPerDoc).toBe(PIECES_PER_DOC);
    files.forEach((file, n) => {
      const starts = table.starts.subarray(table.firstPiece[n]!, table.firstPiece[n + 1]!);
      expect([...starts], `file ${n}`).toEqual(expectedStarts[n]);
      const lines = table.linesBefore.subarray(table.firstPiece[n]!, table.firstPiece[n + 1]!);
      const newlinesBefore = (end: number) => file.subarray(0, end).filter((b) => b === 0x0a).length;
      expect([...lines], `file ${n}`).toEqual(expectedStarts[n]!.map(newlinesBefore));
    });
    expect(directory.flags[files.indexOf(binary)]).toBe(FILE_BINARY);
    expect(directory.flags[files.indexOf(binaryAmongTiny)]).toBe(FILE_BINARY);
    for (const piece of searchTextOf(multiPiece).selected("all").slice(0, -1)) expect(piece.endsWith("\n")).toBe(true);

    // Docs: each file's pieces in runs of PIECES_PER_DOC, numbered on from file to file.
    const firstDoc = [0];
    for (const starts of expectedStarts) firstDoc.push(firstDoc[firstDoc.length - 1]! + Math.ceil(starts.length / PIECES_PER_DOC));
    const docCount = firstDoc[firstDoc.length - 1]!;
    expect(docCount).toBeLessThan(table.starts.length);
    const listed = Array.from({ length: docCount }, () => new Set<number>());
    /** Per doc, the keys its shard stores as dense ("every doc"). */
    const dense = Array.from({ length: docCount }, () => new Set<number>());
    let shardDocs = 0;
    directory.shards.forEach((shard, n) => {
      expect(shard.firstDoc).toBe(shardDocs);
      shardDocs += shard.docCount;
      const body = objects.get(`workspaces/w_builder/search/postings-${String(n).padStart(4, "0")}`)!;
      shard.keys.forEach((key, i) => {
        const list = body.subarray(i === 0 ? 0 : shard.ends[i - 1]!, shard.ends[i]!);
        const docs = isDenseList(list) ? Array.from({ length: shard.docCount }, (_, d) => d) : decodePostings(list);
        for (const local of docs) {
          listed[shard.firstDoc + local]!.add(key);
          if (isDenseList(list)) dense[shard.firstDoc + local]!.add(key);
        }
      });
    });
    expect(dense.filter((keys) => keys.size > 0).length).toBeGreaterThan(5);
    expect(shardDocs).toBe(docCount);
    // Large files' docs fill shards too: some shard starts inside a file.
    expect(directory.shards.filter((shard) => !firstDoc.includes(shard.firstDoc)).length).toBeGreaterThan(0);
    files.forEach((file, n) => {
      const starts = expectedStarts[n]!;
      const expected = Array.from({ length: Math.ceil(starts.length / PIECES_PER_DOC) }, () => new Set<number>());
      let key = 0;
      let piece = 0;
      file.forEach((byte, i) => {
        key = ((key << 6) | BYTE_CLASS[byte]!) & TRIGRAM_KEY_MASK;
        while (piece + 1 < starts.length && starts[piece + 1]! <= i) piece++;
        expected[Math.floor(piece / PIECES_PER_DOC)]?.add(key);
      });
      expected.forEach((keys, j) => {
        // Exactly its keys, plus keys its shard stores as dense (a wider filter, never a narrower one).
        const doc = firstDoc[n]! + j;
        const shown = [...listed[doc]!].filter((key) => keys.has(key) || !dense[doc]!.has(key));
        expect(
          shown.sort((a, b) => a - b),
          `file ${n} doc ${j}`,
        ).toEqual([...keys].sort((a, b) => a - b));
      });
    });
  });
});
