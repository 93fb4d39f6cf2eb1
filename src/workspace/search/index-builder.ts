import { MAX_SEARCH_DIRECTORY_BYTES, SEARCH_MAX_FILE_BYTES } from "../../domain/limits";
import { BINARY_SNIFF_BYTES } from "../text";
import {
  DENSE_LIST_BYTE,
  encodeDirectory,
  FILE_BINARY,
  FILE_UNINDEXED,
  PIECES_PER_DOC,
  SEARCH_INDEX_VERSION,
  type SearchIndexInfo,
  type ShardDirectory,
  searchKeys,
} from "./index-layout";
import { SEARCH_PIECE_BYTES } from "./search-text";
import { BYTE_CLASS, CLASS_BITS, PAIR_CLASS, TRIGRAM_KEY_MASK, TRIGRAM_KEYS } from "./trigrams";

/** A literal, so the shifts in the hot loop are constants (CLASS_BITS is an import). */
const CLASS_BITS_6 = 6;
const NEWLINE = 0x0a;
/** "\n" bytes in a 16-bit word (the loop reads two bytes at once). */
const PAIR_NEWLINES: Uint8Array = (() => {
  const counts = new Uint8Array(1 << 16);
  for (let word = 0; word < 1 << 16; word++) counts[word] = Number((word & 0xff) === NEWLINE) + Number(word >>> 8 === NEWLINE);
  return counts;
})();
if (CLASS_BITS !== CLASS_BITS_6) throw new Error("index-builder assumes 6-bit byte classes");

/** A shard is written once its docs hold this many (doc, trigram) pairs: bounds the builder's memory. */
export const SHARD_POSTINGS = 1 << 20;
/** Pairs of a usual doc at most (one per byte of its pieces); a shard's pairs are made room for with one such doc over. */
const DOC_PAIRS = 2 * PIECES_PER_DOC * SEARCH_PIECE_BYTES;
/** Shards of fewer docs list every key in full. */
const MIN_DENSE_DOCS = 16;

/**
 * Builds a snapshot's search index while its files stream into the pack (see index-layout.ts),
 * in memory bounded by one shard: a 1 MiB table of the last doc each trigram was seen in (also
 * reused to count while a shard is written), another of each key's last doc for writing a shard,
 * the shard's pairs (4 bytes each, SHARD_POSTINGS of them, more only for one piece with more), at
 * most 3 bytes per pair of scratch for its lists (kept from shard to shard), and the encoded shard
 * while it uploads. A doc is a piece of a file, cut as
 * `searchTextOf` cuts it. The shards' key tables, kept for the directory, are bounded on their own
 * (`MAX_SEARCH_DIRECTORY_BYTES`; past it no index is built). Binary files (a NUL in the first 8000 bytes, as grep decides) are listed
 * but not indexed, and so are files larger than grep searches (`SEARCH_MAX_FILE_BYTES`): indexing
 * them was work no search used.
 */
export class SearchIndexBuilder {
  private readonly keys: ReturnType<typeof searchKeys>;
  /** Per trigram key: the shard-local number of the last doc it was seen in, +1 (0 = not seen since the last shard). */
  private readonly lastSeen = new Int32Array(TRIGRAM_KEYS);
  /**
   * Trigram keys of the current shard's docs, doc after doc: room for a shard and the doc that
   * passes its bound, made once (grown by doubling from 64 Ki, its last step held twice a shard:
   * 8 MiB, now 4.5 MiB; a larger doc still grows it).
   */
  private pairs: Uint32Array;
  private pairCount = 0;
  /** Where each doc of the current shard starts in `pairs`. */
  private docPairs: number[] = [];
  private shardFirstDoc = 0;
  /**
   * Scratch of `cutShard` (the encoded lists), kept for the next shard: fresh multi-MiB arrays per
   * shard cost garbage collections during the ingest.
   */
  private shardLists = new Uint8Array(0);
  /** `cutShard`'s per key last doc written + 1 (all 0 between shards). */
  private readonly lastDoc = new Int32Array(TRIGRAM_KEYS);
  private readonly offsets: number[] = [];
  private readonly flags: number[] = [];
  /** Per file, its first piece. */
  private readonly firstPiece: number[] = [];
  /** Per piece, its byte offset in its file. */
  private readonly pieceStarts: number[] = [];
  /** Per piece, the "\n" bytes in it. */
  private readonly pieceNewlines: number[] = [];
  /** The current file's first doc in the shard. */
  private fileFirstDoc = 0;
  private readonly shards: ShardDirectory[] = [];
  /** Bytes of the shards' key tables so far. */
  private directoryBytes = 0;
  /** The directory would pass `maxDirectoryBytes`: no index is built (`finish` returns null). */
  private abandoned = false;
  /** The last shard upload, chained after the ones before it. */
  private upload: Promise<unknown> | null = null;
  /** A shard was cut inside the current file (endFile waits for its upload). */
  private cutInFile = false;
  private readonly written: string[] = [];
  // The file being added.
  private file = -1;
  private rolling = 0;
  private sniffed = 0;
  private binary = false;
  /** The current file is too large to search: listed, not indexed. */
  private skipped = false;
  /** Bytes of the file seen so far. */
  private position = 0;
  /** Where the current piece starts in the file; -1 before the file's first byte or after a cut (the next byte starts a piece). */
  private pieceStart = -1;

  constructor(
    private readonly bucket: R2Bucket,
    workspaceId: string,
    /** Pairs per shard (tests pass small values). */
    private readonly shardPostings = SHARD_POSTINGS,
    /** Shards of fewer docs store no key as dense (tests pass small values). */
    private readonly minDenseDocs = MIN_DENSE_DOCS,
    /** Tests pass small values. */
    private readonly maxDirectoryBytes = MAX_SEARCH_DIRECTORY_BYTES,
  ) {
    this.keys = searchKeys(workspaceId);
    this.pairs = new Uint32Array(shardPostings + DOC_PAIRS);
  }

  /** Starts a file of `size` bytes at `packOffset` in the pack. */
  beginFile(packOffset: number, size: number): void {
    if (this.abandoned) return;
    this.file = this.offsets.length;
    this.offsets.push(packOffset);
    this.skipped = size > SEARCH_MAX_FILE_BYTES;
    this.flags.push(this.skipped ? FILE_UNINDEXED : 0);
    this.firstPiece.push(this.pieceStarts.length);
    this.fileFirstDoc = this.docPairs.length;
    this.rolling = 0;
    this.sniffed = 0;
    this.binary = false;
    this.position = 0;
    this.pieceStart = -1;
  }

  addBytes(chunk: Uint8Array): void {
    if (this.abandoned || this.binary || this.skipped || chunk.byteLength === 0) return;
    if (this.sniffed < BINARY_SNIFF_BYTES) {
      const end = Math.min(chunk.byteLength, BINARY_SNIFF_BYTES - this.sniffed);
      this.sniffed += end;
      if (chunk.subarray(0, end).includes(0)) {
        // Not indexed: forget the file's doc (sniffing ends before a first cut, so it has one at most).
        this.binary = true;
        const first = this.fileFirstDoc;
        if (first < this.docPairs.length) {
          // The next doc takes the dropped one's number: its keys must not look seen already.
          for (let i = this.docPairs[first]!; i < this.pairCount; i++) this.lastSeen[this.pairs[i]!] = 0;
          this.pairCount = this.docPairs[first]!;
          this.docPairs.length = first;
        }
        this.pieceStarts.length = this.firstPiece[this.file]!;
        this.pieceNewlines.length = this.firstPiece[this.file]!;
        return;
      }
    }
    const n = chunk.byteLength;
    // Room for a pair per byte up front: no capacity check in the loop.
    if (this.pairCount + n > this.pairs.length) this.grow(this.pairCount + n);
    for (let from = 0; from < n; ) {
      if (this.pieceStart < 0) {
        this.pieceStart = this.position + from;
        // Every PIECES_PER_DOC-th piece of a file starts a doc.
        if ((this.pieceStarts.length - this.firstPiece[this.file]!) % PIECES_PER_DOC === 0) this.docPairs.push(this.pairCount);
        this.pieceStarts.push(this.pieceStart);
        this.pieceNewlines.push(0);
      }
      // The piece ends after the first "\n" at or after its byte SEARCH_PIECE_BYTES - 1.
      let to = n;
      let cut = false;
      const cutFrom = this.pieceStart + SEARCH_PIECE_BYTES - 1 - this.position;
      if (cutFrom < n) {
        const newline = chunk.indexOf(NEWLINE, Math.max(from, cutFrom));
        if (newline >= 0) {
          to = newline + 1;
          cut = true;
        }
      }
      this.addKeys(chunk, from, to, this.docPairs.length);
      if (cut) {
        this.pieceStart = -1;
        // A large file's docs fill shards too (a shard ends where a doc does): the builder's memory
        // stays bounded by about one shard.
        const docEnds = (this.pieceStarts.length - this.firstPiece[this.file]!) % PIECES_PER_DOC === 0;
        if (docEnds && this.pairCount >= this.shardPostings) {
          this.cutShard();
          if (this.abandoned) return;
          this.cutInFile = true;
        }
      }
      from = to;
    }
    this.position += n;
  }

  /**
   * Records the trigram keys ending at bytes [from, to) of `chunk` for shard-local doc `mark - 1`
   * (the rolling key carries over from the bytes before, across pieces: a doc may list a key of a
   * trigram that starts in the piece before it, which only widens the candidates), and counts the
   * range's "\n" bytes for the current piece.
   */
  private addKeys(chunk: Uint8Array, from: number, to: number, mark: number): void {
    // Locals, not imported bindings, in the loop: a module transform (vitest's) can turn each use of
    // an import into a property read, which made this loop 10x slower in the benchmarks.
    const classes = BYTE_CLASS;
    const pairClasses = PAIR_CLASS;
    const pairNewlines = PAIR_NEWLINES;
    const mask = TRIGRAM_KEY_MASK;
    const seen = this.lastSeen;
    const pairs = this.pairs;
    let count = this.pairCount;
    let key = this.rolling;
    let newlines = 0;
    let i = from;
    if ((chunk.byteOffset + i) & 1 && i < to) {
      if (chunk[i] === NEWLINE) newlines++;
      key = ((key << CLASS_BITS_6) | classes[chunk[i]!]!) & mask;
      if (seen[key] !== mark) {
        seen[key] = mark;
        pairs[count++] = key;
      }
      i++;
    }
    // Two bytes per step: one table read gives both bytes' classes (the keys ending at each).
    const words = new Uint16Array(chunk.buffer, chunk.byteOffset + i, (to - i) >>> 1);
    for (let j = 0; j < words.length; j++) {
      const word = words[j]!;
      const both = pairClasses[word]!;
      newlines += pairNewlines[word]!;
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
    for (i += words.length * 2; i < to; i++) {
      if (chunk[i] === NEWLINE) newlines++;
      key = ((key << CLASS_BITS_6) | classes[chunk[i]!]!) & mask;
      if (seen[key] !== mark) {
        seen[key] = mark;
        pairs[count++] = key;
      }
    }
    this.rolling = key;
    this.pairCount = count;
    this.pieceNewlines[this.pieceNewlines.length - 1]! += newlines;
  }

  async endFile(): Promise<void> {
    if (this.abandoned) return;
    if (this.binary) this.flags[this.file] = FILE_BINARY;
    // One shard upload in flight while the next fills (a large file may have queued more: wait for them).
    if (this.pairCount >= this.shardPostings || this.cutInFile) await this.upload;
    this.cutInFile = false;
    if (this.pairCount >= this.shardPostings) this.cutShard();
  }

  /**
   * Writes the last shard and the directory; returns what `index.json` records, or null when the
   * directory would have passed its limit (the shards written are deleted).
   */
  async finish(): Promise<SearchIndexInfo | null> {
    if (!this.abandoned && this.docPairs.length > 0) this.cutShard();
    if (this.abandoned) {
      await this.abort();
      return null;
    }
    await this.upload;
    const directory = encodeDirectory({
      offsets: Float64Array.from(this.offsets),
      flags: Uint8Array.from(this.flags),
      pieces: {
        pieceBytes: SEARCH_PIECE_BYTES,
        piecesPerDoc: PIECES_PER_DOC,
        firstPiece: Uint32Array.from([...this.firstPiece, this.pieceStarts.length]),
        starts: Uint32Array.from(this.pieceStarts),
        linesBefore: this.linesBefore(),
      },
      shards: this.shards,
    });
    await this.put(this.keys.directory, directory);
    return { version: SEARCH_INDEX_VERSION, shards: this.shards.length, files: this.offsets.length, directoryBytes: directory.byteLength };
  }

  /** Per piece, the lines of its file before it. */
  private linesBefore(): Uint32Array {
    const before = new Uint32Array(this.pieceStarts.length);
    for (let file = 0; file < this.firstPiece.length; file++) {
      const end = file + 1 < this.firstPiece.length ? this.firstPiece[file + 1]! : before.length;
      let lines = 0;
      for (let piece = this.firstPiece[file]!; piece < end; piece++) {
        before[piece] = lines;
        lines += this.pieceNewlines[piece]!;
      }
    }
    return before;
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

  /**
   * Turns the shard's pairs into posting lists, queues their upload after the one before, and starts
   * the next shard. Called between docs only. One pass over the pairs, doc by doc, writes each doc's
   * gap straight into its key's list (a counting sort whose scatter is the encoder: a key's docs come
   * in order); each list is laid out with room for its gaps at their widest, LEB128 of a number below
   * the doc count, and the lists are moved together after unless that is one byte (no room left over).
   */
  private cutShard(): void {
    const docCount = this.docPairs.length;
    const keySpace = TRIGRAM_KEYS;
    const pairs = this.pairs;
    const docPairs = this.docPairs;
    const pairCount = this.pairCount;
    const counts = this.lastSeen;
    counts.fill(0);
    for (let i = 0; i < pairCount; i++) counts[pairs[i]!]!++;
    let keyCount = 0;
    for (let key = 0; key < keySpace; key++) if (counts[key]! > 0) keyCount++;
    const keys = new Uint32Array(keyCount);
    /** Per key (in `keys` order), where its list starts in `lists`; its end once written. */
    const ends = new Uint32Array(keyCount);
    // A key in at least half of the shard's docs is stored as "every doc" (`DENSE_LIST`): it would
    // narrow little, and skipping it saves about a third of the work and of the lists' bytes.
    const denseFrom = docCount >= this.minDenseDocs ? Math.ceil(docCount / 2) : Number.POSITIVE_INFINITY;
    // A gap is at most the doc count (the first is doc + 1): its LEB128 bytes at most.
    const width = docCount < 0x80 ? 1 : docCount < 0x4000 ? 2 : 3;
    if (this.shardLists.length < pairCount * width) this.shardLists = new Uint8Array(pairCount * width);
    const lists = this.shardLists;
    // `counts` becomes each key's next write position in `lists` (-1: dense, its byte written now).
    let k = 0;
    let position = 0;
    for (let key = 0; key < keySpace; key++) {
      const n = counts[key]!;
      if (n === 0) continue;
      keys[k] = key;
      ends[k++] = position;
      if (n >= denseFrom) {
        counts[key] = -1;
        lists[position++] = DENSE_LIST_BYTE;
      } else {
        counts[key] = position;
        position += n * width;
      }
    }
    // Per key, its last doc written + 1 (0: none yet), so a gap is (doc + 1) - last.
    const last = this.lastDoc;
    for (let doc = 0; doc < docCount; doc++) {
      const end = doc + 1 < docCount ? docPairs[doc + 1]! : pairCount;
      const next = doc + 1;
      for (let i = docPairs[doc]!; i < end; i++) {
        const key = pairs[i]!;
        let at = counts[key]!;
        if (at < 0) continue;
        let gap = next - last[key]!;
        last[key] = next;
        while (gap >= 0x80) {
          lists[at++] = (gap & 0x7f) | 0x80;
          gap >>>= 7;
        }
        lists[at++] = gap;
        counts[key] = at;
      }
    }
    // Each list's end; with room left over (gaps narrower than `width`), the lists are moved together.
    let length = 0;
    for (let i = 0; i < keyCount; i++) {
      const key = keys[i]!;
      const start = ends[i]!;
      const end = counts[key]! < 0 ? start + 1 : counts[key]!;
      if (length !== start) lists.copyWithin(length, start, end);
      length += end - start;
      ends[i] = length;
    }
    counts.fill(0);
    last.fill(0);
    this.directoryBytes += keys.byteLength + ends.byteLength;
    if (this.directoryBytes > this.maxDirectoryBytes) return this.abandon();

    const key = this.keys.shard(this.shards.length);
    const bytes = lists.slice(0, length);
    this.upload = (this.upload ?? Promise.resolve()).then(() => this.put(key, bytes));
    // Observed by the next shard, finish() or abort(); never an unhandled rejection meanwhile.
    this.upload.catch(() => {});
    this.shards.push({ firstDoc: this.shardFirstDoc, docCount, keys, ends });
    this.shardFirstDoc += docCount;
    this.docPairs = [];
    this.pairCount = 0;
  }

  /** Gives the index up: what it holds is dropped, and nothing more is indexed. */
  private abandon(): void {
    this.abandoned = true;
    this.shards.length = 0;
    this.docPairs = [];
    this.pairCount = 0;
    this.pairs = new Uint32Array(0);
    this.shardLists = new Uint8Array(0);
  }

  private async put(key: string, bytes: Uint8Array): Promise<void> {
    this.written.push(key);
    await this.bucket.put(key, bytes);
  }
}
