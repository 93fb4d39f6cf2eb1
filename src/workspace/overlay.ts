import { MAX_FILE_BYTES } from "../domain/limits";
import { WorkspaceError } from "./errors";

/** One path the session changed: new content (`deleted: false`) or a whiteout (`deleted: true`). */
export interface OverlayEntry {
  path: string;
  deleted: boolean;
  /** Content size in bytes (0 for whiteouts). */
  size: number;
  /** POSIX permission bits of the content (0 for whiteouts). */
  mode: number;
}

/**
 * A session's copy-on-write layer over the snapshot. Metadata and content are synchronous: the
 * store lives in the Durable Object's SQLite. Paths are canonical workspace paths.
 */
export interface OverlayStore {
  /** Every changed path, sorted by path. */
  list(): OverlayEntry[];
  entry(path: string): OverlayEntry | null;
  /** Content written at `path`, or null for a whiteout or an unchanged path. */
  get(path: string): Uint8Array | null;
  /** Records new content (replacing any earlier change of `path`). */
  put(path: string, bytes: Uint8Array, mode: number): void;
  /** Records that `path` is deleted. */
  whiteout(path: string): void;
}

/** One change of one path as it was made, with the stamp (the session's log seq) it was made at. */
export interface OverlayVersion {
  path: string;
  deleted: boolean;
  mode: number;
  /** The content (empty for a whiteout). */
  bytes: Uint8Array;
  stamp: number;
}

/** Rows hold at most this many content bytes (Durable Object SQLite values are limited to 2 MB). */
export const OVERLAY_CHUNK_BYTES = 1024 * 1024;
/** The largest file the overlay accepts, in bytes; larger writes fail with `file_too_large`. */

export interface SqliteOverlayOptions {
  /** Largest accepted file, in bytes (default `MAX_FILE_BYTES`). */
  maxFileBytes?: number;
  /**
   * Runs one change's statements as a transaction; pass `(fn) => ctx.storage.transactionSync(fn)`.
   * Without it the statements still run with no `await` in between, which the Durable Object's
   * write coalescing commits together.
   */
  transaction?: <T>(fn: () => T) => T;
  /**
   * The stamp of a change made now: the session's last log seq. Changes keep it, and a change that
   * replaces another moves the old one to `overlay_history`, so the workspace as it was at any
   * message can be rebuilt (fork). Default: 0.
   */
  stamp?: () => number;
}

/**
 * The overlay in a Durable Object's SQLite (`ctx.storage.sql`), table `overlay`: one row per
 * content chunk of at most `OVERLAY_CHUNK_BYTES`; chunk 0 also carries the metadata (a whiteout
 * is a single chunk-0 row without data).
 */
export class SqliteOverlay implements OverlayStore {
  private readonly maxFileBytes: number;
  private readonly transaction: <T>(fn: () => T) => T;
  private readonly stamp: () => number;

  constructor(
    private readonly sql: SqlStorage,
    options: SqliteOverlayOptions = {},
  ) {
    this.maxFileBytes = options.maxFileBytes ?? MAX_FILE_BYTES;
    this.transaction = options.transaction ?? ((fn) => fn());
    this.stamp = options.stamp ?? (() => 0);
    sql.exec(`CREATE TABLE IF NOT EXISTS overlay (
      path TEXT NOT NULL,
      chunk INTEGER NOT NULL,
      deleted INTEGER NOT NULL,
      size INTEGER NOT NULL,
      mode INTEGER NOT NULL,
      data BLOB,
      PRIMARY KEY (path, chunk)
    ) WITHOUT ROWID`);
    // Overlays made before changes were stamped count as made at the start (stamp 0).
    const columns = sql.exec<{ name: string }>(`PRAGMA table_info(overlay)`).toArray();
    if (!columns.some((c) => c.name === "stamp")) sql.exec(`ALTER TABLE overlay ADD COLUMN stamp INTEGER NOT NULL DEFAULT 0`);
    // Replaced changes, in the order they were replaced (`version`), with the chunks of each.
    sql.exec(`CREATE TABLE IF NOT EXISTS overlay_history (
      version INTEGER NOT NULL, chunk INTEGER NOT NULL, path TEXT NOT NULL, deleted INTEGER NOT NULL, size INTEGER NOT NULL,
      mode INTEGER NOT NULL, data BLOB, stamp INTEGER NOT NULL, PRIMARY KEY (version, chunk)
    )`);
  }

  list(): OverlayEntry[] {
    return this.sql
      .exec<{ path: string; deleted: number; size: number; mode: number }>(
        "SELECT path, deleted, size, mode FROM overlay WHERE chunk = 0 ORDER BY path",
      )
      .toArray()
      .map(toEntry);
  }

  entry(path: string): OverlayEntry | null {
    const rows = this.sql
      .exec<{ path: string; deleted: number; size: number; mode: number }>(
        "SELECT path, deleted, size, mode FROM overlay WHERE path = ? AND chunk = 0",
        path,
      )
      .toArray();
    return rows[0] ? toEntry(rows[0]) : null;
  }

  get(path: string): Uint8Array | null {
    const rows = this.sql
      .exec<{ deleted: number; size: number; data: ArrayBuffer | null }>(
        "SELECT deleted, size, data FROM overlay WHERE path = ? ORDER BY chunk",
        path,
      )
      .toArray();
    const head = rows[0];
    if (!head || head.deleted) return null;
    const out = new Uint8Array(head.size);
    let offset = 0;
    for (const row of rows) {
      const chunk = new Uint8Array(row.data ?? new ArrayBuffer(0));
      out.set(chunk, offset);
      offset += chunk.byteLength;
    }
    if (offset !== head.size) throw new Error(`overlay content of '${path}' is ${offset} bytes, expected ${head.size}`);
    return out;
  }

  /** Records new content; `stamp` overrides the current stamp (a fork importing its source's changes). */
  put(path: string, bytes: Uint8Array, mode: number, stamp = this.stamp()): void {
    if (bytes.byteLength > this.maxFileBytes) {
      throw new WorkspaceError(
        "file_too_large",
        `'${path}' is ${bytes.byteLength} bytes; the limit for written files is ${this.maxFileBytes}`,
      );
    }
    this.transaction(() => {
      this.archive(path);
      const chunks = Math.max(1, Math.ceil(bytes.byteLength / OVERLAY_CHUNK_BYTES));
      for (let i = 0; i < chunks; i++) {
        const data = bytes.slice(i * OVERLAY_CHUNK_BYTES, (i + 1) * OVERLAY_CHUNK_BYTES);
        this.sql.exec(
          "INSERT INTO overlay (path, chunk, deleted, size, mode, data, stamp) VALUES (?, ?, 0, ?, ?, ?, ?)",
          path,
          i,
          bytes.byteLength,
          mode,
          data.buffer,
          stamp,
        );
      }
    });
  }

  whiteout(path: string, stamp = this.stamp()): void {
    this.transaction(() => {
      this.archive(path);
      this.sql.exec("INSERT INTO overlay (path, chunk, deleted, size, mode, data, stamp) VALUES (?, 0, 1, 0, 0, NULL, ?)", path, stamp);
    });
  }

  /**
   * Every change with a stamp at or below `maxStamp`, replaced ones included, in the order they were
   * made: replaying them in order onto an empty overlay gives the overlay as it was at that stamp.
   */
  versionsUpTo(maxStamp: number): OverlayVersion[] {
    type Chunk = { path: string; deleted: number; mode: number; data: ArrayBuffer | null; stamp: number };
    const history = this.sql
      .exec<Chunk & { version: number }>(
        "SELECT version, path, deleted, mode, data, stamp FROM overlay_history WHERE stamp <= ? ORDER BY version, chunk",
        maxStamp,
      )
      .toArray();
    const current = this.sql
      .exec<Chunk>("SELECT path, deleted, mode, data, stamp FROM overlay WHERE stamp <= ? ORDER BY stamp, path, chunk", maxStamp)
      .toArray();
    const versions: OverlayVersion[] = [];
    const add = (key: string, row: Chunk, last: Map<string, { version: OverlayVersion; parts: Uint8Array[] }>) => {
      let entry = last.get(key);
      if (!entry) {
        entry = {
          version: { path: row.path, deleted: row.deleted !== 0, mode: row.mode, bytes: new Uint8Array(), stamp: row.stamp },
          parts: [],
        };
        last.set(key, entry);
        versions.push(entry.version);
      }
      if (row.data) entry.parts.push(new Uint8Array(row.data));
    };
    const groups = new Map<string, { version: OverlayVersion; parts: Uint8Array[] }>();
    for (const row of history) add(`h${row.version}`, row, groups);
    for (const row of current) add(`c${row.path}`, row, groups);
    for (const { version, parts } of groups.values()) version.bytes = concat(parts);
    // History rows were replaced before the current rows were written; among equal stamps that order holds.
    return versions.sort((a, b) => a.stamp - b.stamp);
  }

  /** Moves the change of `path`, if any, to the history. */
  private archive(path: string): void {
    const next = this.sql.exec<{ v: number }>("SELECT IFNULL(MAX(version), 0) + 1 AS v FROM overlay_history").one().v;
    this.sql.exec(
      `INSERT INTO overlay_history (version, chunk, path, deleted, size, mode, data, stamp)
       SELECT ?, chunk, path, deleted, size, mode, data, stamp FROM overlay WHERE path = ?`,
      next,
      path,
    );
    this.sql.exec("DELETE FROM overlay WHERE path = ?", path);
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

function toEntry(row: { path: string; deleted: number; size: number; mode: number }): OverlayEntry {
  return { path: row.path, deleted: row.deleted !== 0, size: row.size, mode: row.mode };
}
