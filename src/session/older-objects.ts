import type { AgentEvent, AgentMessage } from "../domain";
import { runLeftovers } from "../runtime/run-closing";
import { decodeEventLine, decodeMessageLine } from "./jsonl";
import type { SeqEvent } from "./live-events";
import { readLog, readLogLines } from "./log-reader";
import type { Backfills } from "./log-tables";
import type { PromptIntake } from "./prompt-intake";
import type { RunRegistry, StoredRun } from "./run-registry";
import type { SegmentBucket } from "./segment-flusher";
import type { SessionLog } from "./session-log";

export interface OlderObjectsDeps {
  sessionId: string;
  log: SessionLog;
  bucket: SegmentBucket;
  /** Registered when the object opened, with the log's last seq then. */
  backfills: Backfills;
  registry: RunRegistry;
  intake: PromptIntake;
}

/**
 * What a session object written by an older version lacks, looked up in its log when first needed
 * (see `Backfills`): a finished run's end, withdrawn follow-ups, a manual compaction left open,
 * tool calls a fork left open, and whether the tenant's list was last told by older code.
 */
export class OlderObjects {
  /** The one-time fill of `withdrawn_runs` under way (requests that need it wait for the same one). */
  private withdrawnFill: Promise<void> | null = null;

  constructor(private readonly deps: OlderObjectsDeps) {}

  /**
   * The seq of a finished run's terminal event, or null. A run of an older object (before
   * `runs.end_seq`) has it looked up in the log once, between its start and the next run's.
   */
  async endSeqOf(run: StoredRun): Promise<number | null> {
    const { backfills, registry, log } = this.deps;
    if (run.endSeq !== null || !run.finished || run.startSeq >= backfills.pending("runs.end_seq")) return run.endSeq;
    const until = registry.nextStartSeq(run.startSeq) ?? log.lastSeq();
    for await (const { seq, event } of this.eventsHolding(run.runId, run.startSeq, until)) {
      if ((event.type === "agent_completed" || event.type === "agent_error") && event.runId === run.runId) {
        registry.ended(run.runId, seq);
        return seq;
      }
    }
    return null;
  }

  /**
   * The seq of a withdrawn follow-up's `queued_message_withdrawn`, or null. An object that withdrew
   * follow-ups before `withdrawn_runs` existed fills it from its log first, once.
   */
  async withdrawnAt(runId: string): Promise<number | null> {
    const { backfills, intake } = this.deps;
    const known = intake.withdrawnAt(runId);
    const until = backfills.pending("withdrawn_runs");
    if (known !== null || until === 0) return known;
    this.withdrawnFill ??= intake
      .fillWithdrawn(this.eventsHolding("queued", 0, until))
      .then(() => backfills.done("withdrawn_runs"))
      .finally(() => (this.withdrawnFill = null));
    await this.withdrawnFill;
    return intake.withdrawnAt(runId);
  }

  /**
   * A manual compaction cut off under an older version, which kept no `open_compaction` mark: a
   * `compaction_started` without an end after the newest run's start (manual compactions lie between
   * runs; a run's own are closed with it), closed by `close`. Checked once, reading only from that
   * run on; one cut off before later runs of the older version is not looked for. Whether one was closed.
   */
  async closeLegacyCompaction(close: () => void): Promise<boolean> {
    const { backfills, registry } = this.deps;
    if (backfills.pending("open_compaction") === 0) return false;
    const events: AgentEvent[] = [];
    try {
      for await (const { event } of this.eventsHolding("compaction_", registry.lastStartSeq(), Number.POSITIVE_INFINITY)) {
        events.push(event);
      }
    } catch {
      // The log cannot be read now: the next start looks again.
      return false;
    }
    const open = runLeftovers([], events).compacting;
    if (open) close();
    backfills.done("open_compaction");
    return open;
  }

  /**
   * Tool calls a fork made by an older version left open (forks close them since hunt 52): closed by
   * `close` with the fork's messages, once, when no run has been made in the fork since. Then the
   * calls end its history; after a run they lie inside it, where each model request fills them as
   * for any history. Whether any were closed.
   */
  async closeLegacyForkCalls(isFork: boolean, close: (messages: AgentMessage[]) => void): Promise<boolean> {
    const { backfills, registry, log, bucket, sessionId } = this.deps;
    if (backfills.pending("fork_open_calls") === 0) return false;
    if (!isFork || registry.nextStartSeq(-1) !== null) {
      backfills.done("fork_open_calls");
      return false;
    }
    let messages: AgentMessage[];
    try {
      messages = (await readLogLines(log, bucket, "messages")).map((line) => decodeMessageLine(line.body, line.seq, sessionId));
    } catch {
      // The log cannot be read now: the next start looks again.
      return false;
    }
    const open = runLeftovers(messages, []).unanswered.length > 0;
    if (open) close(messages);
    backfills.done("fork_open_calls");
    return open;
  }

  /** Whether the tenant's list row was last told by older code (a run closed by recovery stayed "running"). */
  summaryUntold(): boolean {
    return this.deps.backfills.pending("tenant_summary") > 0;
  }

  /** The tenant's list has been told (or had nothing to hear): `summaryUntold` is false from now on. */
  summaryTold(): void {
    this.deps.backfills.done("tenant_summary");
  }

  /**
   * The events after `afterSeq`, up to `untilSeq`, whose JSON line holds `hint`; the other lines are
   * not decoded. For lookups in logs older versions wrote (a segment at a time, stopping at `untilSeq`).
   */
  private async *eventsHolding(hint: string, afterSeq: number, untilSeq: number): AsyncGenerator<SeqEvent> {
    const { log, bucket, sessionId } = this.deps;
    for await (const lines of readLog(log, bucket, "events", afterSeq)) {
      for (const line of lines) {
        if (line.seq > untilSeq) return;
        if (line.body.includes(hint)) yield { seq: line.seq, event: decodeEventLine(line.body, line.seq, sessionId) };
      }
    }
  }
}
