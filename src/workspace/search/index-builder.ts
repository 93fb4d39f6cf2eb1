import { BINARY_SNIFF_BYTES } from "../text";
import { encodeDirectory, FILE_BINARY, SEARCH_INDEX_VERSION, type SearchIndexInfo, type ShardDirectory, searchKeys } from "./index-layout";
import { BYTE_CLASS, CLASS_BITS, PAIR_CLASS, TRIGRAM_KEY_MASK, TRIGRAM_KEYS } from "./trigrams";

/** A literal, so the shifts in the hot loop are constants (CLASS_BITS is an import). */
const CLASS_BITS_6 = 6;
if (CLASS_BITS !== CLASS_BITS_6) throw new Error("index-builder assumes 6-bit byte classes");

/** A shard is written once its files hold this many (file, trigram) pairs: bounds the builder's memory. */
export const SHARD_POSTINGS = 1 << 20;
/** Shard-local file numbers fit in 16 bits. */
const MAX_SHARD_FILES = 0xffff;

/**
 * Builds a snapshot's search index while its files stream into the pack (see index-layout.ts),
 * in memory bounded by one shard: a 1 MiB table of the last file each trigram was seen in (also
 * reused to count while a shard is written), the shard's pairs (4 bytes each, SHARD_POSTINGS of
 * them, more only for one file with more distinct trigrams), 5 bytes per pair of scratch for
 * writing a shard (kept from shard to shard), and the encoded shard while it uploads. Binary files (a NUL in the first 8000 bytes, as grep decides) are listed but not indexed.
 */
export class SearchIndexBuilder {
  private readonly keys: ReturnType<typeof searchKeys>;
  /** Per trigram key: the number of the last file it was seen in, +1 (0 = not seen since the last shard). */
  private readonly lastSeen = new Int32Array(TRIGRAM_KEYS);
  /** Trigram keys of the current shard's files, file after file. */
  private pairs: Uint32Array = new Uint32Array(1 << 16);
  private pairCount = 0;
  /** Where each file of the current shard starts in `pairs`. */
  private fileStarts: number[] = [];
  private shardFirstFile = 0;
  /**
   * Scratch of `writeShard` (each pair's file number, sorted by key; the encoded lists), kept for
   * the next shard: fresh multi-MiB arrays per shard cost garbage collections during the ingest.
   */
  private shardFiles = new Uint16Array(0);
  private shardLists = new Uint8Array(0);
  private readonly offsets: number[] = [];
  private readonly flags: number[] = [];
  private readonly shards: ShardDirectory[] = [];
  private upload: Promise<unknown> | null = null;
  private readonly written: string[] = [];
  // The file being added.
  private file = -1;
  private rolling = 0;
  private sniffed = 0;
  private binary = false;

  constructor(
    private readonly bucket: R2Bucket,
    workspaceId: string,
    /** Pairs per shard (tests pass small values). */
    private readonly shardPostings = SHARD_POSTINGS,
  ) {
    this.keys = searchKeys(workspaceId);
  }

  beginFile(packOffset: number): void {
    this.file = this.offsets.length;
    this.offsets.push(packOffset);
    this.flags.push(0);
    this.fileStarts.push(this.pairCount);
    this.rolling = 0;
    this.sniffed = 0;
    this.binary = false;
  }

  addBytes(chunk: Uint8Array): void {
    if (this.binary || chunk.byteLength === 0) return;
    if (this.sniffed < BINARY_SNIFF_BYTES) {
      const end = Math.min(chunk.byteLength, BINARY_SNIFF_BYTES - this.sniffed);
      this.sniffed += end;
      if (chunk.subarray(0, end).includes(0)) {
        this.binary = true;
        this.pairCount = this.fileStarts[this.fileStarts.length - 1]!;
        return;
      }
    }
    // Locals, not imported bindings, in the loop: a module transform (vitest's) can turn each use of
    // an import into a property read, which made this loop 10x slower in the benchmarks.
    const classes = BYTE_CLASS;
    const pairClasses = PAIR_CLASS;
    const mask = TRIGRAM_KEY_MASK;
    const seen = this.lastSeen;
    const mark = this.file - this.shardFirstFile + 1;
    const n = chunk.byteLength;
    // Room for a pair per byte up front: no capacity check in the loop.
    if (this.pairCount + n > this.pairs.length) this.grow(this.pairCount + n);
    const pairs = this.pairs;
    let count = this.pairCount;
    let key = this.rolling;
    let i = 0;
    if (chunk.byteOffset & 1) {
      key = ((key << CLASS_BITS_6) | classes[chunk[0]!]!) & mask;
      if (seen[key] !== mark) {
        seen[key] = mark;
        pairs[count++] = key;
      }
      i = 1;
    }
    // Two bytes per step: one table read gives both bytes' classes (the keys ending at each).
    const words = new Uint16Array(chunk.buffer, chunk.byteOffset + i, (n - i) >>> 1);
    for (let j = 0; j < words.length; j++) {
      const both = pairClasses[words[j]!]!;
      const first = ((key << CLASS_BITS_6) | (both >>> CLASS_BITS_6)) & mask;
      if (seen[first] !== mark) {
        seen[first] = mark;
        pairs[count++] = first;
      }
      key = ((key << (2 * CLASS_BITS_6)) | both) & mask;
      if (seen[key] !== mark) {
        seen[key] = mark;
        pairs[count++] = key;
      }
    }
    for (i += words.length * 2; i < n; i++) {
      key = ((key << CLASS_BITS_6) | classes[chunk[i]!]!) & mask;
      if (seen[key] !== mark) {
        seen[key] = mark;
        pairs[count++] = key;
      }
    }
    this.rolling = key;
    this.pairCount = count;
  }

  async endFile(): Promise<void> {
    if (this.binary) this.flags[this.file] = FILE_BINARY;
    if (this.pairCount >= this.shardPostings || this.fileStarts.length >= MAX_SHARD_FILES) await this.writeShard();
  }

  /** Writes the last shard and the directory; returns what `index.json` records. */
  async finish(): Promise<SearchIndexInfo> {
    if (this.fileStarts.length > 0) await this.writeShard();
    await this.upload;
    const directory = encodeDirectory({
      offsets: Float64Array.from(this.offsets),
      flags: Uint8Array.from(this.flags),
      shards: this.shards,
    });
    await this.put(this.keys.directory, directory);
    return { version: SEARCH_INDEX_VERSION, shards: this.shards.length, files: this.offsets.length, directoryBytes: directory.byteLength };
  }

  /** Deletes whatever was written (after a refused upload); never throws. */
  async abort(): Promise<void> {
    await this.upload?.catch(() => {});
    if (this.written.length > 0) await this.bucket.delete(this.written).catch(() => {});
  }

  /** Makes room for `needed` pairs (at least doubling). */
  private grow(needed: number): void {
    const bigger = new Uint32Array(Math.max(needed, this.pairs.length * 2));
    bigger.set(this.pairs.subarray(0, this.pairCount));
    this.pairs = bigger;
  }

  /** Turns the shard's pairs into posting lists (a counting sort by key), uploads them, and starts the next shard. */
  private async writeShard(): Promise<void> {
    const fileCount = this.fileStarts.length;
    const keySpace = TRIGRAM_KEYS;
    const pairs = this.pairs;
    const fileStarts = this.fileStarts;
    const pairCount = this.pairCount;
    const counts = this.lastSeen;
    counts.fill(0);
    for (let i = 0; i < pairCount; i++) counts[pairs[i]!]!++;
    let keyCount = 0;
    for (let key = 0; key < keySpace; key++) if (counts[key]! > 0) keyCount++;
    const keys = new Uint32Array(keyCount);
    // `counts` becomes each key's next write position in `files`.
    let k = 0;
    let position = 0;
    for (let key = 0; key < keySpace; key++) {
      const n = counts[key]!;
      if (n === 0) continue;
      keys[k++] = key;
      counts[key] = position;
      position += n;
    }
    if (this.shardFiles.length < pairCount) this.shardFiles = new Uint16Array(pairCount);
    const files = this.shardFiles;
    for (let file = 0; file < fileCount; file++) {
      const end = file + 1 < fileCount ? fileStarts[file + 1]! : pairCount;
      for (let i = fileStarts[file]!; i < end; i++) files[counts[pairs[i]!]!++] = file;
    }
    // Each key's list is files[start, counts[key]), start being the previous key's end; gaps are
    // LEB128 (`decodePostings` reads them), at most 3 bytes each below 2^16.
    if (this.shardLists.length < pairCount * 3) this.shardLists = new Uint8Array(pairCount * 3);
    const encoded = this.shardLists;
    const ends = new Uint32Array(keyCount);
    let at = 0;
    let start = 0;
    for (let i = 0; i < keyCount; i++) {
      const end = counts[keys[i]!]!;
      let previous = -1;
      for (let j = start; j < end; j++) {
        const file = files[j]!;
        let gap = file - previous;
        while (gap >= 0x80) {
          encoded[at++] = (gap & 0x7f) | 0x80;
          gap >>>= 7;
        }
        encoded[at++] = gap;
        previous = file;
      }
      ends[i] = at;
      start = end;
    }
    counts.fill(0);

    await this.upload;
    const key = this.keys.shard(this.shards.length);
    this.upload = this.put(key, encoded.slice(0, at));
    // Observed by the next shard, finish() or abort(); never an unhandled rejection meanwhile.
    this.upload.catch(() => {});
    this.shards.push({ firstFile: this.shardFirstFile, fileCount, keys, ends });
    this.shardFirstFile += fileCount;
    this.fileStarts = [];
    this.pairCount = 0;
  }

  private async put(key: string, bytes: Uint8Array): Promise<void> {
    this.written.push(key);
    await this.bucket.put(key, bytes);
  }
}
