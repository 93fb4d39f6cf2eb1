import { type AfterFailedRun, AgentPromptCommand, type QueueMode } from "../domain";

/** A prompt that arrived while a run was busy and has not been delivered yet. */
export interface QueuedPrompt {
  messageId: string;
  mode: QueueMode;
  /** The run that will carry it: the running one for `steer`, its own (not yet started) for `followUp`. */
  runId: string;
  command: AgentPromptCommand;
  afterFailedRun: AfterFailedRun;
  /** The seq before its `message_queued` event: its SSE stream replays from here. */
  queuedAfterSeq: number;
}

type Row = {
  message_id: string;
  mode: QueueMode;
  run_id: string;
  command: string;
  after_failed_run: AfterFailedRun;
  queued_after_seq: number;
};

/**
 * The session's durable queue of undelivered prompts (table `prompt_queue`), in arrival order. A
 * message leaves it when it is delivered (appended to the log as a user message, in the same
 * synchronous step) or withdrawn; so the queue plus the log always hold every accepted prompt once.
 */
export class PromptQueue {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS prompt_queue (
      arrival INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT NOT NULL UNIQUE, mode TEXT NOT NULL,
      run_id TEXT NOT NULL, command TEXT NOT NULL, after_failed_run TEXT NOT NULL, queued_after_seq INTEGER NOT NULL
    )`);
  }

  add(prompt: QueuedPrompt): void {
    this.sql.exec(
      `INSERT INTO prompt_queue (message_id, mode, run_id, command, after_failed_run, queued_after_seq) VALUES (?, ?, ?, ?, ?, ?)`,
      prompt.messageId,
      prompt.mode,
      prompt.runId,
      JSON.stringify(prompt.command),
      prompt.afterFailedRun,
      prompt.queuedAfterSeq,
    );
  }

  size(): number {
    return this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM prompt_queue`).one().n;
  }

  /** Every queued prompt of one mode, oldest first. */
  list(mode: QueueMode): QueuedPrompt[] {
    return this.sql.exec<Row>(`SELECT * FROM prompt_queue WHERE mode = ? ORDER BY arrival`, mode).toArray().map(fromRow);
  }

  find(messageId: string): QueuedPrompt | null {
    const row = this.sql.exec<Row>(`SELECT * FROM prompt_queue WHERE message_id = ?`, messageId).toArray()[0];
    return row ? fromRow(row) : null;
  }

  /** Whether a run id is still waiting in the queue (a follow-up not started yet). */
  hasRun(runId: string): boolean {
    return this.sql.exec(`SELECT 1 FROM prompt_queue WHERE run_id = ? AND mode = 'followUp'`, runId).toArray().length > 0;
  }

  remove(messageId: string): void {
    this.sql.exec(`DELETE FROM prompt_queue WHERE message_id = ?`, messageId);
  }

  /** A steer message its run ended without delivering becomes a follow-up with a run of its own. */
  toFollowUp(messageId: string, runId: string): void {
    this.sql.exec(`UPDATE prompt_queue SET mode = 'followUp', run_id = ? WHERE message_id = ?`, runId, messageId);
  }

  clear(): void {
    this.sql.exec(`DELETE FROM prompt_queue`);
  }

  /** The undelivered message ids, as `queue_updated` and `GET /api/sessions/:id` show them. */
  snapshot(): { steering: string[]; followUp: string[] } {
    return { steering: this.list("steer").map((p) => p.messageId), followUp: this.list("followUp").map((p) => p.messageId) };
  }
}

function fromRow(row: Row): QueuedPrompt {
  return {
    messageId: row.message_id,
    mode: row.mode,
    runId: row.run_id,
    command: AgentPromptCommand.parse(JSON.parse(row.command)),
    afterFailedRun: row.after_failed_run,
    queuedAfterSeq: row.queued_after_seq,
  };
}
