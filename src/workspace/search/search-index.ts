import { ByteLru } from "../byte-lru";
import { decodeDirectory, decodePostings, FILE_BINARY, type SearchDirectory, type SearchIndexInfo, searchKeys } from "./index-layout";
import { isAll, queryKeys, type SearchQuery } from "./query";

/** Posting lists kept per snapshot, in bytes: a warm search reads none from R2. */
export const POSTINGS_CACHE_BYTES = 4 * 1024 * 1024;
/** Wanted lists closer than this in a shard object are read in one range read, gap included (lists are small: one read per shard is usual). */
const MAX_POSTINGS_GAP_BYTES = 256 * 1024;

/**
 * A snapshot's search index, opened from R2: the directory in memory (read once), posting lists
 * read by range and kept in a small cache. `candidates` answers which files can hold a match.
 */
export class SearchIndex {
  private readonly postings = new ByteLru(POSTINGS_CACHE_BYTES, POSTINGS_CACHE_BYTES);
  /** Every pack offset the directory lists. */
  private readonly known: Set<number>;
  /** The filter for `all`: the text files. */
  private textFiles: ((packOffset: number) => boolean) | null = null;
  /** Pack offsets of the files the index knows to be text. */
  private readonly texts: Set<number>;

  private constructor(
    private readonly bucket: R2Bucket,
    private readonly workspaceId: string,
    private readonly directory: SearchDirectory,
  ) {
    this.known = new Set(directory.offsets);
    this.texts = new Set(directory.offsets);
    // An empty file shares its offset with the next file: an offset is text only if no file there is binary.
    directory.offsets.forEach((offset, file) => {
      if (directory.flags[file]! & FILE_BINARY) this.texts.delete(offset);
    });
  }

  /** True when the index has seen the file at `packOffset` and it is text (no need to look for a NUL again). */
  isText(packOffset: number): boolean {
    return this.texts.has(packOffset);
  }

  static async open(bucket: R2Bucket, workspaceId: string, info: SearchIndexInfo): Promise<SearchIndex> {
    const object = await bucket.get(searchKeys(workspaceId).directory);
    if (!object) throw new Error(`search index of ${workspaceId} has no directory`);
    const directory = decodeDirectory(new Uint8Array(await object.arrayBuffer()));
    if (directory.shards.length !== info.shards || directory.offsets.length !== info.files) {
      throw new Error(`search index of ${workspaceId} does not match index.json`);
    }
    return new SearchIndex(bucket, workspaceId, directory);
  }

  /**
   * A test on a file's pack offset: false only for files that cannot hold a match of `query`
   * (binary files never do). An offset the index does not know passes: it must be searched.
   */
  async filter(query: SearchQuery, signal?: AbortSignal): Promise<(packOffset: number) => boolean> {
    if (isAll(query)) {
      // Asked for every file read back (grep's second pass, one file at a time): computed once.
      this.textFiles ??= await this.evaluateFilter(query, signal);
      return this.textFiles;
    }
    return this.evaluateFilter(query, signal);
  }

  private async evaluateFilter(query: SearchQuery, signal?: AbortSignal): Promise<(packOffset: number) => boolean> {
    const { offsets, flags, shards } = this.directory;
    const keys = queryKeys(query);
    const lists = await Promise.all(shards.map((_, n) => this.readLists(n, keys, signal)));
    const candidates = new Set<number>();
    shards.forEach((shard, n) => {
      const files = evaluate(query, lists[n]!, shard.fileCount);
      const add = (local: number) => {
        const file = shard.firstFile + local;
        if (!(flags[file]! & FILE_BINARY)) candidates.add(offsets[file]!);
      };
      if (files === "all") for (let local = 0; local < shard.fileCount; local++) add(local);
      else for (const local of files) add(local);
    });
    return (packOffset) => candidates.has(packOffset) || !this.known.has(packOffset);
  }

  /** The posting lists of `keys` in shard `n` (absent keys: empty), from the cache or by range reads. */
  private async readLists(n: number, keys: Set<number>, signal?: AbortSignal): Promise<Map<number, Uint32Array>> {
    const shard = this.directory.shards[n]!;
    const lists = new Map<number, Uint32Array>();
    const missing: { key: number; start: number; end: number }[] = [];
    for (const key of keys) {
      const at = binarySearch(shard.keys, key);
      if (at < 0) {
        lists.set(key, EMPTY);
        continue;
      }
      const cached = this.postings.get(`${n}:${key}`);
      if (cached) lists.set(key, decodePostings(cached));
      else missing.push({ key, start: at === 0 ? 0 : shard.ends[at - 1]!, end: shard.ends[at]! });
    }
    missing.sort((a, b) => a.start - b.start);
    const shardKey = searchKeys(this.workspaceId).shard(n);
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
        const object = await this.bucket.get(shardKey, { range: { offset: from, length: to - from } });
        if (!object) throw new Error(`search index of ${this.workspaceId} lost shard ${n}`);
        const bytes = new Uint8Array(await object.arrayBuffer());
        for (const m of group) {
          const list = bytes.slice(m.start - from, m.end - from);
          this.postings.set(`${n}:${m.key}`, list);
          lists.set(m.key, decodePostings(list));
        }
      }),
    );
    return lists;
  }
}

const EMPTY = new Uint32Array(0);

/** Shard-local file numbers (sorted) that satisfy `query`, or "all". */
function evaluate(query: SearchQuery, lists: Map<number, Uint32Array>, fileCount: number): Uint32Array | "all" {
  switch (query.op) {
    case "all":
      return "all";
    case "trigram":
      return lists.get(query.key) ?? EMPTY;
    case "and": {
      let result: Uint32Array | "all" = "all";
      for (const part of query.of) {
        const files = evaluate(part, lists, fileCount);
        if (files === "all") continue;
        result = result === "all" ? files : intersect(result, files);
        if (result.length === 0) break;
      }
      return result;
    }
    case "or": {
      let result: Uint32Array = EMPTY;
      for (const part of query.of) {
        const files = evaluate(part, lists, fileCount);
        if (files === "all") return "all";
        result = union(result, files);
        if (result.length === fileCount) return "all";
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
