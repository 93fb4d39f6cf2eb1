import { logLine, ReportedOnce } from "../log";
import { deleteUnder } from "../r2";
import { ByteLru, SizedLru } from "./byte-lru";
import { WorkspaceError } from "./errors";
import { PackReader } from "./pack";
import { comparePaths } from "./paths";
import { isAll, type SearchQuery } from "./search/query";
import { type PieceFilter, SearchIndex, type SearchTables } from "./search/search-index";
import { decodePiece, type PieceSet, SearchText, searchTextOf } from "./search/search-text";
import { MAX_ENTRY_BYTES, searchTextCache } from "./search/text-cache";
import { type IndexEntry, type WorkspaceIndex, type WorkspaceMeta, workspaceKeys } from "./snapshot-layout";
import { decodeText, isBinary } from "./text";
import { TreeView } from "./tree-view";
import { WeakShare } from "./weak-share";
import type { WorkspaceStat } from "./workspace-fs";

/**
 * The read cache of files read through snapshots, in bytes. One per isolate, shared by every
 * snapshot in it (snapshots never change): one per snapshot added up past 128 MB when many session
 * objects of one isolate read the same workspace.
 */
export const CACHE_BYTES = 8 * 1024 * 1024;
const fileCache = new ByteLru(CACHE_BYTES);

/** Lends `bytes` of the file cache's budget to other work in the isolate (`shared-caches.ts`). */
export function reserveFileCache(bytes: number): void {
  fileCache.reserve(bytes);
}
/** `readMany` merges neighbouring files into range reads of at most this many bytes. */
export const MAX_COALESCED_READ_BYTES = 8 * 1024 * 1024;
/**
 * Gaps between wanted files up to this size are read and discarded rather than split, in bytes: a
 * read's fixed cost (a round trip to R2) is worth about this many bytes of transfer.
 */
export const MAX_COALESCE_GAP_BYTES = 1024 * 1024;
/**
 * Pack reads in flight ahead of their consumers (`readMany`, searches, warm-ups), all of the
 * isolate's together, up to this many bytes; each reader keeps one read in flight at least. Per
 * reader, two greps at once over a tree larger than the text cache held twice the window.
 */
export const READ_AHEAD_BYTES = 16 * 1024 * 1024;
/** Bytes of the isolate's pack reads in flight and not yet taken by their readers (see READ_AHEAD_BYTES). */
let readsAheadInIsolate = 0;
const DIR_MODE = 0o755;
/** Workspaces whose unreadable search index this isolate has logged (it stays unreadable: every grep would log it again). */
export const MAX_SEARCH_WARNINGS_REMEMBERED = 1000;
const searchIndexWarned = new ReportedOnce(MAX_SEARCH_WARNINGS_REMEMBERED);
/** A warm-up is running in this isolate (see `warmSearchTexts`). */
let warmUpRunning = false;

/**
 * A snapshot's parsed index with its lookups, and its search index once opened: never changed, so
 * every object of the isolate that opens the snapshot shares one (`catalogs`).
 */
export class SnapshotCatalog {
  readonly byPath = new Map<string, IndexEntry>();
  readonly dirSet: Set<string>;
  /** The search index's tables, once an object opened it (a settled value: see `WeakShare`). */
  search: SearchTables | null = null;
  private unchanged: TreeView | null = null;

  /** @param indexBytes the size of the index's JSON */
  constructor(
    readonly index: WorkspaceIndex,
    readonly indexBytes: number,
  ) {
    for (const entry of index.files) this.byPath.set(entry.path, entry);
    this.dirSet = new Set(index.dirs);
  }

  /** The tree a session without changes sees, made when first asked for (reading a `TreeView` only fills its caches). */
  unchangedTree(): TreeView {
    this.unchanged ??= new TreeView(this.index, []);
    return this.unchanged;
  }
}

/** The catalogs of the snapshots that objects of this isolate have open, by `snapshotStamp`. */
const catalogs = new WeakShare<SnapshotCatalog>();

/** Names a snapshot for good: its id and creation time (ids are never reused, but tests do reuse them). */
function snapshotStamp(meta: WorkspaceMeta): string {
  return `${meta.workspaceId}\u0000${meta.createdAt}`;
}

/**
 * A read-only view of a stored snapshot: the index in memory, file bytes read from the pack by
 * range. This is the unchanging base under a session's overlay, and the "a/" side of `/changes`.
 */
export class Snapshot {
  private readonly byPath: Map<string, IndexEntry>;
  private readonly dirSet: Set<string>;
  private searchIndex: Promise<SearchIndex | null> | null = null;
  private readonly pack: PackReader;
  /** Files `readFile` was asked for in this turn of the event loop, read when it ends; null when none. */
  private batch: ReadBatch | null = null;

  constructor(
    private readonly bucket: R2Bucket,
    readonly meta: WorkspaceMeta,
    private readonly catalog: SnapshotCatalog,
  ) {
    this.byPath = this.catalog.byPath;
    this.dirSet = this.catalog.dirSet;
    this.pack = new PackReader(bucket, meta.workspaceId, this.catalog.index.pack);
  }

  get workspaceId(): string {
    return this.meta.workspaceId;
  }

  get index(): WorkspaceIndex {
    return this.catalog.index;
  }

  /** The tree of this snapshot with no changes, shared by the sessions that have none (never change it). */
  unchangedTree(): TreeView {
    return this.catalog.unchangedTree();
  }

  file(path: string): IndexEntry | undefined {
    return this.byPath.get(path);
  }

  isDir(path: string): boolean {
    return path === "" || this.dirSet.has(path);
  }

  stat(path: string): WorkspaceStat | null {
    const file = this.byPath.get(path);
    if (file) return { type: "file", size: file.size, mode: file.mode };
    return this.isDir(path) ? { type: "dir", size: 0, mode: DIR_MODE } : null;
  }

  /**
   * One file's bytes, from the cache or read together with the other files asked for in the same
   * turn of the event loop (see `readBatch`).
   */
  async readFile(path: string, signal?: AbortSignal): Promise<Uint8Array> {
    const entry = this.byPath.get(path);
    if (!entry) throw this.missing(path);
    const cached = fileCache.get(this.pathKey(path));
    if (cached) return cached;
    signal?.throwIfAborted();
    if (this.batch === null) {
      const batch: ReadBatch = { reads: [], waiting: 0, stop: new AbortController() };
      this.batch = batch;
      setTimeout(() => void this.readBatch(batch), 0);
    }
    const batch = this.batch;
    return new Promise((resolve, reject) => {
      // The caller stops waiting at an abort; the reads go on for the others asking with it, and
      // stop when none is left waiting.
      let left = false;
      const leave = () => {
        if (left) return false;
        left = true;
        return --batch.waiting === 0;
      };
      const onAbort = () => {
        reject(signal!.reason);
        if (!leave()) return;
        batch.stop.abort();
        // A caller that comes later in this turn starts a batch of its own: this one reads nothing
        // now, and one that joined it waited for good (hunt 88).
        if (this.batch === batch) this.batch = null;
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      batch.waiting++;
      batch.reads.push({
        path,
        offset: entry.offset,
        size: entry.size,
        settle: (bytes, error) => {
          signal?.removeEventListener("abort", onAbort);
          leave();
          if (bytes) resolve(bytes);
          else reject(error);
        },
      });
    });
  }

  /**
   * One file's text as `decodeText` gives it: joined from the isolate's text cache when grep or a
   * run's warm-up holds the whole file (no R2 read, no decoding: a shell's `grep -r` read the tree
   * from R2 on every call, since the file cache holds 8 MiB of it), else read and decoded, and
   * cached for grep when it is text and the cache has room without evicting anything.
   */
  async readText(path: string, signal?: AbortSignal): Promise<string> {
    const key = this.pathKey(path);
    const cached = searchTextCache.peek(key);
    if (cached?.complete) return cached.pieces.join("");
    const bytes = await this.readFile(path, signal);
    // Decoded in pieces only when the cache can keep them (hunt 92: a 10 MiB file was decoded in
    // 639 pieces and joined, twice the text live, for a cache that would not take it).
    if (cached === null || bytes.byteLength > Math.min(searchTextCache.room, MAX_ENTRY_BYTES) || isBinary(bytes)) return decodeText(bytes);
    const text = searchTextOf(bytes);
    // Another reader may have cached it meanwhile: a fuller text is not replaced.
    if (!searchTextCache.peek(key)?.complete) searchTextCache.addIfRoom(key, text);
    return text.pieces.join("");
  }

  /**
   * Reads the files `readFile` was asked for in the turn of the event loop that just ended, as the
   * few range reads `coalesce` makes of them, within the isolate's read-ahead window as any other
   * reader (gaps read through must not put tens of MB in flight for small files). A shell's `grep -r`
   * asks for 50 files at a time: one R2 read each made 572 files of 3.7 MB cost 330 ms more than from
   * the cache locally, and would cost a round trip and a subrequest each in production. A file's
   * bytes are copied out of a longer read: the cache must not keep the whole range alive. After a
   * read that fails, the files not read yet are read one by one, so that only those it held fail.
   */
  private async readBatch(batch: ReadBatch): Promise<void> {
    if (this.batch === batch) this.batch = null;
    const { reads, stop } = batch;
    reads.sort(byPackOrder);
    const done = new Set<WaitingRead>();
    try {
      for await (const { range, bytes } of this.readRanges(reads, stop.signal)) {
        const own = bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
        fileCache.set(this.pathKey(range.path), own);
        range.settle(own);
        done.add(range);
      }
    } catch {
      if (stop.signal.aborted) return;
      for (const read of reads) {
        if (done.has(read)) continue;
        this.readRange(read.offset, read.size).then(
          (bytes) => {
            fileCache.set(this.pathKey(read.path), bytes);
            read.settle(bytes);
          },
          (error: unknown) => read.settle(null, error),
        );
      }
    }
  }

  /** One file as a stream straight from R2 (for HTTP downloads). */
  async fileStream(path: string): Promise<{ entry: IndexEntry; body: ReadableStream<Uint8Array> }> {
    const entry = this.byPath.get(path);
    if (!entry) throw this.missing(path);
    return { entry, body: await this.pack.stream(entry.offset, entry.size) };
  }

  /**
   * Many files in pack order, merging neighbours into range reads of up to
   * `MAX_COALESCED_READ_BYTES`. Reads run ahead of the consumer, several at once, up to
   * `READ_AHEAD_BYTES`: the wait for R2 is per window, not per read. Unknown paths are skipped.
   */
  async *readMany(paths: Iterable<string>, signal?: AbortSignal): AsyncGenerator<{ path: string; bytes: Uint8Array }> {
    const wanted: IndexEntry[] = [];
    const seen = new Set<string>();
    for (const path of paths) {
      const entry = this.byPath.get(path);
      if (entry && !seen.has(path)) {
        seen.add(path);
        wanted.push(entry);
      }
    }
    wanted.sort(byPackOrder);
    for await (const { range, bytes } of this.readRanges(wanted, signal)) yield { path: range.path, bytes };
  }

  /** Byte ranges of the pack, sorted by offset, read as `readMany` reads files. */
  private async *readRanges<R extends PackRange>(
    sorted: readonly R[],
    signal?: AbortSignal,
  ): AsyncGenerator<{ range: R; bytes: Uint8Array }> {
    const groups = coalesce(sorted, this.pack.chunkBytes);
    // reads[i] is group i's read, dropped once consumed.
    const reads: (Promise<Uint8Array> | undefined)[] = [];
    let started = 0;
    /** This reader's share of `readsAheadInIsolate`. */
    let aheadBytes = 0;
    let released = false;
    const ahead = (bytes: number) => {
      if (released) return;
      aheadBytes += bytes;
      readsAheadInIsolate += bytes;
    };
    // Its share leaves the window when it stops, and at an abort even if a read never answers (a
    // warm-up is let go of then): a read stuck for good must not narrow every later reader's window.
    const release = () => {
      if (released) return;
      readsAheadInIsolate -= aheadBytes;
      aheadBytes = 0;
      released = true;
    };
    signal?.addEventListener("abort", release, { once: true });
    const startReads = () => {
      while (started < groups.length) {
        const group = groups[started]!;
        const size = group.end - group.start;
        // Always one read in flight; more while the isolate's reads ahead fit in the window.
        if (aheadBytes > 0 && readsAheadInIsolate + size > READ_AHEAD_BYTES) return;
        const read = this.readGroup(group, signal);
        // A failed read-ahead must not become an unhandled rejection if the consumer stops early.
        read.catch(() => {});
        reads.push(read);
        ahead(size);
        started++;
      }
    };
    try {
      for (let i = 0; i < groups.length; i++) {
        startReads();
        const current = await reads[i]!;
        const group = groups[i]!;
        ahead(-(group.end - group.start));
        reads[i] = undefined;
        startReads();
        for (const range of group.entries) {
          signal?.throwIfAborted();
          yield { range, bytes: current.subarray(range.offset - group.start, range.offset - group.start + range.size) };
        }
      }
    } finally {
      signal?.removeEventListener("abort", release);
      release();
    }
  }

  /**
   * Decoded text of the files among `paths` that can hold a match of `query`, binary files left
   * out, each with the pieces of it to search: narrowed by the snapshot's search index when it has
   * one (to files, and to pieces of them), served from the isolate's text cache when it can be,
   * else read from the pack (only the pieces wanted, when the index knows where they are) and
   * cached. A text holds at least the pieces yielded with it, and with `neighbours` the pieces next
   * to those (for context lines); with `ALL`, every piece. Cached files come first, then the rest in
   * pack order.
   */
  async *searchTexts(
    paths: Iterable<string>,
    query: SearchQuery,
    signal?: AbortSignal,
    options: { neighbours?: boolean } = {},
  ): AsyncGenerator<{ path: string; text: SearchText; pieces: PieceSet }> {
    let index = await this.openSearchIndex();
    let mayMatch: PieceFilter = () => "all";
    try {
      if (index) mayMatch = await index.filter(query, signal);
    } catch (error) {
      signal?.throwIfAborted();
      // A posting list that cannot be read costs speed, not results: search every file this time.
      if (searchIndexWarned.first(this.workspaceId))
        logLine("warn", "search index unreadable, searching in full", { workspaceId: this.workspaceId, error: (error as Error).message });
      index = null;
    }
    const search = searchTextCache.beginSearch();
    const reads: PieceRead[] = [];
    const wanted = new Map<string, { text: SearchText | null; pieces: PieceSet; left: number }>();
    for (const path of paths) {
      const entry = this.byPath.get(path);
      if (!entry || wanted.has(path)) continue;
      // An empty file has no lines, and shares its pack offset with the next file: the index cannot
      // answer for it, and a narrowed search does not need it.
      const pieces = entry.size === 0 ? (index && !isAll(query) ? null : "all") : mayMatch(entry.offset);
      if (pieces === null) continue;
      const cached = searchTextCache.get(this.pathKey(path), search);
      if (cached === null) continue;
      // The warm path: the pieces wanted are cached (context needs their neighbours checked too).
      if (!options.neighbours && cached?.holds(pieces)) {
        yield { path, text: cached, pieces };
        continue;
      }
      const table = pieces === "all" ? null : index?.piecesOf(entry.offset);
      const needed = table && options.neighbours && pieces !== "all" ? withNeighbours(pieces, table.starts.length) : pieces;
      if (cached?.holds(needed)) {
        yield { path, text: cached, pieces };
        continue;
      }
      let left = 0;
      if (!table || needed === "all") {
        reads.push({ path, offset: entry.offset, size: entry.size, piece: -1 });
        left = 1;
      } else {
        const { starts } = table;
        for (const k of needed) {
          if (cached?.pieces[k] !== undefined) continue;
          const end = k + 1 < starts.length ? starts[k + 1]! : entry.size;
          reads.push({ path, offset: entry.offset + starts[k]!, size: end - starts[k]!, piece: k });
          left++;
        }
      }
      const text = table && needed !== "all" ? (cached ?? SearchText.partial(table.linesBefore)) : null;
      wanted.set(path, { text, pieces, left });
    }
    reads.sort(byPackOrder);
    for await (const { range, bytes } of this.readRanges(reads, signal)) {
      const file = wanted.get(range.path)!;
      if (range.piece < 0) {
        file.text = fileText(bytes, range.offset, index);
      } else file.text!.fill(range.piece, decodePiece(bytes, range.piece === 0));
      if (--file.left > 0) continue;
      // That was the last range this search wanted of the file. Let go of it here: held until the
      // search ends, a search over more text than the cache keeps held all of it (94 MB tree: 58-65 MB
      // more live for one grep of `return`, 139 MB for two, in an isolate of 128 MB).
      wanted.delete(range.path);
      searchTextCache.set(this.pathKey(range.path), file.text, search);
      if (file.text !== null) yield { path: range.path, text: file.text, pieces: file.pieces };
    }
  }

  /**
   * Reads and decodes the text files among `paths` into the isolate's text cache ahead of any
   * search, while the cache has room (it never evicts for this), in pack order, until done or
   * `signal` aborts. A run calls it while it waits for the model, so that its first grep is served
   * from the cache. Files already cached whole, binary files and files the cache would not keep
   * are skipped. One warm-up at a time in the isolate (each keeps up to `READ_AHEAD_BYTES` of reads
   * in flight): false when another one is running.
   */
  async warmSearchTexts(paths: Iterable<string>, signal: AbortSignal): Promise<boolean> {
    if (warmUpRunning) return false;
    warmUpRunning = true;
    try {
      // Released at the abort even if an R2 read never answers: a stuck read must not end warm-ups
      // in this isolate for good.
      const warming = this.warm(paths, signal);
      warming.catch(() => {});
      await Promise.race([warming, aborted(signal)]);
      return true;
    } finally {
      warmUpRunning = false;
    }
  }

  private async warm(paths: Iterable<string>, signal: AbortSignal): Promise<void> {
    const index = await this.openSearchIndex();
    signal.throwIfAborted();
    // The posting lists first (small): a shard that cannot be read is the search's to report.
    await index?.warmPostings(signal).catch(() => false);
    signal.throwIfAborted();
    // A text takes at least one byte per byte of the file (ASCII); files are planned until that
    // estimate fills the room, and decoding stops at the first text that does not fit.
    let room = searchTextCache.room;
    const reads: PackRange[] = [];
    for (const path of new Set(paths)) {
      const entry = this.byPath.get(path);
      if (!entry || entry.size === 0 || entry.size > MAX_ENTRY_BYTES || entry.size > room) continue;
      if (index?.isBinary(entry.offset)) continue;
      const cached = searchTextCache.peek(this.pathKey(path));
      if (cached === null || cached?.complete) continue;
      reads.push({ path, offset: entry.offset, size: entry.size });
      room -= entry.size;
    }
    reads.sort(byPackOrder);
    for await (const { range, bytes } of this.readRanges(reads, signal)) {
      if (!searchTextCache.addIfRoom(this.pathKey(range.path), fileText(bytes, range.offset, index))) return;
    }
  }

  /**
   * The search index, opened once (or taken from another object that opened it); null for a
   * snapshot stored without one, or one that cannot be read.
   */
  private openSearchIndex(): Promise<SearchIndex | null> {
    const info = this.index.search;
    if (!info) return Promise.resolve(null);
    const tables = this.catalog.search;
    this.searchIndex ??= (
      tables
        ? Promise.resolve(new SearchIndex(this.bucket, this.workspaceId, tables, snapshotStamp(this.meta)))
        : SearchIndex.open(this.bucket, this.workspaceId, info, this.meta.createdAt)
    ).then(
      (index) => {
        this.catalog.search ??= index.tables;
        return index;
      },
      () => {
        // Searched in full this time; the next search tries again.
        this.searchIndex = null;
        return null;
      },
    );
    return this.searchIndex;
  }

  /** Snapshots never change: their id and creation time name a file's bytes and text for good (the isolate's caches key by it). */
  private pathKey(path: string): string {
    return `${snapshotStamp(this.meta)}\u0000${path}`;
  }

  private async readGroup(group: RangeGroup, signal?: AbortSignal): Promise<Uint8Array> {
    signal?.throwIfAborted();
    return this.readRange(group.start, group.end - group.start);
  }

  private readRange(offset: number, length: number): Promise<Uint8Array> {
    return this.pack.read(offset, length);
  }

  private missing(path: string): WorkspaceError {
    if (this.isDir(path)) return new WorkspaceError("is_directory", `'${path}' is a directory`);
    return new WorkspaceError("not_found", `no file at '${path}'`);
  }
}

/** Pack order: by offset, and by path among the empty files that share one. */
function byPackOrder(a: PackRange, b: PackRange): number {
  return a.offset - b.offset || comparePaths(a.path, b.path);
}

/** A whole file's text to search, or null for a binary file (no NUL check for a file the index vouched for). */
function fileText(bytes: Uint8Array, packOffset: number, index: SearchIndex | null): SearchText | null {
  return index?.isText(packOffset) || !isBinary(bytes) ? searchTextOf(bytes) : null;
}

/** Rejects with the signal's reason when it aborts (never resolves). */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

/** `pieces` and the pieces next to them, of a file with `count` pieces. */
function withNeighbours(pieces: Uint32Array, count: number): Uint32Array {
  const out: number[] = [];
  for (const k of pieces) {
    for (let n = Math.max(0, k - 1); n <= Math.min(count - 1, k + 1); n++) if (out.length === 0 || out[out.length - 1]! < n) out.push(n);
  }
  return Uint32Array.from(out);
}

/** A byte range of the pack. */
interface PackRange {
  path: string;
  offset: number;
  size: number;
}

/** A file `readFile` waits for: `settle` gets its bytes, or null and why not. */
interface WaitingRead extends PackRange {
  settle(bytes: Uint8Array | null, error?: unknown): void;
}

/** The files `readFile` was asked for in one turn of the event loop (`readBatch`). */
interface ReadBatch {
  reads: WaitingRead[];
  /** Callers still waiting (neither answered nor aborted): when the last one aborts, `stop` aborts the reads. */
  waiting: number;
  stop: AbortController;
}

/** A file's bytes to read for a search: piece `piece` of it, or all of it (-1). */
interface PieceRead extends PackRange {
  piece: number;
}

interface RangeGroup<R extends PackRange = PackRange> {
  start: number;
  end: number;
  entries: R[];
}

/**
 * Groups offset-sorted entries into ranges: small gaps are read through, big ones split, and a
 * range stays within one pack chunk unless a single file crosses the boundary (so it is one read).
 */
export function coalesce<R extends PackRange>(sorted: readonly R[], chunkBytes = Number.POSITIVE_INFINITY): RangeGroup<R>[] {
  const groups: RangeGroup<R>[] = [];
  let group: RangeGroup<R> | null = null;
  for (const entry of sorted) {
    const end = entry.offset + entry.size;
    const fits =
      group !== null &&
      entry.offset - group.end <= MAX_COALESCE_GAP_BYTES &&
      Math.max(end, group.end) - group.start <= MAX_COALESCED_READ_BYTES &&
      Math.floor(group.start / chunkBytes) === Math.floor((Math.max(end, group.end) - 1) / chunkBytes);
    if (group && fits) {
      group.end = Math.max(group.end, end);
      group.entries.push(entry);
    } else {
      group = { start: entry.offset, end, entries: [entry] };
      groups.push(group);
    }
  }
  return groups;
}

/**
 * Reads a workspace's meta, refusing with `workspace_not_found` when it does not exist or (when
 * `owner` is given) belongs to another tenant, so other tenants cannot learn that it exists.
 */
export async function readWorkspaceMeta(bucket: R2Bucket, workspaceId: string, owner?: string | null): Promise<WorkspaceMeta> {
  const object = await bucket.get(workspaceKeys(workspaceId).meta);
  const meta = object ? ((await object.json()) as WorkspaceMeta) : null;
  if (!meta || (owner !== undefined && meta.owner !== owner)) {
    throw new WorkspaceError("workspace_not_found", `workspace ${workspaceId} does not exist`);
  }
  return meta;
}

/** Loads a complete snapshot (meta and index, read at once); see `readWorkspaceMeta` for the owner check. */
export async function loadWorkspace(bucket: R2Bucket, workspaceId: string, owner?: string | null): Promise<Snapshot> {
  return (await readSnapshot(bucket, workspaceId, owner)).snapshot;
}

/**
 * The snapshots `openWorkspace` keeps for the isolate, counted by the size of their index's JSON
 * (parsed, an index takes about three times that): a 40,000-file index is about 3 MB.
 */
export const SNAPSHOT_CACHE_BYTES = 4 * 1024 * 1024;
const snapshotCache = new SizedLru<{ snapshot: Snapshot; indexBytes: number }>(
  SNAPSHOT_CACHE_BYTES,
  (entry) => entry.indexBytes,
  SNAPSHOT_CACHE_BYTES,
);

/** Lends `bytes` of the snapshot cache's budget to other work in the isolate (`shared-caches.ts`). */
export function reserveSnapshotCache(bytes: number): void {
  snapshotCache.reserve(bytes);
}

/**
 * A snapshot for a request that reads one file of it (`GET /api/workspaces/:wid/files/...`): the
 * index, which names every file, is read and parsed once per isolate, not per request. Snapshots
 * never change; their meta is read on every call, so the owner is checked and a deleted workspace
 * (its meta goes first) is not served.
 */
export async function openWorkspace(bucket: R2Bucket, workspaceId: string, owner: string | null): Promise<Snapshot> {
  const cached = snapshotCache.get(workspaceId);
  if (cached) {
    await readWorkspaceMeta(bucket, workspaceId, owner);
    return cached.snapshot;
  }
  const read = await readSnapshot(bucket, workspaceId, owner);
  snapshotCache.set(workspaceId, read);
  return read.snapshot;
}

async function readSnapshot(
  bucket: R2Bucket,
  workspaceId: string,
  owner?: string | null,
): Promise<{ snapshot: Snapshot; indexBytes: number }> {
  const index = bucket.get(workspaceKeys(workspaceId).index);
  let meta: WorkspaceMeta;
  try {
    meta = await readWorkspaceMeta(bucket, workspaceId, owner);
  } catch (error) {
    // Not this tenant's (or not there): the index read in parallel is dropped unread.
    await index.then((object) => object?.body.cancel()).catch(() => {});
    throw error;
  }
  const object = await index;
  if (!object) throw new WorkspaceError("workspace_not_found", `workspace ${workspaceId} has no index`);
  const stamp = snapshotStamp(meta);
  let catalog = catalogs.get(stamp);
  if (catalog) await object.body.cancel();
  else {
    catalog = new SnapshotCatalog((await object.json()) as WorkspaceIndex, object.size);
    // Another object may have parsed it meanwhile: the first one stays shared.
    catalog = catalogs.get(stamp) ?? catalog;
    catalogs.set(stamp, catalog);
  }
  return { snapshot: new Snapshot(bucket, meta, catalog), indexBytes: catalog.indexBytes };
}

/** Removes every object of a workspace (meta first and alone, so a half-done delete no longer loads). */
export async function deleteWorkspace(bucket: R2Bucket, workspaceId: string): Promise<void> {
  const keys = workspaceKeys(workspaceId);
  snapshotCache.delete(workspaceId);
  await bucket.delete(keys.meta);
  await bucket.delete([keys.index, keys.pack, keys.upload, keys.result]);
  await deleteUnder(bucket, keys.prefix);
}
