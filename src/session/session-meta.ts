import { z } from "zod";
import { isoTime, nonBlank } from "../domain";

/** A session's descriptive record: stored in the DO and mirrored to R2 as session.json. */
export const SessionMeta = z.strictObject({
  id: nonBlank,
  workspaceId: z.string().nullable(),
  projectId: z.string().nullable(),
  title: z.string().nullable(),
  createdAt: isoTime,
  updatedAt: isoTime,
});
export type SessionMeta = z.infer<typeof SessionMeta>;

/** The meta plus the tenant that owns the session (null when auth is off); the owner stays server-side. */
export interface OwnedSessionMeta extends SessionMeta {
  owner: string | null;
}

/** Whether this object's storage holds a session; a read that creates nothing. */
export function sessionTableExists(sql: SqlStorage): boolean {
  return sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'session'`).toArray().length > 0;
}

export class SessionMetaTable {
  /**
   * The newest message, once one is appended or found in the log: the parent of the next message and
   * `updatedAt`. Kept in memory (a row UPDATE per message cost as much as the append itself) and
   * written to the row by `saveHead`; after a restart it is read back from the log (`restoreHead`).
   */
  private head: { id: string; createdAt: string } | null = null;

  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS session (
      id TEXT PRIMARY KEY, workspace_id TEXT, project_id TEXT, title TEXT, owner TEXT,
      created_at TEXT NOT NULL, updated_at TEXT NOT NULL, last_message_id TEXT
    )`);
  }

  get(): OwnedSessionMeta | null {
    const row = this.sql
      .exec<{
        id: string;
        workspace_id: string | null;
        project_id: string | null;
        title: string | null;
        owner: string | null;
        created_at: string;
        updated_at: string;
      }>(`SELECT * FROM session LIMIT 1`)
      .toArray()[0];
    if (!row) return null;
    return {
      id: row.id,
      workspaceId: row.workspace_id,
      projectId: row.project_id,
      title: row.title,
      owner: row.owner,
      createdAt: row.created_at,
      updatedAt: this.head?.createdAt ?? row.updated_at,
    };
  }

  insert(meta: OwnedSessionMeta): void {
    this.sql.exec(
      `INSERT INTO session (id, workspace_id, project_id, title, owner, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      meta.id,
      meta.workspaceId,
      meta.projectId,
      meta.title,
      meta.owner,
      meta.createdAt,
      meta.updatedAt,
    );
  }

  setTitle(title: string | null): void {
    this.sql.exec(`UPDATE session SET title = ?`, title);
  }

  /** The id of the newest message: the parent of the next one. */
  lastMessageId(): string | null {
    if (this.head) return this.head.id;
    return this.sql.exec<{ id: string | null }>(`SELECT last_message_id AS id FROM session`).toArray()[0]?.id ?? null;
  }

  /** Records the newest message, in memory: its id (the parent of the next one) and its time as `updatedAt`. */
  recordMessage(id: string, at: string): void {
    this.head = { id, createdAt: at };
  }

  /**
   * Takes the newest message from the log after a restart (`newest` is its JSON; null when the log has
   * none, or only flushed bodies from before the kept copy, when the row, written per message then, is right).
   */
  restoreHead(newest: string | null): void {
    if (newest === null) return;
    const { id, createdAt } = JSON.parse(newest) as { id: string; createdAt: string };
    this.head = { id, createdAt };
  }

  /** Brings the row up to date with the newest message (at each flush; the log stays the source of truth). */
  saveHead(): void {
    if (this.head) this.sql.exec(`UPDATE session SET last_message_id = ?, updated_at = ?`, this.head.id, this.head.createdAt);
  }
}

/** The public JSON form (no owner). */
export function publicMeta({ owner: _owner, ...meta }: OwnedSessionMeta): SessionMeta {
  return meta;
}
