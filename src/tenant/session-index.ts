import { z } from "zod";
import { isoTime, nonBlank } from "../domain";

/** One session as its tenant's index lists it. */
export const SessionIndexEntry = z.strictObject({
  id: nonBlank,
  workspaceId: z.string().nullable(),
  projectId: z.string().nullable(),
  title: z.string().nullable(),
  createdAt: isoTime,
});
export type SessionIndexEntry = z.infer<typeof SessionIndexEntry>;

/** Where a page of the list starts: after this session, in newest-first order. */
export interface SessionListPosition {
  createdAt: string;
  id: string;
}

/** One page of a tenant's sessions, newest first, and where the next page starts (null: this was the last). */
export interface SessionPage {
  items: SessionIndexEntry[];
  next: SessionListPosition | null;
}

type IndexRow = { id: string; workspace_id: string | null; project_id: string | null; title: string | null; created_at: string };

const entryOf = (row: IndexRow): SessionIndexEntry => ({
  id: row.id,
  workspaceId: row.workspace_id,
  projectId: row.project_id,
  title: row.title,
  createdAt: row.created_at,
});

/**
 * The sessions of one tenant, in its TenantDO's SQLite. Every session route asks it first, so an id
 * that was never created (or belongs to someone else) is answered without touching, and so creating,
 * a session object.
 */
export class SessionIndex {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS sessions (
      id TEXT PRIMARY KEY, workspace_id TEXT, project_id TEXT, title TEXT, created_at TEXT NOT NULL
    )`);
    sql.exec(`CREATE INDEX IF NOT EXISTS sessions_newest ON sessions (created_at DESC, id DESC)`);
    // A project exists for a tenant once one of its sessions names it.
    sql.exec(`CREATE TABLE IF NOT EXISTS projects (id TEXT PRIMARY KEY, created_at TEXT NOT NULL)`);
  }

  add(entry: SessionIndexEntry): void {
    if (entry.projectId) this.sql.exec(`INSERT OR IGNORE INTO projects (id, created_at) VALUES (?, ?)`, entry.projectId, entry.createdAt);
    this.sql.exec(
      `INSERT OR REPLACE INTO sessions (id, workspace_id, project_id, title, created_at) VALUES (?, ?, ?, ?, ?)`,
      entry.id,
      entry.workspaceId,
      entry.projectId,
      entry.title,
      entry.createdAt,
    );
  }

  hasProject(id: string): boolean {
    return this.sql.exec(`SELECT 1 FROM projects WHERE id = ?`, id).toArray().length > 0;
  }

  get(id: string): SessionIndexEntry | null {
    const row = this.sql.exec<IndexRow>(`SELECT * FROM sessions WHERE id = ?`, id).toArray()[0];
    return row ? entryOf(row) : null;
  }

  /** Up to `limit` sessions, newest first (ties by id), starting after `after`. */
  list(limit: number, after: SessionListPosition | null): SessionPage {
    const rows = after
      ? this.sql
          .exec<IndexRow>(
            `SELECT * FROM sessions WHERE created_at < ? OR (created_at = ? AND id < ?) ORDER BY created_at DESC, id DESC LIMIT ?`,
            after.createdAt,
            after.createdAt,
            after.id,
            limit + 1,
          )
          .toArray()
      : this.sql.exec<IndexRow>(`SELECT * FROM sessions ORDER BY created_at DESC, id DESC LIMIT ?`, limit + 1).toArray();
    const items = rows.slice(0, limit).map(entryOf);
    const last = items[items.length - 1];
    return { items, next: rows.length > limit && last ? { createdAt: last.createdAt, id: last.id } : null };
  }
}
