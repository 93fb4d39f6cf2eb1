import type { SearchQuery } from "./search/query";
import type { PieceSet, SearchText } from "./search/search-text";

/**
 * The agent's view of a workspace: an immutable snapshot plus the session's copy-on-write overlay.
 * All paths are canonical (see `resolveWorkspacePath`): relative, POSIX, `""` is the root.
 * Metadata calls are synchronous (the index and the overlay's metadata are in memory / SQLite),
 * so a simulated shell can list paths without awaiting; file contents are read asynchronously.
 */
export interface WorkspaceFs {
  /** Every file in the view (snapshot minus deletions plus overlay additions), sorted by path. */
  files(): readonly string[];
  /** Every directory in the view (implied by files or stored empty), sorted; excludes the root. */
  dirs(): readonly string[];
  /** File or directory metadata, or null when nothing is at `path`. The root is a directory. */
  stat(path: string): WorkspaceStat | null;
  /** Direct children of a directory, sorted by name; throws `not_found` / `not_a_directory`. */
  readdir(path: string): WorkspaceDirent[];
  /** A file's bytes; throws `not_found` or `is_directory`. */
  readFile(path: string, signal?: AbortSignal): Promise<Uint8Array>;
  /**
   * A file's text as `decodeText` reads its bytes (a BOM dropped, invalid UTF-8 as U+FFFD), for a
   * reader that wants text, not bytes (the shell's commands): a snapshot serves it from the text
   * cache grep fills, when that holds the whole file.
   */
  readText(path: string, signal?: AbortSignal): Promise<string>;
  /**
   * Many files at once, in an order chosen for cheap storage access (for a snapshot: pack order,
   * read with a few large range reads instead of one request per file). Missing paths are skipped.
   */
  readFiles(paths: readonly string[], signal?: AbortSignal): AsyncIterable<{ path: string; bytes: Uint8Array }>;
  /**
   * Decoded text of the files among `paths` that can hold a match of `query`, for searching, each
   * with the pieces of it that can (the others may be missing from a partial text); binary files
   * are left out, missing paths skipped. With `ALL`, texts are complete. A snapshot narrows with its
   * search index (when it has one) and serves text from a cache; the overlay's files are always
   * searched whole. `neighbours`: the texts also hold the pieces next to those, for context lines.
   * Order: whatever storage serves fastest.
   */
  searchTexts(
    paths: readonly string[],
    query: SearchQuery,
    signal?: AbortSignal,
    options?: SearchTextsOptions,
  ): AsyncIterable<SearchableText>;
  /**
   * Prepares for later `searchTexts` calls over `paths` while nothing else is waiting (a snapshot
   * reads and decodes them into its text cache, as far as the cache has room); resolves true when
   * done, false when it did not start (another warm-up was running: try again later), rejects when
   * `signal` aborts. Changes nothing anyone can observe but speed.
   */
  warmSearchTexts(paths: readonly string[], signal: AbortSignal): Promise<boolean>;
  /**
   * Creates or replaces a file in the overlay (parents are implied). A file that exists keeps its
   * mode; a new one gets `mode` (a copy: its source's), else 0644. `replace`: the file takes `mode`
   * even where one exists (a move onto it), in the same single write.
   */
  writeFile(path: string, bytes: Uint8Array, mode?: number, options?: WriteOptions): Promise<void>;
  /** Deletes a file: records a whiteout in the overlay; throws `not_found` when absent. */
  deleteFile(path: string): Promise<void>;
  /**
   * Removes a directory the view still lists once no file is under it (one uploaded empty, or
   * holding only such): a whiteout of it in the overlay; a file written under it later brings it
   * back. Nothing when it is not listed; throws `not_a_directory` for a file.
   */
  removeDir(path: string): Promise<void>;
  /** The workspace as uploaded, under the session's changes; null for a view that has none. */
  base(): WorkspaceBase | null;
}

/**
 * The unchanging side of a view: the snapshot as uploaded (what the shell's `git` calls HEAD; its
 * files are the tracked ones) and the paths the session has written or deleted since.
 */
export interface WorkspaceBase {
  /** The snapshot's files, sorted by path. */
  files(): readonly string[];
  stat(path: string): WorkspaceStat | null;
  readFile(path: string, signal?: AbortSignal): Promise<Uint8Array>;
  /** Every path the session wrote or deleted, sorted: a superset of those that differ from the snapshot. */
  overlaid(): readonly string[];
}

export interface WriteOptions {
  replace?: boolean;
}

export interface SearchTextsOptions {
  neighbours?: boolean;
}

/** A file's text to search, and which of its pieces to search. */
export interface SearchableText {
  path: string;
  text: SearchText;
  pieces: PieceSet;
}

export type EntryType = "file" | "dir";

export interface WorkspaceStat {
  type: EntryType;
  /** Bytes for files, 0 for directories. */
  size: number;
  /** POSIX permission bits (e.g. 0o644, 0o755). */
  mode: number;
}

export interface WorkspaceDirent {
  name: string;
  type: EntryType;
}
