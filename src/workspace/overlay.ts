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
}

/**
 * The overlay in a Durable Object's SQLite (`ctx.storage.sql`), table `overlay`: one row per
 * content chunk of at most `OVERLAY_CHUNK_BYTES`; chunk 0 also carries the metadata (a whiteout
 * is a single chunk-0 row without data).
 */
export class SqliteOverlay implements OverlayStore {
  private readonly maxFileBytes: number;
  private readonly transaction: <T>(fn: () => T) => T;

  constructor(
    private readonly sql: SqlStorage,
    options: SqliteOverlayOptions = {},
  ) {
    this.maxFileBytes = options.maxFileBytes ?? MAX_FILE_BYTES;
    this.transaction = options.transaction ?? ((fn) => fn());
    sql.exec(`CREATE TABLE IF NOT EXISTS overlay (
      path TEXT NOT NULL,
      chunk INTEGER NOT NULL,
      deleted INTEGER NOT NULL,
      size INTEGER NOT NULL,
      mode INTEGER NOT NULL,
      data BLOB,
      PRIMARY KEY (path, chunk)
    ) WITHOUT ROWID`);
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

  put(path: string, bytes: Uint8Array, mode: number): void {
    if (bytes.byteLength > this.maxFileBytes) {
      throw new WorkspaceError(
        "file_too_large",
        `'${path}' is ${bytes.byteLength} bytes; the limit for written files is ${this.maxFileBytes}`,
      );
    }
    this.transaction(() => {
      this.sql.exec("DELETE FROM overlay WHERE path = ?", path);
      const chunks = Math.max(1, Math.ceil(bytes.byteLength / OVERLAY_CHUNK_BYTES));
      for (let i = 0; i < chunks; i++) {
        const data = bytes.slice(i * OVERLAY_CHUNK_BYTES, (i + 1) * OVERLAY_CHUNK_BYTES);
        this.sql.exec(
          "INSERT INTO overlay (path, chunk, deleted, size, mode, data) VALUES (?, ?, 0, ?, ?, ?)",
          path,
          i,
          bytes.byteLength,
          mode,
          data.buffer,
        );
      }
    });
  }

  whiteout(path: string): void {
    this.transaction(() => {
      this.sql.exec("DELETE FROM overlay WHERE path = ?", path);
      this.sql.exec("INSERT INTO overlay (path, chunk, deleted, size, mode, data) VALUES (?, 0, 1, 0, 0, NULL)", path);
    });
  }
}

function toEntry(row: { path: string; deleted: number; size: number; mode: number }): OverlayEntry {
  return { path: row.path, deleted: row.deleted !== 0, size: row.size, mode: row.mode };
}
