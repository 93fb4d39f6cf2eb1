import { characterCount } from "../domain/characters";
import { MAX_FILE_BYTES, MAX_SESSION_CHANGE_BYTES, MAX_SESSION_CHANGE_VERSIONS, MAX_WORKSPACE_PATH_CHARS } from "../domain/limits";
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
  /** The same content as a stream with its size, for a download that need not hold it whole; null as for `get`. */
  stream(path: string): { size: number; body: ReadableStream<Uint8Array> } | null;
  /** Records new content (replacing any earlier change of `path`). */
  put(path: string, bytes: Uint8Array, mode: number): void;
  /** Records that `path` is deleted. */
  whiteout(path: string): void;
}

/**
 * A change as `versionRefsUpTo` lists it: all but its bytes, which `versionBytes` reads, so that a
 * fork can copy a long history in parts.
 */
export interface OverlayVersionRef {
  path: string;
  deleted: boolean;
  mode: number;
  size: number;
  stamp: number;
  /** Its version in `overlay_history`, or null: the path's current change when listed. */
  version: number | null;
}

/** A change given to `stage`: applied later, in order, by `applyStaged`. */
export interface StagedChange {
  path: string;
  deleted: boolean;
  mode: number;
  bytes: Uint8Array;
  /** What `applyStaged` turns into the change's stamp (a fork: the id of the change's message). */
  stampKey: string | null;
}

/** Rows hold at most this many content bytes (Durable Object SQLite values are limited to 2 MB). */
export const OVERLAY_CHUNK_BYTES = 1024 * 1024;

export interface SqliteOverlayOptions {
  /** Largest accepted file, in bytes (default `MAX_FILE_BYTES`). */
  maxFileBytes?: number;
  /** Most content bytes stored, current and replaced versions together (default `MAX_SESSION_CHANGE_BYTES`). */
  maxStoredBytes?: number;
  /** Most versions stored, current and replaced, whiteouts included (default `MAX_SESSION_CHANGE_VERSIONS`). */
  maxVersions?: number;
  /** Most characters of those versions' paths together (default `MAX_WORKSPACE_PATH_CHARS`). */
  maxPathChars?: number;
  /**
   * Runs one change's statements as a transaction; pass `(fn) => ctx.storage.transactionSync(fn)`.
   * Without it the statements still run with no `await` in between, which the Durable Object's
   * write coalescing commits together.
   */
  transaction?: <T>(fn: () => T) => T;
  /**
   * The stamp of a change made now: the session's last log seq. Changes keep it, and a change that
   * replaces another moves the old one to `overlay_history`, so the workspace as it was at any
   * message can be rebuilt (fork). One that replaces a change of the same stamp drops it instead: no
   * message lies between them, so no rebuild could show it (a shell's `> f` writes `f` empty, then
   * its content). Default: 0.
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
  private readonly maxStoredBytes: number;
  private readonly maxVersions: number;
  private readonly maxPathChars: number;
  /** Content bytes stored (overlay and history), counted when first needed. */
  private stored: number | null = null;
  /** Versions stored (overlay and history), counted when first needed. */
  private versions: number | null = null;
  /** Characters of the paths of those versions, counted when first needed. */
  private pathChars: number | null = null;
  private readonly transaction: <T>(fn: () => T) => T;
  private readonly stamp: () => number;
  /** Per path, how often its current change was replaced in this object's life: a stream stops when it moves. */
  private readonly replaced = new Map<string, number>();

  constructor(
    private readonly sql: SqlStorage,
    options: SqliteOverlayOptions = {},
  ) {
    this.maxFileBytes = options.maxFileBytes ?? MAX_FILE_BYTES;
    this.maxStoredBytes = options.maxStoredBytes ?? MAX_SESSION_CHANGE_BYTES;
    this.maxVersions = options.maxVersions ?? MAX_SESSION_CHANGE_VERSIONS;
    this.maxPathChars = options.maxPathChars ?? MAX_WORKSPACE_PATH_CHARS;
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
    // Changes received but not yet applied (a fork filled in parts), by the attempt that sent them
    // (retries of one fork may run at once) and their place in its order.
    sql.exec(`CREATE TABLE IF NOT EXISTS overlay_staged (
      attempt TEXT NOT NULL, position INTEGER NOT NULL, chunk INTEGER NOT NULL, path TEXT NOT NULL, deleted INTEGER NOT NULL,
      size INTEGER NOT NULL, mode INTEGER NOT NULL, data BLOB, stamp_key TEXT, PRIMARY KEY (attempt, position, chunk)
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

  /**
   * Reads a row (up to OVERLAY_CHUNK_BYTES) per pull, so an unread download holds one row, not a file
   * of up to 16 MiB: the session's file route held whole files, and 16 unread reads of one took the
   * isolate past 300 MB (hunt 84). A change of the path while the stream is read breaks it off.
   */
  stream(path: string): { size: number; body: ReadableStream<Uint8Array> } | null {
    const head = this.entry(path);
    if (!head || head.deleted) return null;
    const version = this.replaced.get(path) ?? 0;
    let chunk = 0;
    let sent = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        pull: (controller) => {
          if (sent === head.size) return controller.close();
          const row =
            (this.replaced.get(path) ?? 0) === version
              ? this.sql
                  .exec<{ data: ArrayBuffer | null }>("SELECT data FROM overlay WHERE path = ? AND chunk = ? AND deleted = 0", path, chunk)
                  .toArray()[0]
              : undefined;
          if (!row) return controller.error(new Error(`'${path}' was changed while it was read`));
          const bytes = new Uint8Array(row.data ?? new ArrayBuffer(0));
          chunk++;
          sent += bytes.byteLength;
          controller.enqueue(bytes);
          if (sent >= head.size) controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    return { size: head.size, body };
  }

  /** Records new content; `stamp` overrides the current stamp (a fork importing its source's changes). */
  put(path: string, bytes: Uint8Array, mode: number, stamp = this.stamp()): void {
    if (bytes.byteLength > this.maxFileBytes) {
      throw new WorkspaceError(
        "file_too_large",
        `'${path}' is ${bytes.byteLength} bytes; the limit for written files is ${this.maxFileBytes}`,
      );
    }
    const dropped = this.sameStampSize(path, stamp);
    if (dropped === null) this.roomForVersion(`writing '${path}'`, path);
    const held = this.storedBytes();
    const stored = held - (dropped ?? 0);
    if (stored + bytes.byteLength > this.maxStoredBytes) {
      throw new WorkspaceError(
        "workspace_full",
        `writing '${path}' (${bytes.byteLength} bytes) would pass the ${this.maxStoredBytes} bytes this session's workspace changes may hold (${held} held, replaced versions included)`,
      );
    }
    this.transaction(() => {
      this.replace(path, dropped !== null);
      for (const [i, data] of chunksOf(bytes)) {
        this.sql.exec(
          "INSERT INTO overlay (path, chunk, deleted, size, mode, data, stamp) VALUES (?, ?, 0, ?, ?, ?, ?)",
          path,
          i,
          bytes.byteLength,
          mode,
          data,
          stamp,
        );
      }
    });
    this.stored = stored + bytes.byteLength;
    if (dropped === null) this.countVersion(path);
  }

  whiteout(path: string, stamp = this.stamp()): void {
    const dropped = this.sameStampSize(path, stamp);
    if (dropped === null) this.roomForVersion(`deleting '${path}'`, path);
    const stored = this.storedBytes() - (dropped ?? 0);
    this.transaction(() => {
      this.replace(path, dropped !== null);
      this.sql.exec("INSERT INTO overlay (path, chunk, deleted, size, mode, data, stamp) VALUES (?, 0, 1, 0, 0, NULL, ?)", path, stamp);
    });
    this.stored = stored;
    if (dropped === null) this.countVersion(path);
  }

  /** Versions of every path stored: the current ones and the replaced ones, whiteouts included. */
  storedVersions(): number {
    this.versions ??= this.sql
      .exec<{ n: number }>(
        `SELECT (SELECT COUNT(*) FROM overlay WHERE chunk = 0) + (SELECT COUNT(*) FROM overlay_history WHERE chunk = 0) AS n`,
      )
      .one().n;
    return this.versions;
  }

  /** Characters (code points, as SQLite's LENGTH counts them) of the paths of every version stored. */
  storedPathChars(): number {
    this.pathChars ??= this.sql
      .exec<{ n: number }>(
        `SELECT (SELECT IFNULL(SUM(LENGTH(path)), 0) FROM overlay WHERE chunk = 0) + (SELECT IFNULL(SUM(LENGTH(path)), 0) FROM overlay_history WHERE chunk = 0) AS n`,
      )
      .one().n;
    return this.pathChars;
  }

  private roomForVersion(change: string, path: string): void {
    if (this.storedVersions() >= this.maxVersions) {
      throw new WorkspaceError(
        "workspace_full",
        `${change} would pass the ${this.maxVersions} file versions this session's workspace changes may hold (replaced versions and deletions included)`,
      );
    }
    const held = this.storedPathChars();
    if (held + characterCount(path) > this.maxPathChars) {
      throw new WorkspaceError(
        "workspace_full",
        `${change} would pass the ${this.maxPathChars} characters of paths this session's workspace changes may hold (${held} held, replaced versions and deletions included)`,
      );
    }
  }

  /**
   * Every change with a stamp at or below `maxStamp`, replaced ones included, in the order they were
   * made, without their bytes (`versionBytes` reads them): replaying them in order onto an empty
   * overlay gives the overlay as it was at that stamp.
   */
  versionRefsUpTo(maxStamp: number): OverlayVersionRef[] {
    type Row = { path: string; deleted: number; size: number; mode: number; stamp: number };
    const history = this.sql
      .exec<Row & { version: number }>(
        "SELECT version, path, deleted, size, mode, stamp FROM overlay_history WHERE stamp <= ? AND chunk = 0 ORDER BY version",
        maxStamp,
      )
      .toArray()
      .map((row) => toRef(row, row.version));
    const current = this.sql
      .exec<Row>("SELECT path, deleted, size, mode, stamp FROM overlay WHERE stamp <= ? AND chunk = 0 ORDER BY stamp, path", maxStamp)
      .toArray()
      .map((row) => toRef(row, null));
    // History rows were replaced before the current rows were written; among equal stamps that order holds (a stable sort).
    return [...history, ...current].sort((a, b) => a.stamp - b.stamp);
  }

  /**
   * The bytes of a listed change, or null when they are no longer there as listed. A current change
   * replaced since it was listed is found in the history (the newest version of its path and stamp).
   */
  versionBytes(ref: OverlayVersionRef): Uint8Array | null {
    if (ref.deleted) return new Uint8Array(0);
    const read = (rows: { data: ArrayBuffer | null }[]) => {
      const bytes = concat(rows.map((row) => new Uint8Array(row.data ?? new ArrayBuffer(0))));
      return rows.length > 0 && bytes.byteLength === ref.size ? bytes : null;
    };
    if (ref.version === null) {
      const current = read(
        this.sql
          .exec<{ data: ArrayBuffer | null }>(
            "SELECT data FROM overlay WHERE path = ? AND stamp = ? AND deleted = 0 ORDER BY chunk",
            ref.path,
            ref.stamp,
          )
          .toArray(),
      );
      if (current) return current;
    }
    const version =
      ref.version ??
      this.sql
        .exec<{ v: number | null }>("SELECT MAX(version) AS v FROM overlay_history WHERE path = ? AND stamp = ?", ref.path, ref.stamp)
        .one().v;
    return read(
      this.sql
        .exec<{ data: ArrayBuffer | null }>("SELECT data FROM overlay_history WHERE version = ? AND deleted = 0 ORDER BY chunk", version)
        .toArray(),
    );
  }

  /**
   * Keeps `changes` as the ones at `from`, `from + 1`, ... of the sequence `attempt` sends in parts.
   * Attempts are kept apart: two retries of one fork may stage at once.
   */
  stage(attempt: string, from: number, changes: readonly StagedChange[]): void {
    this.transaction(() => {
      changes.forEach((change, i) => {
        this.sql.exec("DELETE FROM overlay_staged WHERE attempt = ? AND position = ?", attempt, from + i);
        for (const [chunk, data] of chunksOf(change.bytes)) {
          this.sql.exec(
            "INSERT INTO overlay_staged (attempt, position, chunk, path, deleted, size, mode, data, stamp_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            attempt,
            from + i,
            chunk,
            change.path,
            change.deleted ? 1 : 0,
            change.bytes.byteLength,
            change.mode,
            change.deleted ? null : data,
            change.stampKey,
          );
        }
      });
    });
  }

  /** Whether `attempt` staged exactly the changes at 0 .. count-1. */
  stagedComplete(attempt: string, count: number): boolean {
    const { n, last } = this.sql
      .exec<{ n: number; last: number | null }>(
        "SELECT COUNT(*) AS n, MAX(position) AS last FROM overlay_staged WHERE attempt = ? AND chunk = 0",
        attempt,
      )
      .one();
    return n === count && (count === 0 || last === count - 1);
  }

  /**
   * Applies the changes `attempt` staged, in order, as `put` and `whiteout` would, each stamped with
   * `stampOf(its stampKey)`, and empties the stage (other attempts' parts included). The bytes move
   * inside SQLite, never through memory.
   */
  applyStaged(attempt: string, stampOf: (stampKey: string | null) => number): void {
    this.transaction(() => {
      const staged = this.sql
        .exec<{ position: number; path: string; stamp_key: string | null }>(
          "SELECT position, path, stamp_key FROM overlay_staged WHERE attempt = ? AND chunk = 0 ORDER BY position",
          attempt,
        )
        .toArray();
      for (const { position, path, stamp_key } of staged) {
        const stamp = stampOf(stamp_key);
        this.replace(path, this.sameStampSize(path, stamp) !== null);
        this.sql.exec(
          `INSERT INTO overlay (path, chunk, deleted, size, mode, data, stamp)
           SELECT path, chunk, deleted, size, mode, data, ? FROM overlay_staged WHERE attempt = ? AND position = ?`,
          stamp,
          attempt,
          position,
        );
      }
      this.sql.exec("DELETE FROM overlay_staged");
    });
    this.stored = null;
    this.versions = null;
    this.pathChars = null;
  }

  /** Content bytes of every version stored: the current ones and the replaced ones. */
  storedBytes(): number {
    this.stored ??= this.sql
      .exec<{ n: number }>(
        `SELECT (SELECT IFNULL(SUM(size), 0) FROM overlay WHERE chunk = 0) + (SELECT IFNULL(SUM(size), 0) FROM overlay_history WHERE chunk = 0) AS n`,
      )
      .one().n;
    return this.stored;
  }

  /** The size of `path`'s current change when it was made at `stamp` (a whiteout: 0), else null. */
  private sameStampSize(path: string, stamp: number): number | null {
    const rows = this.sql
      .exec<{ size: number }>("SELECT size FROM overlay WHERE path = ? AND chunk = 0 AND stamp = ?", path, stamp)
      .toArray();
    return rows[0]?.size ?? null;
  }

  /** Adds a version of `path` to the counts `roomForVersion` computed. */
  private countVersion(path: string): void {
    this.versions! += 1;
    this.pathChars! += characterCount(path);
  }

  /** Clears `path`'s current change, if any, for a new one: moved to the history, or dropped when `drop`. */
  private replace(path: string, drop: boolean): void {
    this.replaced.set(path, (this.replaced.get(path) ?? 0) + 1);
    if (!drop) {
      const next = this.sql.exec<{ v: number }>("SELECT IFNULL(MAX(version), 0) + 1 AS v FROM overlay_history").one().v;
      this.sql.exec(
        `INSERT INTO overlay_history (version, chunk, path, deleted, size, mode, data, stamp)
         SELECT ?, chunk, path, deleted, size, mode, data, stamp FROM overlay WHERE path = ?`,
        next,
        path,
      );
    }
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

/** `bytes` in row-sized chunks, numbered from 0 (one empty chunk for no bytes). */
function* chunksOf(bytes: Uint8Array): Generator<[number, ArrayBuffer]> {
  const chunks = Math.max(1, Math.ceil(bytes.byteLength / OVERLAY_CHUNK_BYTES));
  for (let i = 0; i < chunks; i++) yield [i, bytes.slice(i * OVERLAY_CHUNK_BYTES, (i + 1) * OVERLAY_CHUNK_BYTES).buffer];
}

function toRef(
  row: { path: string; deleted: number; size: number; mode: number; stamp: number },
  version: number | null,
): OverlayVersionRef {
  return { path: row.path, deleted: row.deleted !== 0, mode: row.mode, size: row.size, stamp: row.stamp, version };
}

function toEntry(row: { path: string; deleted: number; size: number; mode: number }): OverlayEntry {
  return { path: row.path, deleted: row.deleted !== 0, size: row.size, mode: row.mode };
}
