import { gzipSync, Zip, ZipDeflate, ZipPassThrough, type Zippable, zipSync } from "fflate";
import { packTar, type TarEntry } from "modern-tar";
import { concatBytes } from "../../src/workspace/streams";

/** Test fixtures: archives built in memory (modern-tar, fflate) and hand-made hostile headers. */

export const text = (s: string) => new TextEncoder().encode(s);
export const decode = (b: Uint8Array | ArrayBuffer) => new TextDecoder().decode(b);

/** A tar of files given as `{path: content}` (plus optional extra raw entries). */
export function tarOf(files: Record<string, string | Uint8Array>, extra: TarEntry[] = []): Promise<Uint8Array> {
  const entries: TarEntry[] = Object.entries(files).map(([name, body]) => ({
    header: {
      name,
      size: typeof body === "string" ? text(body).byteLength : body.byteLength,
      type: "file",
      mode: 0o644,
      mtime: new Date(0),
    },
    body,
  }));
  return packTar([...entries, ...extra]);
}

export function entry(name: string, type: NonNullable<TarEntry["header"]["type"]>, more: Partial<TarEntry["header"]> = {}): TarEntry {
  return { header: { name, size: 0, type, mtime: new Date(0), ...more } };
}

export function fileEntry(name: string, body: string | Uint8Array, mode = 0o644): TarEntry {
  const bytes = typeof body === "string" ? text(body) : body;
  return { header: { name, size: bytes.byteLength, type: "file", mode, mtime: new Date(0) }, body: bytes };
}

/**
 * One raw ustar header block for names modern-tar would not write as given; `typeflag` is the
 * single tar type character. Returns header + content + padding.
 */
export function rawTarEntry(name: string, typeflag: string, body: Uint8Array = new Uint8Array(0), linkname = ""): Uint8Array {
  const header = new Uint8Array(512);
  const put = (offset: number, value: string) => header.set(text(value), offset);
  put(0, name);
  put(100, "0000644\0");
  put(108, "0000000\0");
  put(116, "0000000\0");
  put(124, `${body.byteLength.toString(8).padStart(11, "0")}\0`);
  put(136, "00000000000\0");
  put(148, "        ");
  put(156, typeflag);
  put(157, linkname);
  put(257, "ustar\0");
  put(263, "00");
  let sum = 0;
  for (const b of header) sum += b;
  put(148, `${sum.toString(8).padStart(6, "0")}\0 `);
  const padded = new Uint8Array(512 + Math.ceil(body.byteLength / 512) * 512);
  padded.set(header);
  padded.set(body, 512);
  return padded;
}

/** Concatenates raw entries and the two zero blocks that end a tar. */
export function rawTar(...entries: Uint8Array[]): Uint8Array {
  const total = entries.reduce((n, e) => n + e.byteLength, 0) + 1024;
  const out = new Uint8Array(total);
  let at = 0;
  for (const e of entries) {
    out.set(e, at);
    at += e.byteLength;
  }
  return out;
}

export const gzip = (bytes: Uint8Array) => gzipSync(bytes, { level: 6, mtime: 0 });
export const zip = (files: Zippable) => zipSync(files, { mtime: new Date(2020, 0, 1) });

/**
 * A zip written the streaming way (fflate's `Zip`): every local header has flag bit 3 and holds no
 * CRC or sizes; a data descriptor follows the data, and only the central directory has them too.
 * `level: 0` stores an entry, otherwise it is deflated.
 */
export function zipWithDataDescriptors(files: Record<string, { data: Uint8Array; level: 0 | 6 }>): Uint8Array {
  const chunks: Uint8Array[] = [];
  const archive = new Zip((error, chunk) => {
    if (error) throw error;
    chunks.push(chunk);
  });
  for (const [name, { data, level }] of Object.entries(files)) {
    const file = level === 0 ? new ZipPassThrough(name) : new ZipDeflate(name, { level });
    file.mtime = new Date(2020, 0, 1);
    archive.add(file);
    file.push(data, true);
  }
  archive.end();
  return concatBytes(chunks);
}

/** Central-directory records of a (comment-free) zip: name, CRC-32 and where that CRC is stored. */
export function centralDirectory(zip: Uint8Array): { name: string; crc32: number; crcAt: number }[] {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const eocd = zip.byteLength - 22;
  const records = [];
  let at = view.getUint32(eocd + 16, true);
  for (let i = 0; i < view.getUint16(eocd + 10, true); i++) {
    const nameLength = view.getUint16(at + 28, true);
    records.push({
      name: decode(zip.subarray(at + 46, at + 46 + nameLength)),
      crc32: view.getUint32(at + 16, true),
      crcAt: at + 16,
    });
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  return records;
}

/** Bytes that no compressor shrinks (a fixed xorshift sequence), for archives that must stay large. */
export function noise(length: number, seed = 0x9e3779b9): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed | 0;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

export function streamOf(bytes: Uint8Array, chunkBytes = 64 * 1024): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(at, at + chunkBytes));
      at += chunkBytes;
    },
  });
}

/** Every key under `prefix` in the bucket, sorted. */
export async function keysUnder(bucket: R2Bucket, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, cursor });
    keys.push(...page.objects.map((o) => o.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys.sort();
}
