import { z } from "zod";
import { encodeCursor, IDEMPOTENCY_TTL_MS, isoTime, type ListPosition, MAX_TENANT_SESSIONS, nonBlank } from "../domain";
import { RowOrder } from "./row-order";

/** One session as its tenant's index lists it. */
export const SessionIndexEntry = z.strictObject({
  id: nonBlank,
  workspaceId: z.string().nullable(),
  projectId: z.string().nullable(),
  title: z.string().nullable(),
  createdAt: isoTime,
});
export type SessionIndexEntry = z.infer<typeof SessionIndexEntry>;

/** What a session reports about itself; applied only if newer (`version`: its log seq when it reported). */
export interface SessionSummaryReport {
  version: number;
  title: string | null;
  updatedAt: string;
  status: "idle" | "running";
  counts: { messages: number; events: number };
}

/** A session as `GET /api/sessions` lists it. */
export interface SessionSummary extends SessionIndexEntry {
  updatedAt: string;
  status: "idle" | "running";
  counts: { messages: number; events: number };
}

/** A page of summaries, newest first; `nextCursor` is null on the last page. */
export interface SessionPage {
  items: SessionSummary[];
  nextCursor: string | null;
}

type Row = {
  position: number;
  id: string;
  workspace_id: string | null;
  project_id: string | null;
  title: string | null;
  created_at: string;
  updated_at: string | null;
  status: string | null;
  counts: string | null;
};

/**
 * The sessions of one tenant, in its TenantDO's SQLite. Every session route asks it first, so an id
 * that was never created (or belongs to someone else) is answered without touching, and so creating,
 * a session object. It also serves the list: each row carries the session's last reported summary.
 * A session being deleted is marked first (`deleting`): unlisted and not found, but still known to
 * DELETE, so a deletion that failed half-way can be finished by calling DELETE again.
 */
export class SessionIndex {
  private readonly order: RowOrder;

  constructor(private readonly sql: SqlStorage) {
    this.order = new RowOrder(sql);
    sql.exec(`CREATE TABLE IF NOT EXISTS sessions (
      id TEXT PRIMARY KEY, workspace_id TEXT, project_id TEXT, title TEXT, created_at TEXT NOT NULL
    )`);
    // Summaries and deletion marks came later: add the columns to older indexes.
    const columns = new Set(
      sql
        .exec<{ name: string }>(`PRAGMA table_info(sessions)`)
        .toArray()
        .map((c) => c.name),
    );
    const added: [string, string][] = [
      ["updated_at", "TEXT"],
      ["status", "TEXT"],
      ["counts", "TEXT"],
      ["summary_version", "INTEGER NOT NULL DEFAULT 0"],
      ["deleting", "INTEGER NOT NULL DEFAULT 0"],
    ];
    for (const [name, type] of added) if (!columns.has(name)) sql.exec(`ALTER TABLE sessions ADD COLUMN ${name} ${type}`);
    sql.exec(`CREATE INDEX IF NOT EXISTS sessions_by_project ON sessions (project_id)`);
    // Deleted ids, for as long as an Idempotency-Key lives: a repeat of the request that created one
    // must not bring it back.
    sql.exec(`CREATE TABLE IF NOT EXISTS deleted_sessions (id TEXT PRIMARY KEY, deleted_at_ms INTEGER NOT NULL)`);
    // A project exists for a tenant once one of its sessions names it.
    sql.exec(`CREATE TABLE IF NOT EXISTS projects (id TEXT PRIMARY KEY, created_at TEXT NOT NULL)`);
    // Deletion marks came later: add the column to older indexes.
    if (
      !sql
        .exec<{ name: string }>(`PRAGMA table_info(projects)`)
        .toArray()
        .some((c) => c.name === "deleting")
    )
      sql.exec(`ALTER TABLE projects ADD COLUMN deleting INTEGER NOT NULL DEFAULT 0`);
  }

  /**
   * Why session `id` may not be added: the tenant keeps MAX_TENANT_SESSIONS with the `pending` ones
   * being made (those being deleted included); else null, also for an id already listed (a retry).
   */
  fullReason(id: string, pending: number): string | null {
    if (this.sql.exec(`SELECT 1 FROM sessions WHERE id = ?`, id).toArray().length > 0) return null;
    const n = this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM sessions`).one().n + pending;
    return n < MAX_TENANT_SESSIONS
      ? null
      : `this tenant keeps ${n} sessions, as many as one tenant may (${MAX_TENANT_SESSIONS}); delete sessions to make room`;
  }

  /** Lists a session; `summary` when it starts with content (a fork). An entry already there is kept. */
  add(entry: SessionIndexEntry, summary?: Pick<SessionSummary, "updatedAt" | "counts">): void {
    if (entry.projectId) this.sql.exec(`INSERT OR IGNORE INTO projects (id, created_at) VALUES (?, ?)`, entry.projectId, entry.createdAt);
    if (this.sql.exec(`SELECT 1 FROM sessions WHERE id = ?`, entry.id).toArray().length > 0) return;
    this.sql.exec(
      `INSERT INTO sessions (rowid, id, workspace_id, project_id, title, created_at, updated_at, status, counts)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'idle', ?)`,
      this.order.next("sessions"),
      entry.id,
      entry.workspaceId,
      entry.projectId,
      entry.title,
      entry.createdAt,
      summary?.updatedAt ?? entry.createdAt,
      JSON.stringify(summary?.counts ?? { messages: 0, events: 0 }),
    );
  }

  /** "listed" once a session named the project, "deleting" while a deletion of it runs or failed half-way, else null. */
  projectState(id: string): "listed" | "deleting" | null {
    const row = this.sql.exec<{ deleting: number }>(`SELECT deleting FROM projects WHERE id = ?`, id).toArray()[0];
    return row ? (row.deleting ? "deleting" : "listed") : null;
  }

  /**
   * Sessions whose cases go to the project: those naming it and, `orWithoutProject` (the default
   * project), those naming none. Sessions being deleted count too: one whose deletion failed half-way
   * still delivers its cases. The first `named` by age, and how many in all.
   */
  learningInto(projectId: string, orWithoutProject: boolean, named: number): { sessions: string[]; count: number } {
    const where = `project_id = ?${orWithoutProject ? " OR project_id IS NULL" : ""}`;
    const count = this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM sessions WHERE ${where}`, projectId).one().n;
    const sessions = this.sql
      .exec<{ id: string }>(`SELECT id FROM sessions WHERE ${where} ORDER BY rowid LIMIT ?`, projectId, named)
      .toArray()
      .map((row) => row.id);
    return { sessions, count };
  }

  /** Marks the project as being deleted: its routes answer 404 until `endProjectDeletion`. */
  beginProjectDeletion(id: string, nowIso: string): void {
    this.sql.exec(`INSERT OR IGNORE INTO projects (id, created_at) VALUES (?, ?)`, id, nowIso);
    this.sql.exec(`UPDATE projects SET deleting = 1 WHERE id = ?`, id);
  }

  /** The deletion has ended: the project is no longer the tenant's, unless a session named it meanwhile (it is listed again, empty). */
  endProjectDeletion(id: string): void {
    if (this.sql.exec(`SELECT 1 FROM sessions WHERE project_id = ? LIMIT 1`, id).toArray().length > 0) {
      this.sql.exec(`UPDATE projects SET deleting = 0 WHERE id = ?`, id);
    } else {
      this.sql.exec(`DELETE FROM projects WHERE id = ?`, id);
    }
  }

  /** The session, unless it is unknown or being deleted (`includeDeleting` for DELETE itself). */
  get(id: string, includeDeleting = false): SessionIndexEntry | null {
    const row = this.sql.exec<Row & { deleting: number }>(`SELECT * FROM sessions WHERE id = ?`, id).toArray()[0];
    if (!row || (row.deleting && !includeDeleting)) return null;
    return { id: row.id, workspaceId: row.workspace_id, projectId: row.project_id, title: row.title, createdAt: row.created_at };
  }

  /** Newest first; `after` continues a listing (sessions created since then sort before it, so pages stay stable). */
  list(limit: number, after: ListPosition | null, projectId: string | null, orWithoutProject = false): SessionPage {
    const args: (string | number | null)[] = [];
    const walk = (project: string | null | undefined) => {
      const where = ["deleting = 0"];
      if (project === null) where.push("project_id IS NULL");
      if (project) where.push("project_id = ?");
      if (project) args.push(project);
      if (after) where.push("rowid < ?");
      if (after) args.push(after.position);
      args.push(limit + 1);
      return `SELECT rowid AS position, * FROM sessions WHERE ${where.join(" AND ")} ORDER BY rowid DESC LIMIT ?`;
    };
    // `orWithoutProject`: the project is the default one, where sessions created without one learn.
    // Two walks of the project index merged, not one `OR` (SQLite sorts every row an `OR` matches).
    const query =
      projectId && orWithoutProject
        ? `SELECT * FROM (${walk(projectId)}) UNION ALL SELECT * FROM (${walk(null)}) ORDER BY position DESC LIMIT ?`
        : walk(projectId ?? undefined);
    if (projectId && orWithoutProject) args.push(limit + 1);
    const rows = this.sql.exec<Row>(query, ...args).toArray();
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return { items: page.map(toSummary), nextCursor: rows.length > limit && last ? encodeCursor({ position: last.position }) : null };
  }

  /** Records a session's report, unless a newer one was recorded already (reports may arrive out of order). */
  report(id: string, summary: SessionSummaryReport): void {
    this.sql.exec(
      `UPDATE sessions SET title = ?, updated_at = ?, status = ?, counts = ?, summary_version = ? WHERE id = ? AND summary_version <= ?`,
      summary.title,
      summary.updatedAt,
      summary.status,
      JSON.stringify(summary.counts),
      summary.version,
      id,
      summary.version,
    );
  }

  setTitle(id: string, title: string | null): void {
    this.sql.exec(`UPDATE sessions SET title = ? WHERE id = ?`, title, id);
  }

  markDeleting(id: string): void {
    this.sql.exec(`UPDATE sessions SET deleting = 1 WHERE id = ?`, id);
  }

  remove(id: string, nowMs: number): void {
    this.sql.exec(`DELETE FROM sessions WHERE id = ?`, id);
    this.sql.exec(`DELETE FROM deleted_sessions WHERE deleted_at_ms <= ?`, nowMs - IDEMPOTENCY_TTL_MS);
    this.sql.exec(`INSERT OR REPLACE INTO deleted_sessions (id, deleted_at_ms) VALUES (?, ?)`, id, nowMs);
  }

  /** Whether the session was deleted within an Idempotency-Key's lifetime. */
  wasDeleted(id: string, nowMs: number): boolean {
    return (
      this.sql.exec(`SELECT 1 FROM deleted_sessions WHERE id = ? AND deleted_at_ms > ?`, id, nowMs - IDEMPOTENCY_TTL_MS).toArray().length >
      0
    );
  }
}

function toSummary(row: Row): SessionSummary {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    projectId: row.project_id,
    title: row.title,
    createdAt: row.created_at,
    updatedAt: row.updated_at ?? row.created_at,
    status: row.status === "running" ? "running" : "idle",
    counts: row.counts ? (JSON.parse(row.counts) as SessionSummary["counts"]) : { messages: 0, events: 0 },
  };
}
