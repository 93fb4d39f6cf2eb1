/**
 * Which run a session is executing. The in-memory slot makes "one run at a time" exact (checked and
 * taken synchronously, so two prompts cannot both start); the `runs` table remembers runs that were
 * still going when the object was evicted or crashed, so they can be closed on the next start.
 */
export interface ActiveRun {
  runId: string;
  controller: AbortController;
  /** The seq of the last record before the run began: its SSE stream replays from here. */
  startSeq: number;
}

export interface RunRow {
  runId: string;
  status: "running" | "finished";
  startedAt: string;
  endedAt: string | null;
  stopReason: string | null;
}

export class RunRegistry {
  private active: ActiveRun | null = null;

  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS runs (
      run_id TEXT PRIMARY KEY, status TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT, stop_reason TEXT
    )`);
  }

  current(): ActiveRun | null {
    return this.active;
  }

  /** Takes the slot, or returns null when a run is already active. */
  begin(runId: string, startSeq: number, startedAt: string): ActiveRun | null {
    if (this.active) return null;
    this.active = { runId, controller: new AbortController(), startSeq };
    this.sql.exec(`INSERT INTO runs (run_id, status, started_at) VALUES (?, 'running', ?)`, runId, startedAt);
    return this.active;
  }

  finish(runId: string, stopReason: string, endedAt: string): void {
    this.sql.exec(`UPDATE runs SET status = 'finished', ended_at = ?, stop_reason = ? WHERE run_id = ?`, endedAt, stopReason, runId);
    if (this.active?.runId === runId) this.active = null;
  }

  /** Runs marked running that no live object is executing: left behind by an eviction or crash. */
  orphaned(): string[] {
    return this.sql
      .exec<{ run_id: string }>(`SELECT run_id FROM runs WHERE status = 'running' ORDER BY started_at`)
      .toArray()
      .map((r) => r.run_id)
      .filter((id) => id !== this.active?.runId);
  }

  list(): RunRow[] {
    return this.sql
      .exec<{ run_id: string; status: "running" | "finished"; started_at: string; ended_at: string | null; stop_reason: string | null }>(
        `SELECT * FROM runs ORDER BY started_at`,
      )
      .toArray()
      .map((r) => ({ runId: r.run_id, status: r.status, startedAt: r.started_at, endedAt: r.ended_at, stopReason: r.stop_reason }));
  }
}
