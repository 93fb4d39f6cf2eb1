import { IDEMPOTENCY_TTL_MS } from "../domain";

/** What `begin` answers: the deletion may go on, or these listed sessions still use the workspace. */
export type WorkspaceDeletionStart = { ok: true } | { ok: false; sessions: string[]; count: number };

/** Sessions named in a refusal; `count` says how many there are in all. */
const NAMED_SESSIONS = 5;

/**
 * The workspaces a tenant is deleting or has deleted, in its TenantDO's SQLite beside the session
 * index, so that "no session uses it" and "no session may start using it" are one decision: a
 * session is listed here (`SessionIndex.add`) only if its workspace has no mark. The mark is set
 * before the snapshot's objects go, so a deletion that fails half-way is finished by DELETE again
 * (`pending`), and kept for an Idempotency-Key's lifetime after it ends.
 */
export class WorkspaceDeletions {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS deleted_workspaces (id TEXT PRIMARY KEY, done INTEGER NOT NULL, at_ms INTEGER NOT NULL)`);
    sql.exec(`CREATE INDEX IF NOT EXISTS sessions_by_workspace ON sessions (workspace_id)`);
  }

  /** Marks the workspace deleted, unless listed sessions (not being deleted themselves) still use it. */
  begin(workspaceId: string, nowMs: number): WorkspaceDeletionStart {
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
  pending(workspaceId: string): boolean {
    return this.sql.exec(`SELECT 1 FROM deleted_workspaces WHERE id = ? AND done = 0`, workspaceId).toArray().length > 0;
  }

  finish(workspaceId: string, nowMs: number): void {
    this.sql.exec(`UPDATE deleted_workspaces SET done = 1, at_ms = ? WHERE id = ?`, nowMs, workspaceId);
  }

  /** Whether a session may no longer be opened on the workspace. */
  marked(workspaceId: string): boolean {
    return this.sql.exec(`SELECT 1 FROM deleted_workspaces WHERE id = ?`, workspaceId).toArray().length > 0;
  }
}
