import { gzipSync, zipSync, type Zippable } from "fflate";
import { packTar, type TarEntry } from "modern-tar";

/** Test fixtures: archives built in memory (modern-tar, fflate) and hand-made hostile headers. */

export const text = (s: string) => new TextEncoder().encode(s);
export const decode = (b: Uint8Array | ArrayBuffer) => new TextDecoder().decode(b);

/** A tar of files given as `{path: content}` (plus optional extra raw entries). */
export function tarOf(files: Record<string, string | Uint8Array>, extra: TarEntry[] = []): Promise<Uint8Array> {
  const entries: TarEntry[] = Object.entries(files).map(([name, body]) => ({
    header: { name, size: typeof body === "string" ? text(body).byteLength : body.byteLength, type: "file", mode: 0o644, mtime: new Date(0) },
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
  put(124, body.byteLength.toString(8).padStart(11, "0") + "\0");
  put(136, "00000000000\0");
  put(148, "        ");
  put(156, typeflag);
  put(157, linkname);
  put(257, "ustar\0");
  put(263, "00");
  let sum = 0;
  for (const b of header) sum += b;
  put(148, sum.toString(8).padStart(6, "0") + "\0 ");
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
