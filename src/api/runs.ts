import { Hono } from "hono";
import { z } from "zod";
import {
  AfterFailedRun,
  type AgentPromptCommand,
  AgentRunOptions,
  HarnessError,
  MAX_PROMPT_CHARS,
  nonBlank,
  type PromptDelivery,
  RunId,
  unwrapResult,
  WhenBusy,
} from "../domain";
import { SESSION_STREAM_ORIGIN, SESSION_STREAM_PATHS } from "../session/session-api";
import { readJsonBody } from "./body";
import type { AppBindings } from "./context";
import { claimIdempotencyKey, IdempotencyKey } from "./idempotency";
import { requireSession } from "./lookup";

/** A prompt: the text plus optional permissions and limits (validated against the run option ranges). */
const PromptBody = z.strictObject({
  text: nonBlank.pipe(z.string().max(MAX_PROMPT_CHARS)),
  ...AgentRunOptions.partial().shape,
  model: nonBlank.pipe(z.string().max(200)).optional(),
  /** The run this prompt retries (another attempt of the same task: its cases always reach the brief). */
  retryOf: RunId.optional(),
  /** While a run is active: refuse (409, the default), steer the running run, or queue a follow-up run. */
  whenBusy: WhenBusy.optional(),
  /** For a queued follow-up: still run it if the run before it fails (`keep`, the default), or drop it. */
  afterFailedRun: AfterFailedRun.optional(),
  /** An idempotency key, when the client cannot send the Idempotency-Key header. */
  requestId: IdempotencyKey.optional(),
});

/** Runs: start one and stream it, resume a stream, abort. */
export const runRoutes = new Hono<AppBindings>()
  /**
   * Starts a run and streams its events as SSE until it ends. While another run is active:
   * 409 `session_busy`, or with `whenBusy` the stream of the run that will carry the message.
   */
  .post("/:id/messages/stream", async (c) => {
    const { store, meta } = await requireSession(c);
    const { requestId, ...body } = await readJsonBody(c, PromptBody);
    const { text, model, retryOf, whenBusy, afterFailedRun, ...limits } = body;
    // The session replays the stream of the run the key started (recorded with the run, in one step).
    const claimed = await claimIdempotencyKey(c, requestId, ["POST /api/sessions/:id/messages/stream", meta.id, body], {});
    const command: AgentPromptCommand = {
      sessionId: meta.id,
      userText: text,
      ...(meta.workspaceId ? { workspaceId: meta.workspaceId } : {}),
      ...(model ? { model } : {}),
      ...(retryOf ? { retryOf } : {}),
      options: AgentRunOptions.parse(limits),
    };
    const delivery: PromptDelivery = {
      command,
      whenBusy: whenBusy ?? "reject",
      afterFailedRun: afterFailedRun ?? "keep",
      ...(claimed ? { idempotencyKey: `${claimed.key}@${claimed.claimedAtMs}` } : {}),
    };
    const url = `${SESSION_STREAM_ORIGIN}${SESSION_STREAM_PATHS.run}`;
    return store.stub(meta.id).fetch(new Request(url, { method: "POST", body: JSON.stringify(delivery) }));
  })
  /** Withdraws a queued (steer or followUp) message that has not been delivered yet. */
  .delete("/:id/queue/:messageId", async (c) => {
    const { store, meta } = await requireSession(c);
    return c.json(unwrapResult(await store.stub(meta.id).withdrawQueued(c.req.param("messageId"))));
  })
  /**
   * Replays every event after `Last-Event-ID` (or `?after=`), tails the active run live, then ends.
   * `?runId=` resumes the stream of one run instead: it waits through the runs before it (a queued
   * follow-up's) and ends at that run's terminal event.
   */
  .get("/:id/events/stream", async (c) => {
    const { store, meta } = await requireSession(c);
    const raw = c.req.header("last-event-id") ?? c.req.query("after") ?? "0";
    if (!/^\d{1,15}$/.test(raw.trim())) {
      throw new HarnessError(
        "invalid_last_event_id",
        `Last-Event-ID / after must be a non-negative integer seq, not ${JSON.stringify(raw.slice(0, 40))}`,
      );
    }
    const runId = c.req.query("runId");
    if (runId !== undefined && !RunId.safeParse(runId).success) throw new HarnessError("invalid_body", "runId: not a run id");
    const url = `${SESSION_STREAM_ORIGIN}${SESSION_STREAM_PATHS.events}?after=${Number(raw.trim())}${runId ? `&runId=${runId}` : ""}`;
    return store.stub(meta.id).fetch(new Request(url));
  })
  /** Cancels the active run, if any: `{aborted, runId}`. */
  .post("/:id/abort", async (c) => {
    const { store, meta } = await requireSession(c);
    await readJsonBody(c, z.strictObject({}));
    return c.json(await store.stub(meta.id).abortRun());
  });
