import { AgentPromptCommand } from "../domain";

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
  /** The id of the run's prompt message. */
  userMessageId: string;
}

/** A run as the `runs` table remembers it. */
export interface StoredRun {
  runId: string;
  /** Its end was recorded (it may still lack `endSeq`: see `find`). */
  finished: boolean;
  startSeq: number;
  endSeq: number | null;
  /**
   * The seq of the run's trace end (`span_end` of the run, the last record of the run's own: only
   * verdicts on it follow); null while it runs, and for runs whose trace ended before this was kept.
   */
  traceEndSeq: number | null;
  command: AgentPromptCommand | null;
  /** Null for runs of older objects. */
  userMessageId: string | null;
}

/** A run the table says is running but no live object executes. */
export interface OrphanedRun {
  runId: string;
  startSeq: number;
}

export class RunRegistry {
  private active: ActiveRun | null = null;

  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS runs (
      run_id TEXT PRIMARY KEY, status TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT, stop_reason TEXT,
      start_seq INTEGER NOT NULL DEFAULT 0
    )`);
    // Objects created before runs remembered where they started.
    const columns = sql.exec<{ name: string }>(`PRAGMA table_info(runs)`).toArray();
    if (!columns.some((c) => c.name === "start_seq")) sql.exec(`ALTER TABLE runs ADD COLUMN start_seq INTEGER NOT NULL DEFAULT 0`);
    // The prompt command, so a run can be replayed (AWTL); absent for runs of older objects.
    if (!columns.some((c) => c.name === "command")) sql.exec(`ALTER TABLE runs ADD COLUMN command TEXT`);
    // The seq of the run's terminal event: a stream of the run resumed after it has nothing more to send.
    if (!columns.some((c) => c.name === "end_seq")) sql.exec(`ALTER TABLE runs ADD COLUMN end_seq INTEGER`);
    // The id its prompt is stored under (announced by message_queued for a queued one): a run cut off
    // before it logged its prompt logs it under this id when it is closed.
    if (!columns.some((c) => c.name === "user_message_id")) sql.exec(`ALTER TABLE runs ADD COLUMN user_message_id TEXT`);
    // Where its trace ended: a verdict reads the run's trace up to there, not every verdict since (hunt 53).
    if (!columns.some((c) => c.name === "trace_end_seq")) sql.exec(`ALTER TABLE runs ADD COLUMN trace_end_seq INTEGER`);
    // The newest run and the run after a seq, read at every run's start and by GET .../:id: without
    // it both scan every run (and the newest command sorted them all; 10,000 runs: 20 MB of commands).
    sql.exec(`CREATE INDEX IF NOT EXISTS runs_by_start ON runs (start_seq)`);
  }

  current(): ActiveRun | null {
    return this.active;
  }

  /** Takes the slot, or returns null when a run is already active. */
  begin(runId: string, userMessageId: string, startSeq: number, startedAt: string, command: AgentPromptCommand): ActiveRun | null {
    if (this.active) return null;
    this.active = { runId, controller: new AbortController(), startSeq, userMessageId };
    this.sql.exec(
      `INSERT INTO runs (run_id, status, started_at, start_seq, command, user_message_id) VALUES (?, 'running', ?, ?, ?, ?)`,
      runId,
      startedAt,
      startSeq,
      JSON.stringify(command),
      userMessageId,
    );
    return this.active;
  }

  /**
   * A run of this session (running or finished), with the seq it started after, the seq of its
   * terminal event (null while it runs, and for runs of older objects until the log is read for it),
   * its prompt command and the id of its prompt's message.
   */
  find(runId: string): StoredRun | null {
    const row = this.sql
      .exec<{
        status: string;
        start_seq: number;
        end_seq: number | null;
        trace_end_seq: number | null;
        command: string | null;
        user_message_id: string | null;
      }>(`SELECT status, start_seq, end_seq, trace_end_seq, command, user_message_id FROM runs WHERE run_id = ?`, runId)
      .toArray()[0];
    if (!row) return null;
    const command = row.command ? AgentPromptCommand.parse(JSON.parse(row.command)) : null;
    return {
      runId,
      finished: row.status === "finished",
      startSeq: row.start_seq,
      endSeq: row.end_seq,
      traceEndSeq: row.trace_end_seq,
      command,
      userMessageId: row.user_message_id,
    };
  }

  /**
   * The start of the first run that started after `startSeq`, or null. Runs do not overlap, so a
   * run's terminal event lies at or before it: the bound of a lookup of an older run's end.
   */
  nextStartSeq(startSeq: number): number | null {
    return this.sql.exec<{ seq: number | null }>(`SELECT MIN(start_seq) AS seq FROM runs WHERE start_seq > ?`, startSeq).one().seq;
  }

  /**
   * The last seq a finished run's trace may hold: its `traceEndSeq`, or, for a run of an older object
   * that kept none, the next run's start (a run's trace is written while it runs, before the next
   * one starts); null for the newest such run (its trace lies anywhere up to the log's end). The
   * first read of such a run's trace keeps its end (`traceEndFound`).
   */
  traceBound(run: StoredRun): number | null {
    return run.traceEndSeq ?? this.nextStartSeq(run.startSeq);
  }

  /** The run's trace end, met in its trace, for a run that kept none (of an older object). */
  traceEndFound(runId: string, seq: number): void {
    this.sql.exec(`UPDATE runs SET trace_end_seq = ? WHERE run_id = ? AND trace_end_seq IS NULL`, seq, runId);
  }

  /** The start of the newest run (0 when there is none): what follows it lies outside any earlier run. */
  lastStartSeq(): number {
    return this.sql.exec<{ seq: number }>(`SELECT IFNULL(MAX(start_seq), 0) AS seq FROM runs`).one().seq;
  }

  /** The run's terminal event was stored at `seq`. */
  ended(runId: string, seq: number): void {
    this.sql.exec(`UPDATE runs SET end_seq = ? WHERE run_id = ?`, seq, runId);
  }

  /** The run's trace ended (`span_end` of the run) at `seq`. */
  traceEnded(runId: string, seq: number): void {
    this.sql.exec(`UPDATE runs SET trace_end_seq = ? WHERE run_id = ?`, seq, runId);
  }

  /** Whether a run's prompt asked for a model whose name starts with `prefix` (the replay model's `replay:`). */
  hasRunOfModel(prefix: string): boolean {
    return (
      this.sql.exec(`SELECT 1 FROM runs WHERE substr(json_extract(command, '$.model'), 1, length(?1)) = ?1 LIMIT 1`, prefix).toArray()
        .length > 0
    );
  }

  /** The prompt command of the newest run that recorded one: which model and window the session uses now. */
  latestCommand(): AgentPromptCommand | null {
    const row = this.sql
      .exec<{ command: string }>(`SELECT command FROM runs WHERE command IS NOT NULL ORDER BY start_seq DESC, rowid DESC LIMIT 1`)
      .toArray()[0];
    return row ? AgentPromptCommand.parse(JSON.parse(row.command)) : null;
  }

  finish(runId: string, stopReason: string, endedAt: string): void {
    this.sql.exec(`UPDATE runs SET status = 'finished', ended_at = ?, stop_reason = ? WHERE run_id = ?`, endedAt, stopReason, runId);
    if (this.active?.runId === runId) this.active = null;
  }

  /** Runs marked running that no live object is executing: left behind by an eviction or crash. */
  orphaned(): OrphanedRun[] {
    return this.sql
      .exec<{ run_id: string; start_seq: number }>(`SELECT run_id, start_seq FROM runs WHERE status = 'running' ORDER BY started_at`)
      .toArray()
      .filter((r) => r.run_id !== this.active?.runId)
      .map((r) => ({ runId: r.run_id, startSeq: r.start_seq }));
  }
}
