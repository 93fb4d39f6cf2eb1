import { ERROR_REGISTRY } from "../domain";
import { decodeEventLine } from "./jsonl";
import type { StreamScope } from "./live-events";
import { readLog, unreadableMessage } from "./log-reader";
import type { OlderObjects } from "./older-objects";
import type { PromptQueue } from "./prompt-queue";
import type { RunRegistry } from "./run-registry";
import type { SessionLog } from "./session-log";
import { sseResponse } from "./sse";

/** What a resume reads of its session. */
export interface StreamResumeDeps {
  sessionId: string;
  log: SessionLog;
  bucket: R2Bucket;
  older: OlderObjects;
  registry: RunRegistry;
  queue: PromptQueue;
  /** The active run's id, or null. */
  activeRunId: () => string | null;
  /** The SSE answer of the events after `afterSeq`, tailing `runId`'s run when named (the session's). */
  answer: (runId: string | null, afterSeq: number, scope?: StreamScope) => Promise<Response>;
}

/**
 * Where a reconnecting client's stream starts and ends: `GET .../events/stream` with `after`
 * (Last-Event-ID), a run, or a steer it sent. Reads the session's log and run tables; opens nothing
 * itself (the session's `answer` does).
 */
export class StreamResume {
  constructor(private readonly deps: StreamResumeDeps) {}

  /**
   * `GET .../events/stream`: the events after `after`, then the active run live; with `runId`, that
   * run's stream, from its start at the earliest, to its end (a queued follow-up's skips the runs
   * before it; a withdrawn one's ends at its `queued_message_withdrawn`). 204 when nothing is left.
   * `head`: the answer a HEAD gets, the same status and headers, and no stream is opened.
   */
  async resume(requested: number, asked: string | null, steerMessageId: string | null, head = false): Promise<Response> {
    const answer = (runId: string | null, afterSeq: number, scope?: StreamScope) =>
      head ? sseResponse(null, runId) : this.deps.answer(runId, afterSeq, scope);
    let after = requested;
    // An id this session never handed out (another session's, say) would otherwise wait on a stream it can never match.
    const newest = this.deps.log.lastSeq();
    if (after > newest) {
      return refusal(
        "invalid_last_event_id",
        `Last-Event-ID / after ${after} is past the newest event id of session '${this.deps.sessionId}' (${newest}); resume from an id its streams sent`,
      );
    }
    let runId = asked;
    if (asked !== null && steerMessageId !== null) {
      let fate: SteerFate | null;
      try {
        fate = await this.steerFate(asked, steerMessageId, after);
      } catch (err) {
        return refusal("history_unreadable", unreadableMessage(err));
      }
      if (!fate)
        return refusal("message_not_found", `run '${asked}' of session '${this.deps.sessionId}' took no steer '${steerMessageId}'`);
      // The steer's stream began at its message_queued: a resume from before it (no Last-Event-ID) starts there too.
      after = Math.max(after, fate.queuedSeq - 1);
      // Not decided by what the client has: the stream learns it as the steer's own did.
      if (fate.kind === "pending") {
        return answer(asked, after, { runId: asked, skipFromSeq: null, steerMessageId });
      }
      if (fate.kind === "followUp") {
        // Re-queued, its run not begun for the client: what comes before that run is skipped, as it
        // was. A withdrawn one's stream is answered as that run's (ending at the withdrawal, or 204).
        let withdrawn: boolean;
        try {
          withdrawn = (await this.deps.older.withdrawnAt(fate.runId)) !== null;
        } catch (err) {
          return refusal("history_unreadable", unreadableMessage(err));
        }
        if (!fate.started && !withdrawn) {
          return answer(fate.runId, after, { runId: fate.runId, skipFromSeq: after });
        }
        runId = fate.runId;
      }
    }
    const started = runId === null ? null : this.deps.registry.find(runId);
    let endSeq: number | null = null;
    try {
      if (runId !== null && !started && !this.deps.queue.hasRun(runId) && this.deps.activeRunId() !== runId) {
        return await this.resumeWithdrawn(runId, after, head);
      }
      if (started) endSeq = await this.deps.older.endSeqOf(started);
    } catch (err) {
      return refusal("history_unreadable", unreadableMessage(err));
    }
    // A run that has started: its stream begins where it did, not with the runs before it.
    const from = Math.max(after, started?.startSeq ?? 0);
    // Resumed after its terminal event: nothing of the run is left (the runs after it are not its).
    if (endSeq !== null && from >= endSeq) return new Response(null, { status: 204 });
    // Nothing to send and nothing coming: 204 tells an EventSource to stop reconnecting.
    if (this.deps.activeRunId() === null && this.deps.queue.size() === 0 && this.deps.log.lastSeqOf("events") <= from)
      return new Response(null, { status: 204 });
    if (runId === null) return answer(this.deps.activeRunId(), from);
    // A follow-up not started yet: skip the runs before it, as its first stream did. A started run
    // resumed from its start begins at its agent_started too: an older version recorded a follow-up's
    // start before the queue_updated logged ahead of it (hunt 81).
    const fromStart = started !== null && from === started.startSeq;
    const scope = { runId, skipFromSeq: this.deps.queue.hasRun(runId) || fromStart ? from : null };
    return answer(runId, from, scope);
  }

  /**
   * The stream of a run that never started because its queued message was withdrawn: it ends at the
   * `queued_message_withdrawn` that names the run, as its first stream did. A run id the log does not
   * name there is unknown (404).
   */
  private async resumeWithdrawn(runId: string, after: number, head: boolean): Promise<Response> {
    const withdrawnSeq = await this.deps.older.withdrawnAt(runId);
    if (withdrawnSeq === null) return refusal("run_not_found", `session '${this.deps.sessionId}' has no run '${runId}'`);
    if (after >= withdrawnSeq) return new Response(null, { status: 204 });
    return head ? sseResponse(null, runId) : this.deps.answer(runId, after, { runId, skipFromSeq: after });
  }

  /**
   * What became of a steer by `after` (what the resuming client has seen): still undecided, taken by
   * its run or withdrawn, or re-queued as a follow-up (and whether that run's start is seen). Null
   * when `runId` was never sent it.
   */
  private async steerFate(runId: string, messageId: string, after: number): Promise<SteerFate | null> {
    // A steer is sent to a run that has begun: its events are all after the run's start.
    const run = this.deps.registry.find(runId);
    if (!run) return null;
    /** The seq of the steer's message_queued to this run, once seen. */
    let queuedSeq: number | null = null;
    let followUp: string | null = null;
    const pending = (seq: number): SteerFate =>
      followUp ? { kind: "followUp", runId: followUp, started: false, queuedSeq: seq } : { kind: "pending", queuedSeq: seq };
    for await (const lines of readLog(this.deps.log, this.deps.bucket, "events", run.startSeq)) {
      for (const line of lines) {
        // Past what the client has, only whether the steer was sent to the run still matters.
        if (line.seq > after && queuedSeq !== null) return pending(queuedSeq);
        if (!line.body.includes(messageId) && !(followUp && line.body.includes(followUp))) continue;
        const event = decodeEventLine(line.body, line.seq, this.deps.sessionId);
        if (followUp) {
          if (event.type === "agent_started" && event.runId === followUp && queuedSeq !== null)
            return { kind: "followUp", runId: followUp, started: true, queuedSeq };
          continue;
        }
        if (event.type === "message_queued" && event.messageId === messageId) {
          if (event.mode === "steer") queuedSeq = event.runId === runId ? line.seq : null;
          else if (queuedSeq !== null) followUp = event.runId;
          if (line.seq > after) return queuedSeq !== null ? pending(queuedSeq) : null;
          continue;
        }
        const taken = event.type === "user_message_appended" || event.type === "queued_message_withdrawn";
        if (queuedSeq !== null && taken && event.messageId === messageId) return { kind: "taken", queuedSeq };
      }
    }
    return queuedSeq !== null ? pending(queuedSeq) : null;
  }
}

/** What became of a steer (see `steerFate`); `queuedSeq` is its message_queued's seq, where its stream began. */
type SteerFate = ({ kind: "pending" } | { kind: "taken" } | { kind: "followUp"; runId: string; started: boolean }) & { queuedSeq: number };

/** A coded refusal of the session object; the Worker answers it as the API's error. */
export function refusal(
  code: "invalid_last_event_id" | "run_not_found" | "message_not_found" | "history_unreadable",
  message: string,
): Response {
  return Response.json({ error: { code, message } }, { status: ERROR_REGISTRY[code].status });
}
