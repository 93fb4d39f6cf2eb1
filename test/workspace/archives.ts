import { gzipSync, Zip, ZipDeflate, ZipPassThrough, type Zippable, zipSync } from "fflate";
import { packTar, type TarEntry } from "modern-tar";
import { crc32 } from "../../src/workspace/crc32";
import { concatBytes } from "../../src/workspace/streams";

/** Test fixtures: archives built in memory (modern-tar, fflate) and hand-made hostile headers. */

export const text = (s: string) => new TextEncoder().encode(s);
export const decode = (b: Uint8Array | ArrayBuffer) => new TextDecoder().decode(b);
/** One byte per character (U+0000-U+00FF): names in a legacy code page, which are not UTF-8. */
export const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

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
 * single tar type character; names are UTF-8 unless given as bytes. `prefix` fills the POSIX prefix
 * field; `magic` "gnu" writes GNU's "ustar  \0" instead of POSIX "ustar\0" "00". Returns header +
 * content + padding.
 */
export function rawTarEntry(
  name: string | Uint8Array,
  typeflag: string,
  body: Uint8Array = new Uint8Array(0),
  linkname: string | Uint8Array = "",
  more: { prefix?: string | Uint8Array; magic?: "posix" | "gnu" } = {},
): Uint8Array {
  const header = new Uint8Array(512);
  const put = (offset: number, value: string | Uint8Array) => header.set(typeof value === "string" ? text(value) : value, offset);
  put(0, name);
  put(100, "0000644\0");
  put(108, "0000000\0");
  put(116, "0000000\0");
  put(124, `${body.byteLength.toString(8).padStart(11, "0")}\0`);
  put(136, "00000000000\0");
  put(148, "        ");
  put(156, typeflag);
  put(157, linkname);
  if (more.magic === "gnu") put(257, "ustar  \0");
  else {
    put(257, "ustar\0");
    put(263, "00");
  }
  if (more.prefix) put(345, more.prefix);
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

/** A GNU long name ('L') or long link target ('K') header and its data, for the entry that follows it. */
export function gnuLongEntry(typeflag: "L" | "K", value: string | Uint8Array): Uint8Array {
  const bytes = typeof value === "string" ? text(value) : value;
  return rawTarEntry("././@LongLink", typeflag, concatBytes([bytes, new Uint8Array(1)]), "", { magic: "gnu" });
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

export interface RawZipEntry {
  /** UTF-8 unless given as bytes (e.g. a name in an OEM code page). */
  name: string | Uint8Array;
  data: string | Uint8Array;
  /** "Version made by": the host in the high byte (0 MS-DOS, 3 Unix, 10 NTFS); Unix by default. */
  madeBy?: number;
  flags?: number;
  /** External attributes; a 0644 Unix file (mode in the high 16 bits) by default. */
  attributes?: number;
  /** Extra field bytes (see `zipExtra`), in both the local and the central header. */
  extra?: Uint8Array;
  /** Added to the local header offset the central directory gives, to make a corrupt zip. */
  localOffsetDelta?: number;
  /** The entry's comment, in its central-directory record only. */
  comment?: string;
}

/** A zip of stored entries written byte by byte, for names, hosts and fields fflate would not write as given. */
export function rawZip(entries: RawZipEntry[], centralOrder: number[] = entries.map((_, i) => i)): Uint8Array {
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = typeof e.name === "string" ? text(e.name) : e.name;
    const data = typeof e.data === "string" ? text(e.data) : e.data;
    const extra = e.extra ?? new Uint8Array(0);
    const comment = text(e.comment ?? "");
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    local.setUint16(4, 20, true);
    local.setUint16(6, e.flags ?? 0, true);
    local.setUint32(14, crc32(data), true);
    local.setUint32(18, data.byteLength, true);
    local.setUint32(22, data.byteLength, true);
    local.setUint16(26, name.byteLength, true);
    local.setUint16(28, extra.byteLength, true);
    const central = new DataView(new ArrayBuffer(46));
    central.setUint32(0, 0x02014b50, true);
    central.setUint16(4, e.madeBy ?? (3 << 8) | 20, true);
    central.setUint16(6, 20, true);
    central.setUint16(8, e.flags ?? 0, true);
    central.setUint32(16, crc32(data), true);
    central.setUint32(20, data.byteLength, true);
    central.setUint32(24, data.byteLength, true);
    central.setUint16(28, name.byteLength, true);
    central.setUint16(30, extra.byteLength, true);
    central.setUint16(32, comment.byteLength, true);
    central.setUint32(38, e.attributes ?? (0o100644 << 16) >>> 0, true);
    central.setUint32(42, offset + (e.localOffsetDelta ?? 0), true);
    const entry = concatBytes([new Uint8Array(local.buffer), name, extra, data]);
    locals.push(entry);
    centrals.push(concatBytes([new Uint8Array(central.buffer), name, extra, comment]));
    offset += entry.byteLength;
  }
  const directory = concatBytes(centralOrder.map((i) => centrals[i]!));
  const eocd = new DataView(new ArrayBuffer(22));
  eocd.setUint32(0, 0x06054b50, true);
  eocd.setUint16(8, entries.length, true);
  eocd.setUint16(10, entries.length, true);
  eocd.setUint32(12, directory.byteLength, true);
  eocd.setUint32(16, offset, true);
  return concatBytes([...locals, directory, new Uint8Array(eocd.buffer)]);
}

/** One zip extra field: its id, its length, its data. */
export function zipExtra(id: number, data: Uint8Array): Uint8Array {
  const head = new DataView(new ArrayBuffer(4));
  head.setUint16(0, id, true);
  head.setUint16(2, data.byteLength, true);
  return concatBytes([new Uint8Array(head.buffer), data]);
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
