import type { ArchiveEntry } from "./archive-entry";
import { archiveBomb, archiveInvalid, archivePathsTooLong, archiveTooManyFiles, asArchiveInvalid } from "./archive-errors";
import { ByteReader } from "./byte-reader";
import { crc32 } from "./crc32";
import type { IngestLimits } from "./limits";
import { mapStreamErrors } from "./streams";

/** The largest central directory we accept, in bytes (it is parsed as it streams in, never held whole). */
export const MAX_ZIP_DIRECTORY_BYTES = 16 * 1024 * 1024;
/** Longest symlink target we accept in a zip, in bytes. */
export const MAX_LINK_TARGET_BYTES = 4096;

const EOCD_SIGNATURE = 0x06054b50;
const EOCD_BYTES = 22;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const ZIP64_EOCD_SIGNATURE = 0x06064b50;
const CENTRAL_SIGNATURE = 0x02014b50;
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

/** What reading one entry's data needs, from the central directory. */
export interface ZipEntryData {
  method: number;
  compressedSize: number;
  /** CRC-32 of the uncompressed data (the local header may hold 0 when a data descriptor follows). */
  crc32: number;
}

/** A central-directory record, parsed. */
interface ZipRecord {
  entry: ArchiveEntry;
  data: ZipEntryData;
  localOffset: number;
}

/**
 * A zip's central directory, checked, with where each entry's data lies in typed arrays; its entries
 * (names) are read again, one at a time, as their data is (`entries`). Held for a whole ingest: as
 * objects with the directory's bytes, 50,000 entries of 160-character names held 102 MB live (hunt 48).
 */
export class ZipDirectory {
  private readonly localOffsets: Float64Array;
  private readonly compressedSizes: Float64Array;
  private readonly crcs: Uint32Array;
  private readonly methods: Uint16Array;
  private added = 0;

  constructor(
    private readonly source: { bucket: R2Bucket; key: string; limits: IngestLimits },
    /** Where the central directory starts: every entry's data lies before it. */
    readonly offset: number,
    private readonly length: number,
    readonly count: number,
  ) {
    this.localOffsets = new Float64Array(count);
    this.compressedSizes = new Float64Array(count);
    this.crcs = new Uint32Array(count);
    this.methods = new Uint16Array(count);
  }

  /** Entry numbers in the order of their data in the archive, so one sequential read takes them all. */
  dataOrder(): Uint32Array {
    const order = Uint32Array.from({ length: this.count }, (_, i) => i);
    return order.sort((a, b) => this.localOffsets[a]! - this.localOffsets[b]! || a - b);
  }

  localOffset(i: number): number {
    return this.localOffsets[i]!;
  }

  data(i: number): ZipEntryData {
    return { method: this.methods[i]!, compressedSize: this.compressedSizes[i]!, crc32: this.crcs[i]! };
  }

  add({ data, localOffset }: ZipRecord): void {
    const i = this.added++;
    this.methods[i] = data.method;
    this.compressedSizes[i] = data.compressedSize;
    this.crcs[i] = data.crc32;
    this.localOffsets[i] = localOffset;
  }

  /**
   * The entries in `order`, each with its number. The records are read again as the entries are
   * taken, so no more than one name is held at a time; only a directory that lists its entries in
   * another order than their data's is held whole (its entries, not its bytes).
   */
  async *entries(order: Uint32Array): AsyncGenerator<{ i: number; entry: ArchiveEntry }> {
    const inOrder = order.every((i, at) => i === at);
    const records = await this.records();
    try {
      if (inOrder) {
        for (let i = 0; i < this.count; i++) yield { i, entry: (await this.reread(records, i)).entry };
        return;
      }
      const held: (ArchiveEntry | undefined)[] = [];
      for (let i = 0; i < this.count; i++) held.push((await this.reread(records, i)).entry);
      for (const i of order) {
        const entry = held[i]!;
        held[i] = undefined;
        yield { i, entry };
      }
    } finally {
      await records.cancel();
    }
  }

  /** Reads every record, checking it, and keeps where its data lies. */
  async check(): Promise<void> {
    const { limits } = this.source;
    const records = await this.records();
    // Checked here as well as by the snapshot builder: a zip's names are all read before any data.
    let pathChars = 0;
    let outside: string | null = null;
    try {
      for (let i = 0; i < this.count; i++) {
        const record = await readRecord(records, limits);
        pathChars += record.entry.name.length;
        if (pathChars > limits.maxPathChars) throw archivePathsTooLong(limits.maxPathChars, i + 1);
        const { localOffset, data } = record;
        // Every entry's local header and data lie before the central directory (the read of the data ends there).
        if (outside === null && localOffset + LOCAL_HEADER_BYTES + data.compressedSize > this.offset)
          outside = `zip entry '${record.entry.name}' lies outside the archive's data (local header at ${localOffset}, ${data.compressedSize} bytes; central directory at ${this.offset})`;
        this.add(record);
      }
    } finally {
      await records.cancel();
    }
    if (outside !== null) throw archiveInvalid(outside);
  }

  private async reread(records: RecordReader, i: number): Promise<ZipRecord> {
    const record = await readRecord(records, this.source.limits);
    // The spooled upload does not change: a record read again is the one that was checked.
    if (record.localOffset !== this.localOffsets[i]) throw new Error(`zip record ${i} changed between reads`);
    return record;
  }

  private async records(): Promise<RecordReader> {
    const { bucket, key } = this.source;
    const object = await bucket.get(key, { range: { offset: this.offset, length: this.length } });
    if (!object) throw new Error(`spooled upload ${key} vanished`);
    return new RecordReader(new ByteReader(mapStreamErrors(object.body, asZipError)), this.length);
  }
}

/**
 * Reads a spooled zip's central directory: the end record (zip64 too) from the tail, then the
 * records as they stream in (never the directory whole), checking each (sizes, zip64 fields,
 * declared compression ratio, names, where its data lies).
 */
export async function readZipDirectory(bucket: R2Bucket, key: string, size: number, limits: IngestLimits): Promise<ZipDirectory> {
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
  const directory = new ZipDirectory({ bucket, key, limits }, offset, length, count);
  if (count === 0) return directory;
  if (length < count * CENTRAL_HEADER_BYTES) throw archiveInvalid("not a valid zip archive: corrupt central directory");
  await directory.check();
  return directory;
}

const asZipError = (error: unknown) => asArchiveInvalid(error, "not a valid zip archive");

/**
 * The records of a directory of `left` bytes, streamed. A record's name and extra fields are cut
 * where the directory ends, as a slice of the whole directory would cut them.
 */
class RecordReader {
  constructor(
    private readonly bytes: ByteReader,
    private left: number,
  ) {}

  /** The fixed part of the next record, then its name and extra fields (its comment is skipped). */
  async next(): Promise<{ view: DataView; rawName: Uint8Array; extraBytes: Uint8Array }> {
    if (this.left < CENTRAL_HEADER_BYTES) throw archiveInvalid("not a valid zip archive: corrupt central directory");
    const view = new DataView((await this.read(CENTRAL_HEADER_BYTES)).buffer);
    if (view.getUint32(0, true) !== CENTRAL_SIGNATURE) throw archiveInvalid("not a valid zip archive: corrupt central directory");
    const nameLength = view.getUint16(28, true);
    const variable = await this.read(nameLength + view.getUint16(30, true));
    const comment = Math.min(view.getUint16(32, true), this.left);
    await this.bytes.skip(comment);
    this.left -= comment;
    return { view, rawName: variable.subarray(0, nameLength), extraBytes: variable.subarray(nameLength) };
  }

  cancel(): Promise<void> {
    return this.bytes.cancel();
  }

  private async read(n: number): Promise<Uint8Array> {
    const bytes = await this.bytes.read(Math.min(n, this.left));
    this.left -= bytes.byteLength;
    return bytes;
  }
}

async function readRecord(records: RecordReader, limits: IngestLimits): Promise<ZipRecord> {
  const { view, rawName, extraBytes } = await records.next();
  return parseRecord(view, rawName, extraBytes, limits);
}

/** One central-directory record: its fixed header (`view`), name and extra fields. */
function parseRecord(view: DataView, rawName: Uint8Array, extraBytes: Uint8Array, limits: IngestLimits): ZipRecord {
  const madeBy = view.getUint16(4, true) >> 8;
  const flags = view.getUint16(8, true);
  const method = view.getUint16(10, true);
  const crc = view.getUint32(16, true);
  let compressedSize = view.getUint32(20, true);
  let size = view.getUint32(24, true);
  const attributes = view.getUint32(38, true);
  let localOffset = view.getUint32(42, true);
  const extras = extraFields(extraBytes);
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
  return { entry, data: { method, compressedSize, crc32: crc }, localOffset };
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

export function decodeExactly(bytes: Uint8Array): string | null {
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
