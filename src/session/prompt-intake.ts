import { type AgentEvent, failure, type IdGenerator, MAX_QUEUED_MESSAGES, ok, type PromptDelivery } from "../domain";
import type { RunOutcome } from "../runtime/agent-runtime";
import { forgetExpiredKeys, prepareKeyedRows } from "./keyed-rows";
import type { SeqEvent, StreamScope } from "./live-events";
import type { PromptQueue } from "./prompt-queue";
import type { RunSupervisor } from "./run-supervisor";
import type { SessionResult } from "./session-api";

/** An event as the intake writes it; the session adds eventId, sessionId and createdAt. */
export type IntakeEvent = AgentEvent extends infer E
  ? E extends AgentEvent
    ? Omit<E, "eventId" | "sessionId" | "createdAt">
    : never
  : never;

/** Where the answer to an accepted prompt streams from: the log after `afterSeq`, scoped to the run that carries it. */
export interface PromptStream extends StreamScope {
  runId: string;
  afterSeq: number;
}

export interface PromptIntakeDeps {
  sql: SqlStorage;
  queue: PromptQueue;
  runs: RunSupervisor;
  ids: IdGenerator;
  clock: () => number;
  lastSeq(): number;
  /** Appends one event (durable, then published); returns its seq. */
  appendEvent(event: IntakeEvent): number;
}

/** Stop reasons of a run that failed (it ended with agent_error). */
const FAILED = new Set(["ERROR", "TIMEOUT", "MAX_TURNS"]);

/**
 * Takes prompts into the session: starts a run when the slot is free, else answers by `whenBusy`
 * (refuse, steer the running run, or queue a follow-up), and moves the queue on when a run ends.
 * Every decision and its events happen in one synchronous step, so they commit together.
 *
 * Idempotent prompts: the stream a key started is remembered (table `prompt_requests`), recorded in
 * the same step as the run or queue entry, so a repeated request replays it and never starts a second.
 * Rows of keys the tenant has forgotten are deleted (`keyed-rows.ts`).
 */
export class PromptIntake {
  constructor(private readonly deps: PromptIntakeDeps) {
    deps.sql.exec(`CREATE TABLE IF NOT EXISTS prompt_requests (
      key TEXT PRIMARY KEY, run_id TEXT NOT NULL, after_seq INTEGER NOT NULL, skip_from_seq INTEGER, steer_message_id TEXT,
      stored_at_ms INTEGER
    )`);
    const columns = deps.sql.exec<{ name: string }>(`PRAGMA table_info(prompt_requests)`).toArray();
    if (!columns.some((c) => c.name === "steer_message_id")) deps.sql.exec(`ALTER TABLE prompt_requests ADD COLUMN steer_message_id TEXT`);
    prepareKeyedRows(deps.sql, "prompt_requests", deps.clock());
    // Follow-ups withdrawn before their run began: a resume of such a run's stream ends at the event.
    deps.sql.exec(`CREATE TABLE IF NOT EXISTS withdrawn_runs (run_id TEXT PRIMARY KEY, seq INTEGER NOT NULL)`);
  }

  /** The seq of the `queued_message_withdrawn` of a follow-up's run that never began, or null. */
  withdrawnAt(runId: string): number | null {
    return this.deps.sql.exec<{ seq: number }>(`SELECT seq FROM withdrawn_runs WHERE run_id = ?`, runId).toArray()[0]?.seq ?? null;
  }

  /**
   * Fills `withdrawn_runs` from a log written before the table existed: every `queued_message_withdrawn`
   * of a run that a `message_queued` announced as a follow-up's (a steer's names the run it steered).
   * `events` holds at least those two kinds, in seq order.
   */
  async fillWithdrawn(events: AsyncIterable<SeqEvent>): Promise<void> {
    const followUps = new Set<string>();
    for await (const { seq, event } of events) {
      if (event.type === "message_queued" && event.mode === "followUp") followUps.add(event.runId);
      if (event.type === "queued_message_withdrawn" && followUps.has(event.runId)) {
        this.deps.sql.exec(`INSERT OR IGNORE INTO withdrawn_runs (run_id, seq) VALUES (?, ?)`, event.runId, seq);
      }
    }
  }

  accept(delivery: PromptDelivery): SessionResult<PromptStream> {
    const { queue, runs } = this.deps;
    const key = delivery.idempotencyKey;
    if (key !== undefined) {
      const earlier = this.remembered(key);
      if (earlier) return ok(earlier);
    }
    // The queue only holds prompts while a run is active; an object that just restarted catches up here.
    if (!runs.active && queue.size() > 0) this.startNext(false);
    let stream: PromptStream;
    if (!runs.active) {
      const started = runs.start(delivery.command);
      if (!started.ok) return started;
      stream = { runId: started.value.runId, afterSeq: started.value.startSeq, skipFromSeq: null };
    } else if (delivery.whenBusy === "reject") {
      return failure(
        "session_busy",
        `a run (${runs.active.runId}) is active in this session; wait for it, abort it, or send with whenBusy "steer" or "followUp"`,
      );
    } else if (queue.size() >= MAX_QUEUED_MESSAGES) {
      return failure("queue_full", `the session already holds ${MAX_QUEUED_MESSAGES} queued messages; wait or withdraw some`);
    } else {
      stream = this.enqueue(delivery, runs.active.runId);
    }
    if (key !== undefined) this.remember(key, stream);
    return ok(stream);
  }

  /** Takes back an undelivered message; its stream (if it waited for a run of its own) ends. */
  withdraw(messageId: string): SessionResult<{ messageId: string }> {
    const queued = this.deps.queue.find(messageId);
    if (!queued) return failure("queued_message_not_found", `no undelivered queued message '${messageId}' in this session`);
    this.deps.queue.remove(messageId);
    this.withdrawn(messageId, queued.runId, "withdrawn_by_client", queued.mode === "followUp");
    this.queueUpdated();
    return ok({ messageId });
  }

  /** The steering messages for the running run, removed from the queue: the run appends them now. */
  takeSteering(): { messageId: string; text: string }[] {
    const steering = this.deps.queue.list("steer");
    if (steering.length === 0) return [];
    for (const s of steering) this.deps.queue.remove(s.messageId);
    this.queueUpdated();
    return steering.map((s) => ({ messageId: s.messageId, text: s.command.userText }));
  }

  /**
   * A run ended (or, after a restart, was closed as interrupted): steering it did not deliver becomes
   * a follow-up; after a failure the follow-ups that asked for it are withdrawn; the next follow-up
   * starts. Called in the same synchronous step as the run's end, so the slot is never seen free
   * while a follow-up waits.
   */
  runEnded(outcome: Pick<RunOutcome, "stopReason"> & { error?: unknown }): void {
    const { queue } = this.deps;
    let changed = false;
    for (const steer of queue.list("steer")) {
      const runId = this.deps.ids.next("run");
      queue.toFollowUp(steer.messageId, runId);
      this.deps.appendEvent({
        type: "message_queued",
        messageId: steer.messageId,
        mode: "followUp",
        runId,
        afterFailedRun: steer.afterFailedRun,
      });
      changed = true;
    }
    if (outcome.error !== undefined || FAILED.has(outcome.stopReason)) {
      for (const next of queue.list("followUp").filter((f) => f.afterFailedRun === "withdraw")) {
        queue.remove(next.messageId);
        this.withdrawn(next.messageId, next.runId, "previous_run_failed", true);
        changed = true;
      }
    }
    this.startNext(changed);
  }

  /** Whether a run will still produce events: it is active, or a queued follow-up's. */
  waiting(runId: string): boolean {
    return this.deps.runs.active?.runId === runId || this.deps.queue.hasRun(runId);
  }

  /**
   * Starts the oldest follow-up if the slot is free. The queue's new state is logged first (when it
   * changed, or `queueChanged` says it did already), then the run's `agent_started`: a follow-up's
   * stream, which skips to its run's start, begins there both when it is first read and when resumed.
   */
  private startNext(queueChanged: boolean): void {
    const next = this.deps.runs.active ? undefined : this.deps.queue.list("followUp")[0];
    if (next) this.deps.queue.remove(next.messageId);
    if (next || queueChanged) this.queueUpdated();
    if (next) this.deps.runs.start(next.command, { runId: next.runId, userMessageId: next.messageId });
  }

  private enqueue(delivery: PromptDelivery, activeRunId: string): PromptStream {
    const mode = delivery.whenBusy === "steer" ? "steer" : "followUp";
    const messageId = this.deps.ids.next("message");
    const runId = mode === "steer" ? activeRunId : this.deps.ids.next("run");
    const afterSeq = this.deps.lastSeq();
    this.deps.queue.add({
      messageId,
      mode,
      runId,
      command: delivery.command,
      afterFailedRun: delivery.afterFailedRun,
      queuedAfterSeq: afterSeq,
    });
    this.deps.appendEvent({ type: "message_queued", messageId, mode, runId, afterFailedRun: delivery.afterFailedRun });
    const updatedSeq = this.queueUpdated();
    // A steer joins the running run live (and follows its message if it becomes a follow-up); a
    // follow-up's stream skips the runs before its own.
    return mode === "steer"
      ? { runId, afterSeq, skipFromSeq: null, steerMessageId: messageId }
      : { runId, afterSeq, skipFromSeq: updatedSeq };
  }

  /** `followUp`: the message had a run of its own, which will now never begin (a steer's is the active run). */
  private withdrawn(messageId: string, runId: string, reason: "withdrawn_by_client" | "previous_run_failed", followUp: boolean): void {
    const seq = this.deps.appendEvent({ type: "queued_message_withdrawn", messageId, runId, reason });
    if (followUp) this.deps.sql.exec(`INSERT OR REPLACE INTO withdrawn_runs (run_id, seq) VALUES (?, ?)`, runId, seq);
  }

  private queueUpdated(): number {
    return this.deps.appendEvent({ type: "queue_updated", ...this.deps.queue.snapshot() });
  }

  private remembered(key: string): PromptStream | null {
    const row = this.deps.sql
      .exec<{ run_id: string; after_seq: number; skip_from_seq: number | null; steer_message_id: string | null }>(
        `SELECT run_id, after_seq, skip_from_seq, steer_message_id FROM prompt_requests WHERE key = ?`,
        key,
      )
      .toArray()[0];
    return row
      ? { runId: row.run_id, afterSeq: row.after_seq, skipFromSeq: row.skip_from_seq, steerMessageId: row.steer_message_id }
      : null;
  }

  private remember(key: string, stream: PromptStream): void {
    const now = this.deps.clock();
    forgetExpiredKeys(this.deps.sql, "prompt_requests", now);
    this.deps.sql.exec(
      `INSERT INTO prompt_requests (key, run_id, after_seq, skip_from_seq, steer_message_id, stored_at_ms) VALUES (?, ?, ?, ?, ?, ?)`,
      key,
      stream.runId,
      stream.afterSeq,
      stream.skipFromSeq,
      stream.steerMessageId ?? null,
      now,
    );
  }
}
