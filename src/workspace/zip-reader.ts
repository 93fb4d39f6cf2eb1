import type { ArchiveEntry, ArchiveItem } from "./archive-entry";
import { ArchiveError, archiveBomb, archiveInvalid, archiveTooManyFiles, asArchiveInvalid } from "./archive-errors";
import { ByteReader } from "./byte-reader";
import { crc32 } from "./crc32";
import { expansionLimits, guardExpansion } from "./expansion-guard";
import type { IngestLimits } from "./limits";
import { mapStreamErrors, pipeThroughQuietly } from "./streams";

/** The largest central directory we read into memory, in bytes. */
export const MAX_ZIP_DIRECTORY_BYTES = 16 * 1024 * 1024;
/** Longest symlink target we accept in a zip, in bytes. */
const MAX_LINK_TARGET_BYTES = 4096;

const EOCD_SIGNATURE = 0x06054b50;
const EOCD_BYTES = 22;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const ZIP64_EOCD_SIGNATURE = 0x06064b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const LOCAL_HEADER_BYTES = 30;
const CENTRAL_HEADER_BYTES = 46;
const ZIP64_EOCD_BYTES = 56;
const ZIP64_EXTRA = 0x0001;
const UNICODE_PATH_EXTRA = 0x7075;
const UNIX_HOSTS = new Set([3, 19]); // Unix, macOS (OS X)
/** Hosts whose path separator is `\` (MS-DOS/FAT, OS/2 HPFS, Windows NTFS, VFAT): their tools write it into names. */
const BACKSLASH_HOSTS = new Set([0, 6, 10, 14]);

/** Names and link targets exactly as their bytes say: a leading U+FEFF is kept, bytes that are not UTF-8 throw. */
const exactUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
/** The same bytes for messages and skip lists, where a name that is not UTF-8 shows U+FFFD. */
const shownUtf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

interface CentralEntry {
  entry: ArchiveEntry;
  method: number;
  compressedSize: number;
  localOffset: number;
  /** CRC-32 of the uncompressed data, from the central directory (the local header may hold 0 when a data descriptor follows). */
  crc32: number;
}

/**
 * Reads a zip that has been spooled to R2: the central directory (names, sizes, Unix modes and
 * file types) from the tail, then every entry's data in one sequential read of the rest. Stored
 * and deflated entries are supported (deflate via the native `DecompressionStream`); declared
 * ratios are checked before inflating and actual output while inflating, and the content of every
 * entry that is read must match its CRC-32.
 */
export async function* readZipEntries(bucket: R2Bucket, key: string, size: number, limits: IngestLimits): AsyncGenerator<ArchiveItem> {
  const directory = await readCentralDirectory(bucket, key, size, limits);
  const ordered = [...directory.entries].sort((a, b) => a.localOffset - b.localOffset);
  if (ordered.length === 0) return;
  const start = ordered[0]!.localOffset;
  const object = await bucket.get(key, { range: { offset: start, length: directory.offset - start } });
  if (!object) throw new Error(`spooled upload ${key} vanished`);
  const reader = new ByteReader(mapStreamErrors(object.body, asZipError));
  try {
    for (const central of ordered) {
      const at = central.localOffset - start;
      if (at < reader.position) throw archiveInvalid(`zip entries overlap at '${central.entry.name}'`);
      await reader.skip(at - reader.position);
      const local = new DataView((await reader.read(LOCAL_HEADER_BYTES)).buffer);
      if (local.getUint32(0, true) !== LOCAL_SIGNATURE) throw archiveInvalid(`zip entry '${central.entry.name}' has no local header`);
      await reader.skip(local.getUint16(26, true) + local.getUint16(28, true));
      const dataEnd = reader.position + central.compressedSize;
      const { entry } = central;
      if (entry.type === "symlink") {
        const target = decodeExactly(await readAll(contentOf(reader, central, limits), MAX_LINK_TARGET_BYTES));
        // A target that is not UTF-8 names no file of the snapshot (such names are skipped), and must not
        // become one that is (U+FFFD in a real name).
        if (target === null) Object.assign(entry, { type: "unreadable", unreadableReason: "symlink_unresolved" });
        else entry.linkTarget = target;
        yield {
          entry,
          open: () => {
            throw new Error("symlinks have no content");
          },
        };
      } else if (entry.type === "file") {
        yield { entry, open: () => contentOf(reader, central, limits) };
      } else {
        yield {
          entry,
          open: () => {
            throw new Error(`${entry.type} entries have no content`);
          },
        };
      }
      if (reader.position < dataEnd) await reader.skip(dataEnd - reader.position);
    }
  } catch (error) {
    throw asZipError(error);
  } finally {
    await reader.cancel();
  }
}

function contentOf(reader: ByteReader, central: CentralEntry, limits: IngestLimits): ReadableStream<Uint8Array> {
  const raw = reader.take(central.compressedSize);
  const label = `zip entry '${central.entry.name}'`;
  if (central.method === 0) return checkCrc32(raw, central.crc32, label);
  const inflated = guardExpansion(raw, new DecompressionStream("deflate-raw"), expansionLimits(limits, label, central.entry.size));
  const mapped = mapStreamErrors(inflated, (error) =>
    error instanceof ArchiveError && error.code === "archive_too_large"
      ? archiveInvalid(`${label} inflates past its declared size`)
      : asArchiveInvalid(error, `${label} is corrupt`),
  );
  return checkCrc32(mapped, central.crc32, label);
}

/**
 * Passes `content` on unchanged and errors it with `archive_invalid` at its end if its CRC-32 is not
 * `expected`: a corrupt entry must not become a snapshot file (the refusal removes the pack).
 */
function checkCrc32(content: ReadableStream<Uint8Array>, expected: number, label: string): ReadableStream<Uint8Array> {
  let crc = 0;
  return pipeThroughQuietly(
    content,
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        crc = crc32(chunk, crc);
        controller.enqueue(chunk);
      },
      flush() {
        if (crc !== expected)
          throw archiveInvalid(`${label} fails its CRC-32 check (content ${hex32(crc)}, archive says ${hex32(expected)})`);
      },
    }),
  );
}

const hex32 = (n: number) => `0x${n.toString(16).padStart(8, "0")}`;

async function readAll(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  if (bytes.byteLength > maxBytes) throw archiveInvalid(`zip symlink target is longer than ${maxBytes} bytes`);
  return bytes;
}

const asZipError = (error: unknown) => asArchiveInvalid(error, "not a valid zip archive");

async function readCentralDirectory(bucket: R2Bucket, key: string, size: number, limits: IngestLimits) {
  const tailLength = Math.min(size, EOCD_BYTES + 0xffff + 20);
  const tail = await rangeBytes(bucket, key, size - tailLength, tailLength);
  const view = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  let eocd = -1;
  for (let i = tail.byteLength - EOCD_BYTES; i >= 0; i--) {
    if (view.getUint32(i, true) === EOCD_SIGNATURE) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw archiveInvalid("not a valid zip archive: no end-of-central-directory record");
  let count = view.getUint16(eocd + 10, true);
  let length = view.getUint32(eocd + 12, true);
  let offset = view.getUint32(eocd + 16, true);
  if (count === 0xffff || length === 0xffffffff || offset === 0xffffffff) {
    const locator = eocd - 20;
    if (locator < 0 || view.getUint32(locator, true) !== ZIP64_LOCATOR_SIGNATURE) throw archiveInvalid("zip64 locator missing");
    const zip64At = safeNumber(view.getBigUint64(locator + 8, true));
    if (!(zip64At + ZIP64_EOCD_BYTES <= size)) throw archiveInvalid("zip64 end-of-central-directory record lies outside the archive");
    const zip64 = new DataView((await rangeBytes(bucket, key, zip64At, ZIP64_EOCD_BYTES)).buffer);
    if (zip64.getUint32(0, true) !== ZIP64_EOCD_SIGNATURE) throw archiveInvalid("zip64 end-of-central-directory record missing");
    count = safeNumber(zip64.getBigUint64(32, true));
    length = safeNumber(zip64.getBigUint64(40, true));
    offset = safeNumber(zip64.getBigUint64(48, true));
  }
  if (!Number.isFinite(count)) throw archiveInvalid("zip64 end-of-central-directory record is corrupt");
  if (count > limits.maxArchiveFiles) throw archiveTooManyFiles(limits.maxArchiveFiles);
  // Negated so that a zip64 value past 2^53 (NaN) fails too: no range read may start or end outside the archive.
  if (!(offset + length <= size)) throw archiveInvalid("zip central directory lies outside the archive");
  if (length > MAX_ZIP_DIRECTORY_BYTES) throw archiveInvalid(`zip central directory is larger than ${MAX_ZIP_DIRECTORY_BYTES} bytes`);
  if (count === 0) return { offset, entries: [] };
  if (length < count * CENTRAL_HEADER_BYTES) throw archiveInvalid("not a valid zip archive: corrupt central directory");
  const bytes = await rangeBytes(bucket, key, offset, length);
  const entries = parseCentralDirectory(bytes, count, limits);
  for (const { entry, localOffset, compressedSize } of entries) {
    // Every entry's local header and data lie before the central directory (the read of the data ends there).
    if (localOffset + LOCAL_HEADER_BYTES + compressedSize > offset)
      throw archiveInvalid(
        `zip entry '${entry.name}' lies outside the archive's data (local header at ${localOffset}, ${compressedSize} bytes; central directory at ${offset})`,
      );
  }
  return { offset, entries };
}

function parseCentralDirectory(bytes: Uint8Array, count: number, limits: IngestLimits): CentralEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const entries: CentralEntry[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + CENTRAL_HEADER_BYTES > bytes.byteLength || view.getUint32(at, true) !== CENTRAL_SIGNATURE) {
      throw archiveInvalid("not a valid zip archive: corrupt central directory");
    }
    const madeBy = view.getUint16(at + 4, true) >> 8;
    const flags = view.getUint16(at + 8, true);
    const method = view.getUint16(at + 10, true);
    const crc = view.getUint32(at + 16, true);
    let compressedSize = view.getUint32(at + 20, true);
    let size = view.getUint32(at + 24, true);
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const attributes = view.getUint32(at + 38, true);
    let localOffset = view.getUint32(at + 42, true);
    const nameAt = at + CENTRAL_HEADER_BYTES;
    const rawName = bytes.subarray(nameAt, nameAt + nameLength);
    const extras = extraFields(bytes.subarray(nameAt + nameLength, nameAt + nameLength + extraLength));
    const nameBytes = unicodePath(extras, rawName) ?? rawName;
    const exactName = decodeExactly(nameBytes);
    const name = exactName ?? shownUtf8.decode(nameBytes);
    // Zip64 extended information: the 64-bit values, in this order, for each field saturated at 0xffffffff.
    const zip64 = extras.find((field) => field.id === ZIP64_EXTRA)?.data;
    if (zip64) {
      const values = new DataView(zip64.buffer, zip64.byteOffset, zip64.byteLength);
      let field = 0;
      const next = () => {
        const value = field + 8 <= values.byteLength ? safeNumber(values.getBigUint64(field, true)) : NaN;
        field += 8;
        return value;
      };
      if (size === 0xffffffff) size = next();
      if (compressedSize === 0xffffffff) compressedSize = next();
      if (localOffset === 0xffffffff) localOffset = next();
    }
    if (![size, compressedSize, localOffset].every(Number.isFinite)) throw archiveInvalid(`zip entry '${name}' has a corrupt zip64 field`);
    const unixMode = UNIX_HOSTS.has(madeBy) ? attributes >>> 16 : 0;
    const entry = classify(name, unixMode, attributes, size);
    if (entry.type === "symlink" && size > MAX_LINK_TARGET_BYTES)
      throw archiveInvalid(`zip symlink '${name}' has a target longer than ${MAX_LINK_TARGET_BYTES} bytes`);
    // A name that is not UTF-8 (CP437 without the UTF-8 flag) has no exact string: two such names would
    // become one. Outside DOS and Windows a backslash is a character of the name, not a separator: stored
    // under another path it would collide with a real one (as in a tar).
    if ((exactName === null && entry.type !== "directory") || (name.includes("\\") && !BACKSLASH_HOSTS.has(madeBy)))
      Object.assign(entry, { type: "unreadable", unreadableReason: "path_invalid", size: 0 });
    else if (entry.type === "file" || entry.type === "symlink") {
      if (flags & 1) Object.assign(entry, { type: "unreadable", unreadableReason: "encrypted", size: 0 });
      else if (method !== 0 && method !== 8)
        Object.assign(entry, { type: "unreadable", unreadableReason: "unsupported_compression", size: 0 });
      else if (method === 0 && size !== compressedSize) throw archiveInvalid(`stored zip entry '${name}' has mismatched sizes`);
      else if (size >= limits.bombCheckMinBytes && size > compressedSize * limits.maxCompressionRatio) {
        throw archiveBomb(
          `zip entry '${name}' declares ${size} bytes from ${compressedSize} (over ${limits.maxCompressionRatio}x); refusing a likely decompression bomb`,
        );
      }
    }
    entries.push({ entry, method, compressedSize, localOffset, crc32: crc });
    at += CENTRAL_HEADER_BYTES + nameLength + extraLength + commentLength;
  }
  return entries;
}

interface ExtraField {
  id: number;
  data: Uint8Array;
}

/** The extra fields of a header (id, then a 16-bit length), each cut to the bytes that are there. */
function extraFields(bytes: Uint8Array): ExtraField[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fields: ExtraField[] = [];
  for (let at = 0; at + 4 <= bytes.byteLength; at += 4 + view.getUint16(at + 2, true)) {
    fields.push({ id: view.getUint16(at, true), data: bytes.subarray(at + 4, at + 4 + view.getUint16(at + 2, true)) });
  }
  return fields;
}

/**
 * The UTF-8 name of an Info-ZIP Unicode Path field (0x7075: version 1, the CRC-32 of the name field it
 * stands for, the name), which Windows tools add to a name stored in the OEM code page; null when there is
 * none or it was written for another name (the name field was changed since).
 */
function unicodePath(extras: ExtraField[], rawName: Uint8Array): Uint8Array | null {
  const field = extras.find((f) => f.id === UNICODE_PATH_EXTRA)?.data;
  if (!field || field.byteLength < 5 || field[0] !== 1) return null;
  const crc = new DataView(field.buffer, field.byteOffset + 1, 4).getUint32(0, true);
  return crc === crc32(rawName) ? field.subarray(5) : null;
}

function decodeExactly(bytes: Uint8Array): string | null {
  try {
    return exactUtf8.decode(bytes);
  } catch {
    return null;
  }
}

function classify(name: string, unixMode: number, attributes: number, size: number): ArchiveEntry {
  const mode = unixMode & 0o7777;
  switch (unixMode & 0o170000) {
    case 0o120000:
      return { name, type: "symlink", size: 0, mode };
    case 0o040000:
      return { name, type: "directory", size: 0, mode };
    case 0o020000:
    case 0o060000:
      return { name, type: "device", size: 0, mode };
    case 0o010000:
    case 0o140000:
      return { name, type: "special", size: 0, mode };
  }
  if (name.endsWith("/") || (attributes & 0x10) !== 0) return { name, type: "directory", size: 0, mode };
  return { name, type: "file", size, mode };
}

async function rangeBytes(bucket: R2Bucket, key: string, offset: number, length: number): Promise<Uint8Array> {
  const object = await bucket.get(key, { range: { offset, length } });
  if (!object) throw new Error(`spooled upload ${key} vanished`);
  return new Uint8Array(await object.arrayBuffer());
}

function safeNumber(value: bigint): number {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : NaN;
}
