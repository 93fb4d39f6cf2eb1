import { encodeCursor, IDEMPOTENCY_TTL_MS, type ListPosition, MAX_TENANT_WORKSPACE_BYTES, MAX_TENANT_WORKSPACES } from "../domain";
import { RowOrder } from "./row-order";

/** One workspace as its tenant's index lists it (what `GET /api/workspaces/:wid` answers). */
export interface WorkspaceListItem {
  workspaceId: string;
  files: number;
  bytes: number;
  createdAt: string;
}

/** A page of workspaces, newest first; `nextCursor` is null on the last page. */
export interface WorkspacePage {
  items: WorkspaceListItem[];
  nextCursor: string | null;
}

/** What `beginDeletion` answers: the deletion may go on, or these listed sessions still use the workspace (or project). */
export type WorkspaceDeletionStart = { ok: true } | { ok: false; sessions: string[]; count: number };

/** Sessions named in a refusal; `count` says how many there are in all. */
export const NAMED_SESSIONS = 5;

type Row = { position: number; id: string; files: number; bytes: number; created_at: string };

/**
 * The workspaces of one tenant, in its TenantDO's SQLite beside the session index: the list, and
 * the workspaces being or lately deleted. Beside the sessions so that "no session uses it" and "no
 * session may start using it" are one decision: a session is listed (`SessionIndex.add`) only if its
 * workspace has no deletion mark. The mark is set before the snapshot's objects go, so a deletion
 * that fails half-way is finished by DELETE again (`deletionPending`), and kept for an
 * Idempotency-Key's lifetime after it ends. Workspaces uploaded before the list existed are not in it.
 */
export class WorkspaceIndex {
  private readonly order: RowOrder;

  constructor(private readonly sql: SqlStorage) {
    this.order = new RowOrder(sql);
    sql.exec(
      `CREATE TABLE IF NOT EXISTS workspaces (id TEXT PRIMARY KEY, files INTEGER NOT NULL, bytes INTEGER NOT NULL, created_at TEXT NOT NULL)`,
    );
    sql.exec(`CREATE TABLE IF NOT EXISTS deleted_workspaces (id TEXT PRIMARY KEY, done INTEGER NOT NULL, at_ms INTEGER NOT NULL)`);
    sql.exec(`CREATE INDEX IF NOT EXISTS sessions_by_workspace ON sessions (workspace_id)`);
  }

  /**
   * Why no workspace may be uploaded: the tenant keeps MAX_TENANT_WORKSPACES, or MAX_TENANT_WORKSPACE_BYTES
   * of files in them (those being deleted included, and with the `pending` uploads under way); else null.
   */
  fullReason(pending: number): string | null {
    const row = this.sql.exec<{ n: number; bytes: number }>(`SELECT COUNT(*) AS n, IFNULL(SUM(bytes), 0) AS bytes FROM workspaces`).one();
    const n = row.n + pending;
    const bytes = row.bytes;
    if (n >= MAX_TENANT_WORKSPACES)
      return `this tenant keeps ${n} workspaces, as many as one tenant may (${MAX_TENANT_WORKSPACES}); delete workspaces to make room`;
    if (bytes >= MAX_TENANT_WORKSPACE_BYTES)
      return `this tenant's workspaces hold ${bytes} bytes of files, as much as one tenant may (${MAX_TENANT_WORKSPACE_BYTES}); delete workspaces to make room`;
    return null;
  }

  /** Lists a stored snapshot (an entry already there is kept; a deleted one is not listed again). */
  add(item: WorkspaceListItem): void {
    if (this.deleted(item.workspaceId)) return;
    if (this.sql.exec(`SELECT 1 FROM workspaces WHERE id = ?`, item.workspaceId).toArray().length > 0) return;
    this.sql.exec(
      `INSERT INTO workspaces (rowid, id, files, bytes, created_at) VALUES (?, ?, ?, ?, ?)`,
      this.order.next("workspaces"),
      item.workspaceId,
      item.files,
      item.bytes,
      item.createdAt,
    );
  }

  /** Newest first; `after` continues a listing (workspaces uploaded since then sort before it, so pages stay stable). */
  list(limit: number, after: ListPosition | null): WorkspacePage {
    const rows = this.sql
      .exec<Row>(
        `SELECT rowid AS position, * FROM workspaces ${after ? "WHERE rowid < ?" : ""} ORDER BY rowid DESC LIMIT ?`,
        ...(after ? [after.position] : []),
        limit + 1,
      )
      .toArray();
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      items: page.map((row) => ({ workspaceId: row.id, files: row.files, bytes: row.bytes, createdAt: row.created_at })),
      nextCursor: rows.length > limit && last ? encodeCursor({ position: last.position }) : null,
    };
  }

  /** Marks the workspace deleted, unless listed sessions (not being deleted themselves) still use it. */
  beginDeletion(workspaceId: string, nowMs: number): WorkspaceDeletionStart {
    const using = this.sql
      .exec<{ id: string }>(`SELECT id FROM sessions WHERE workspace_id = ? AND deleting = 0 ORDER BY rowid`, workspaceId)
      .toArray()
      .map((row) => row.id);
    if (using.length > 0) return { ok: false, sessions: using.slice(0, NAMED_SESSIONS), count: using.length };
    this.sql.exec(`DELETE FROM deleted_workspaces WHERE done = 1 AND at_ms <= ?`, nowMs - IDEMPOTENCY_TTL_MS);
    this.sql.exec(`INSERT OR REPLACE INTO deleted_workspaces (id, done, at_ms) VALUES (?, 0, ?)`, workspaceId, nowMs);
    return { ok: true };
  }

  /** Whether a deletion of the workspace began and has not ended (DELETE again finishes it). */
  deletionPending(workspaceId: string): boolean {
    return this.sql.exec(`SELECT 1 FROM deleted_workspaces WHERE id = ? AND done = 0`, workspaceId).toArray().length > 0;
  }

  /** The deletion has ended: unlisted now (a deletion that failed half-way stays listed, to be sent again). */
  finishDeletion(workspaceId: string, nowMs: number): void {
    this.sql.exec(`UPDATE deleted_workspaces SET done = 1, at_ms = ? WHERE id = ?`, nowMs, workspaceId);
    this.sql.exec(`DELETE FROM workspaces WHERE id = ?`, workspaceId);
  }

  /** Whether a session may no longer be opened on the workspace. */
  deleted(workspaceId: string): boolean {
    return this.sql.exec(`SELECT 1 FROM deleted_workspaces WHERE id = ?`, workspaceId).toArray().length > 0;
  }
}
