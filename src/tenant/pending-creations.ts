import { ABANDONED_CREATION_MS } from "../domain/limits";

/** What a creation stores before it is listed: a session object, or a workspace's R2 objects under a prefix. */
export type CreationKind = "session" | "workspace";

export interface PendingCreation {
  kind: CreationKind;
  id: string;
  /** R2 objects to delete if it is abandoned (a workspace's prefix); null for a session, whose object removes its own. */
  r2Prefix: string | null;
}

/**
 * Sessions and workspaces announced before they store anything and not listed yet (table
 * `pending_creations`). Listing one ends its row; a row older than ABANDONED_CREATION_MS belongs to a
 * request that died between storing and listing (a crash, a Worker past its CPU limit), whose
 * storage nothing could reach or delete: the tenant's alarm removes it (`TenantDO.alarm`).
 */
export class PendingCreations {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS pending_creations (
      kind TEXT NOT NULL, id TEXT NOT NULL, r2_prefix TEXT, since_ms INTEGER NOT NULL, PRIMARY KEY (kind, id)
    )`);
    sql.exec(`CREATE INDEX IF NOT EXISTS pending_creations_by_age ON pending_creations (since_ms)`);
  }

  /** Announces a creation (a repeat keeps the first time: a retry finishes the same one). */
  expect(creation: PendingCreation, nowMs: number): void {
    this.sql.exec(
      `INSERT OR IGNORE INTO pending_creations (kind, id, r2_prefix, since_ms) VALUES (?, ?, ?, ?)`,
      creation.kind,
      creation.id,
      creation.r2Prefix,
      nowMs,
    );
  }

  /** Creations of `kind` announced and not listed yet: they count toward the tenant's bounds. */
  count(kind: CreationKind): number {
    return this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM pending_creations WHERE kind = ?`, kind).one().n;
  }

  /** `id` was announced and not listed yet. */
  has(kind: CreationKind, id: string): boolean {
    return this.sql.exec(`SELECT 1 FROM pending_creations WHERE kind = ? AND id = ?`, kind, id).toArray().length > 0;
  }

  /** Listed (or removed): nothing to clean up. */
  done(kind: CreationKind, id: string): void {
    this.sql.exec(`DELETE FROM pending_creations WHERE kind = ? AND id = ?`, kind, id);
  }

  /** Creations abandoned by `nowMs`, oldest first, at most `limit`. */
  abandoned(nowMs: number, limit: number): PendingCreation[] {
    return this.sql
      .exec<{ kind: CreationKind; id: string; r2_prefix: string | null }>(
        `SELECT kind, id, r2_prefix FROM pending_creations WHERE since_ms <= ? ORDER BY since_ms LIMIT ?`,
        nowMs - ABANDONED_CREATION_MS,
        limit,
      )
      .toArray()
      .map((r) => ({ kind: r.kind, id: r.id, r2Prefix: r.r2_prefix }));
  }

  /** When the oldest pending creation is abandoned, or null when there is none. */
  nextDeadline(): number | null {
    const row = this.sql.exec<{ since: number | null }>(`SELECT MIN(since_ms) AS since FROM pending_creations`).one();
    return row.since === null ? null : row.since + ABANDONED_CREATION_MS;
  }
}
