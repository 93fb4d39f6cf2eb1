import { ByteLru } from "../byte-lru";
import {
  decodeDirectory,
  decodePostings,
  FILE_BINARY,
  FILE_UNINDEXED,
  isDenseList,
  type PieceTable,
  type SearchDirectory,
  type SearchIndexInfo,
  searchKeys,
} from "./index-layout";
import { isAll, queryKeys, type SearchQuery } from "./query";
import { type PieceSet, SEARCH_PIECE_BYTES } from "./search-text";

/**
 * Posting lists kept for the isolate, in bytes, shared by its snapshots' indexes (as the file cache
 * is): a warm search reads none from R2.
 */
export const POSTINGS_CACHE_BYTES = 4 * 1024 * 1024;
const postingLists = new ByteLru(POSTINGS_CACHE_BYTES, POSTINGS_CACHE_BYTES);
/**
 * An index whose shards add up to at most this is read whole by a warm-up (`warmPostings`): the
 * first search after it then reads no posting list from R2 (about 8 % of the source: a 50 MB tree).
 */
export const WARM_POSTINGS_MAX_BYTES = 4 * 1024 * 1024;
/**
 * Shards read whole by warm-ups, shared by the isolate's objects as the text cache is (a snapshot's
 * index never changes): two indexes at the warm-up limit.
 */
export const WHOLE_SHARDS_CACHE_BYTES = 2 * WARM_POSTINGS_MAX_BYTES;
const wholeShards = new ByteLru(WHOLE_SHARDS_CACHE_BYTES, WARM_POSTINGS_MAX_BYTES);

/** Lends `bytes` of the whole-shard cache's budget to other work in the isolate (`shared-caches.ts`). */
export function reserveWholeShards(bytes: number): void {
  wholeShards.reserve(bytes);
}

/** Lends `bytes` of the posting-list cache's budget to other work in the isolate (`shared-caches.ts`). */
export function reservePostingLists(bytes: number): void {
  postingLists.reserve(bytes);
}

/** Empties the isolate's cache of whole shards (what a fresh isolate starts with: benchmarks and tests). */
export function clearWholeShards(): void {
  wholeShards.clear();
}
/** Wanted lists closer than this in a shard object are read in one range read, gap included (lists are small: one read per shard is usual). */
const MAX_POSTINGS_GAP_BYTES = 256 * 1024;

/** A file's pieces as the index cut them. */
export interface FilePieces {
  /** Byte offset of each piece in the file. */
  starts: Uint32Array;
  /** Lines of the file before each piece. */
  linesBefore: Uint32Array;
}

/** Which pieces of the file at a pack offset can hold a match; null: none can. */
export type PieceFilter = (packOffset: number) => PieceSet | null;

/**
 * A search index's directory with the lookups made from it: plain data that never changes, so the
 * objects of an isolate that open one snapshot share it (`SnapshotCatalog`).
 */
export class SearchTables {
  /** Per pack offset, the file there that has bytes (empty files share the next file's offset). */
  readonly fileAt = new Map<number, number>();
  /** Pack offsets of the files the index knows to be text (it indexed them). */
  readonly texts: Set<number>;
  /** Pack offsets of binary files. */
  readonly binaries = new Set<number>();
  /** Pack offsets of files the index did not index (too large to search): asked for, they are read whole. */
  readonly unindexed = new Set<number>();
  /** The file of every doc. */
  readonly docFile: Uint32Array;
  /** Per file, its first doc (and the total at the end). */
  readonly firstDoc: Uint32Array;
  /** The piece table when its pieces are this code's (`SEARCH_PIECE_BYTES`): else files are searched whole. */
  readonly pieces: PieceTable | null;

  constructor(readonly directory: SearchDirectory) {
    const { offsets, flags } = directory;
    this.texts = new Set(offsets);
    offsets.forEach((offset, file) => {
      this.fileAt.set(offset, file);
      // An empty file shares its offset with the next file: an offset is text only if no file there
      // is binary or unindexed.
      if (flags[file]! & FILE_BINARY) this.binaries.add(offset);
      if (flags[file]! & FILE_UNINDEXED) this.unindexed.add(offset);
      if (flags[file]! & (FILE_BINARY | FILE_UNINDEXED)) this.texts.delete(offset);
    });
    const table = directory.pieces;
    this.pieces = table && table.pieceBytes === SEARCH_PIECE_BYTES ? table : null;
    // Version 1: a doc per file. Version 2: a file's pieces in runs of `piecesPerDoc`.
    this.firstDoc = new Uint32Array(offsets.length + 1);
    for (let file = 0; file < offsets.length; file++) {
      const docs = table ? Math.ceil((table.firstPiece[file + 1]! - table.firstPiece[file]!) / table.piecesPerDoc) : 1;
      this.firstDoc[file + 1] = this.firstDoc[file]! + docs;
    }
    const docCount = this.firstDoc[offsets.length]!;
    const shardDocs = directory.shards.reduce((sum, shard) => sum + shard.docCount, 0);
    if (shardDocs !== docCount) throw new Error(`search index lists ${shardDocs} docs for ${docCount}`);
    this.docFile = new Uint32Array(docCount);
    for (let file = 0; file < offsets.length; file++) this.docFile.fill(file, this.firstDoc[file]!, this.firstDoc[file + 1]!);
  }
}

/**
 * A snapshot's search index, opened from R2: the directory in memory (read once), posting lists
 * read by range and kept in a small cache. `filter` answers which files, and which pieces of them,
 * can hold a match. Each object reads through its own bucket binding (bindings are not shared
 * between objects); the tables may be another's.
 */
export class SearchIndex {
  /** The filter for `all`: the text files, every piece. */
  private textFiles: PieceFilter | null = null;
  private readonly directory: SearchDirectory;

  constructor(
    private readonly bucket: R2Bucket,
    private readonly workspaceId: string,
    readonly tables: SearchTables,
    /** Names this snapshot's shards in the isolate's cache (the id, and its creation time: ids are never reused, but tests do). */
    private readonly stamp: string,
  ) {
    this.directory = tables.directory;
  }

  static async open(bucket: R2Bucket, workspaceId: string, info: SearchIndexInfo, createdAt = ""): Promise<SearchIndex> {
    const object = await bucket.get(searchKeys(workspaceId).directory);
    if (!object) throw new Error(`search index of ${workspaceId} has no directory`);
    const directory = decodeDirectory(new Uint8Array(await object.arrayBuffer()));
    if (directory.shards.length !== info.shards || directory.offsets.length !== info.files) {
      throw new Error(`search index of ${workspaceId} does not match index.json`);
    }
    return new SearchIndex(bucket, workspaceId, new SearchTables(directory), `${workspaceId}\u0000${createdAt}`);
  }

  /** True when the index has seen the file at `packOffset` and it is text (no need to look for a NUL again). */
  isText(packOffset: number): boolean {
    return this.tables.texts.has(packOffset);
  }

  /** True when the index has seen the file at `packOffset` and found it binary. */
  isBinary(packOffset: number): boolean {
    return this.tables.binaries.has(packOffset);
  }

  /**
   * Where the pieces of the (non-empty) file at `packOffset` start in it, as `searchTextOf` cuts
   * it, and the lines before each; null when the index does not know them (a version 1 index, a
   * binary or unknown file).
   */
  piecesOf(packOffset: number): FilePieces | null {
    const file = this.tables.fileAt.get(packOffset);
    if (file === undefined || !this.tables.pieces) return null;
    const { firstPiece, starts, linesBefore } = this.tables.pieces;
    const first = firstPiece[file]!;
    const end = firstPiece[file + 1]!;
    return end > first ? { starts: starts.subarray(first, end), linesBefore: linesBefore.subarray(first, end) } : null;
  }

  /**
   * Which pieces of the file at a pack offset can hold a match of `query`: null only for files
   * that cannot (binary files never do). An offset the index does not know, or a file it did not
   * index, gets "all": it must be searched.
   */
  async filter(query: SearchQuery, signal?: AbortSignal): Promise<PieceFilter> {
    if (isAll(query)) {
      // Asked for every file read back (grep's second pass, one file at a time): computed once.
      this.textFiles ??= await this.evaluateFilter(query, signal);
      return this.textFiles;
    }
    return this.evaluateFilter(query, signal);
  }

  private async evaluateFilter(query: SearchQuery, signal?: AbortSignal): Promise<PieceFilter> {
    const { offsets, flags, shards } = this.directory;
    const docFile = this.tables.docFile;
    const pieces = this.tables.pieces;
    const keys = queryKeys(query);
    const lists = await Promise.all(shards.map((_, n) => this.readLists(n, keys, signal)));
    // Per candidate file, its candidate docs (ascending: shards and lists are in doc order).
    const candidates = new Map<number, number[]>();
    const add = (doc: number) => {
      const file = docFile[doc]!;
      if (flags[file]! & FILE_BINARY) return;
      const docs = candidates.get(file);
      if (docs) docs.push(doc);
      else candidates.set(file, [doc]);
    };
    shards.forEach((shard, n) => {
      const docs = evaluate(query, lists[n]!, shard.docCount);
      if (docs === "all") for (let local = 0; local < shard.docCount; local++) add(shard.firstDoc + local);
      else for (const local of docs) add(shard.firstDoc + local);
    });
    const byOffset = new Map<number, PieceSet>();
    for (const [file, docs] of candidates) {
      const firstDoc = this.tables.firstDoc[file]!;
      if (!pieces || docs.length === this.tables.firstDoc[file + 1]! - firstDoc) {
        byOffset.set(offsets[file]!, "all");
        continue;
      }
      // Doc j of the file is its pieces [j * perDoc, (j + 1) * perDoc), the last run cut at its piece count.
      const perDoc = pieces.piecesPerDoc;
      const pieceCount = pieces.firstPiece[file + 1]! - pieces.firstPiece[file]!;
      const set: number[] = [];
      for (const doc of docs) {
        const from = (doc - firstDoc) * perDoc;
        for (let k = from; k < Math.min(from + perDoc, pieceCount); k++) set.push(k);
      }
      byOffset.set(offsets[file]!, Uint32Array.from(set));
    }
    return (packOffset) =>
      byOffset.get(packOffset) ?? (this.tables.fileAt.has(packOffset) && !this.tables.unindexed.has(packOffset) ? null : "all");
  }

  /**
   * Reads every shard whole into the isolate's cache, when they add up to at most `maxBytes` (false
   * when they do not): done while the model answers, it spares the first search its round trip for lists.
   */
  async warmPostings(signal?: AbortSignal, maxBytes = WARM_POSTINGS_MAX_BYTES): Promise<boolean> {
    const sizes = this.directory.shards.map((shard) => (shard.ends.length > 0 ? shard.ends[shard.ends.length - 1]! : 0));
    if (sizes.reduce((sum, size) => sum + size, 0) > maxBytes) return false;
    signal?.throwIfAborted();
    await Promise.all(
      sizes.map(async (size, n) => {
        if (size === 0 || wholeShards.get(this.wholeShardKey(n))) return;
        wholeShards.set(this.wholeShardKey(n), await this.readShard(n));
      }),
    );
    return true;
  }

  /** Shard `n`'s bytes from R2, whole or a range of them. */
  private async readShard(n: number, range?: { offset: number; length: number }): Promise<Uint8Array> {
    const object = await this.bucket.get(searchKeys(this.workspaceId).shard(n), range ? { range } : undefined);
    if (!object) throw new Error(`search index of ${this.workspaceId} lost shard ${n}`);
    return new Uint8Array(await object.arrayBuffer());
  }

  private wholeShardKey(n: number): string {
    return `${this.stamp}\u0000${n}`;
  }

  /** The posting lists of `keys` in shard `n` (absent keys: empty), from the cache or by range reads. */
  private async readLists(n: number, keys: Set<number>, signal?: AbortSignal): Promise<Map<number, DocList>> {
    const shard = this.directory.shards[n]!;
    // A shard a warm-up read whole (unless the isolate's cache has let it go since).
    const whole = wholeShards.get(this.wholeShardKey(n));
    const lists = new Map<number, DocList>();
    const missing: { key: number; start: number; end: number }[] = [];
    for (const key of keys) {
      const at = binarySearch(shard.keys, key);
      if (at < 0) {
        lists.set(key, EMPTY);
        continue;
      }
      const start = at === 0 ? 0 : shard.ends[at - 1]!;
      const end = shard.ends[at]!;
      const cached = whole?.subarray(start, end) ?? postingLists.get(`${this.wholeShardKey(n)}\u0000${key}`);
      if (cached) lists.set(key, docList(cached));
      else missing.push({ key, start, end });
    }
    missing.sort((a, b) => a.start - b.start);
    const groups: (typeof missing)[] = [];
    for (const m of missing) {
      const group = groups[groups.length - 1];
      if (group && m.start - group[group.length - 1]!.end <= MAX_POSTINGS_GAP_BYTES) group.push(m);
      else groups.push([m]);
    }
    signal?.throwIfAborted();
    // Every range at once: a search waits for one round trip to R2, not one per range.
    await Promise.all(
      groups.map(async (group) => {
        const from = group[0]!.start;
        const to = Math.max(...group.map((m) => m.end));
        const bytes = await this.readShard(n, { offset: from, length: to - from });
        for (const m of group) {
          const list = bytes.slice(m.start - from, m.end - from);
          postingLists.set(`${this.wholeShardKey(n)}\u0000${m.key}`, list);
          lists.set(m.key, docList(list));
        }
      }),
    );
    return lists;
  }
}

const EMPTY = new Uint32Array(0);

/** A key's docs in a shard: sorted shard-local numbers, or "all" (a dense key). */
type DocList = Uint32Array | "all";

function docList(stored: Uint8Array): DocList {
  return isDenseList(stored) ? "all" : decodePostings(stored);
}

/** Shard-local doc numbers (sorted) that satisfy `query`, or "all". */
function evaluate(query: SearchQuery, lists: Map<number, DocList>, docCount: number): DocList {
  switch (query.op) {
    case "all":
      return "all";
    case "trigram":
      return lists.get(query.key) ?? EMPTY;
    case "and": {
      let result: Uint32Array | "all" = "all";
      for (const part of query.of) {
        const docs = evaluate(part, lists, docCount);
        if (docs === "all") continue;
        result = result === "all" ? docs : intersect(result, docs);
        if (result.length === 0) break;
      }
      return result;
    }
    case "or": {
      let result: Uint32Array = EMPTY;
      for (const part of query.of) {
        const docs = evaluate(part, lists, docCount);
        if (docs === "all") return "all";
        result = union(result, docs);
        if (result.length === docCount) return "all";
      }
      return result;
    }
  }
}

function intersect(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(Math.min(a.length, b.length));
  let n = 0;
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i]! < b[j]!) i++;
    else if (a[i]! > b[j]!) j++;
    else {
      out[n++] = a[i]!;
      i++;
      j++;
    }
  }
  return out.subarray(0, n);
}

function union(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  let n = 0;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]! < b[j]!)) out[n++] = a[i++]!;
    else if (i >= a.length || b[j]! < a[i]!) out[n++] = b[j++]!;
    else {
      out[n++] = a[i++]!;
      j++;
    }
  }
  return out.subarray(0, n);
}

function binarySearch(sorted: Uint32Array, value: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v < value) lo = mid + 1;
    else if (v > value) hi = mid - 1;
    else return mid;
  }
  return -1;
}
