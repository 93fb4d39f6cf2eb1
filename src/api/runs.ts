import { Hono } from "hono";
import { z } from "zod";
import { type AgentPromptCommand, AgentRunOptions, HarnessError, nowIso, type PromptDelivery, unwrapResult } from "../domain";
import type { AppEnv } from "../env";
import { REPLAY_MODEL_PREFIX } from "../model/replay-client";
import { SESSION_STREAM_ORIGIN, SESSION_STREAM_PATHS } from "../session/session-api";
import { readJsonBody, readQuery } from "./body";
import { type AppBindings, isHead } from "./context";
import { isApiCode } from "./errors";
import { claimIdempotencyKey } from "./idempotency";
import { requireSession } from "./lookup";
import { AbortBody, EventStreamQuery, PromptBody, ResumeSeq, StreamTokenBody } from "./schemas";
import { bearerTag, issueStreamToken } from "./stream-tokens";

/** Runs: start one (or steer / queue it while one runs) and stream it, resume a stream, hand out stream tokens, withdraw queued messages, abort. */
export const runRoutes = new Hono<AppBindings>()
  /**
   * Starts a run and streams its events as SSE until it ends. While another run is active:
   * 409 `session_busy`, or with `whenBusy` the stream of the run that will carry the message.
   */
  .post("/:id/messages/stream", async (c) => {
    const { store, meta } = await requireSession(c);
    const { requestId, ...body } = await readJsonBody(c, PromptBody);
    const { text, model, retryOf, contextWindow, whenBusy, afterFailedRun, ...limits } = body;
    if (model) requireAllowedModel(model, c.env);
    // The session replays the stream of the run the key started (recorded with the run, in one step).
    const claimed = await claimIdempotencyKey(c, requestId, ["POST /api/sessions/:id/messages/stream", meta.id, body], {});
    const command: AgentPromptCommand = {
      sessionId: meta.id,
      userText: text,
      ...(meta.workspaceId ? { workspaceId: meta.workspaceId } : {}),
      ...(model ? { model } : {}),
      ...(retryOf ? { retryOf } : {}),
      ...(contextWindow ? { contextWindow } : {}),
      options: AgentRunOptions.parse(limits),
    };
    const delivery: PromptDelivery = {
      command,
      whenBusy: whenBusy ?? "reject",
      afterFailedRun: afterFailedRun ?? "keep",
      ...(claimed ? { idempotencyKey: `${claimed.key}@${claimed.claimedAtMs}` } : {}),
    };
    const url = `${SESSION_STREAM_ORIGIN}${SESSION_STREAM_PATHS.run}`;
    return fromSession(await store.stub(meta.id).fetch(new Request(url, { method: "POST", body: JSON.stringify(delivery) })));
  })
  /** Withdraws a queued (steer or followUp) message that has not been delivered yet. */
  .delete("/:id/queue/:messageId", async (c) => {
    const { store, meta } = await requireSession(c);
    return c.json(unwrapResult(await store.stub(meta.id).withdrawQueued(c.req.param("messageId"))));
  })
  /**
   * Replays every event after `Last-Event-ID` (or `?after=`), tails the active run live, then ends.
   * 204 when no run is active and nothing is after it, so an EventSource stops reconnecting.
   * `?runId=` resumes the stream of one run instead: it waits through the runs before it (a queued
   * follow-up's) and ends at that run's terminal event, or at the `queued_message_withdrawn` of a
   * follow-up withdrawn before it started; with `&messageId=` (a steer's), it follows that message
   * as the steer's own stream did. An id past the session's newest event is refused.
   */
  .get("/:id/events/stream", async (c) => {
    const { store, meta } = await requireSession(c);
    const query = readQuery(c, EventStreamQuery.omit({ after: true }).extend({ after: z.string().optional() }));
    const raw = c.req.header("last-event-id") ?? query.after ?? "0";
    if (!ResumeSeq.safeParse(raw).success) {
      throw new HarnessError(
        "invalid_last_event_id",
        `Last-Event-ID / after must be a non-negative integer seq of at most 15 digits, not ${JSON.stringify(raw.slice(0, 40))}`,
      );
    }
    const { runId, messageId } = query;
    if (messageId && !runId) throw new HarnessError("invalid_query", "messageId names a steer of a run: give runId with it");
    // HEAD: the session answers as for GET, with the same status and headers, and opens no stream.
    const scope = `${runId ? `&runId=${runId}` : ""}${messageId ? `&messageId=${messageId}` : ""}${isHead(c) ? "&head=1" : ""}`;
    const url = `${SESSION_STREAM_ORIGIN}${SESSION_STREAM_PATHS.events}?after=${Number(raw.trim())}${scope}`;
    return fromSession(await store.stub(meta.id).fetch(new Request(url)));
  })
  /** `{ttlSeconds?}` -> `{token, expiresAt}`: a token for `?token=` on this session's event stream (for EventSource). */
  .post("/:id/stream-token", async (c) => {
    const { meta } = await requireSession(c);
    const { ttlSeconds } = await readJsonBody(c, StreamTokenBody);
    const expiresAt = Math.floor(Date.now() / 1000) + ttlSeconds;
    const secret = c.env.STREAM_TOKEN_SECRET;
    const bearerDigest = c.get("bearer");
    const bearer = bearerDigest ? await bearerTag(secret, bearerDigest) : null;
    const token = await issueStreamToken(secret, { tenant: c.get("tenant"), sessionId: meta.id, expiresAt, bearer });
    return c.json({ token, expiresAt: nowIso(() => expiresAt * 1000) });
  })
  /** Cancels the active run, if any (with `runId`, only that run): `{aborted, runId}`. */
  .post("/:id/abort", async (c) => {
    const { store, meta } = await requireSession(c);
    const { runId } = await readJsonBody(c, AbortBody);
    return c.json(await store.stub(meta.id).abortRun(runId));
  });

/** A streaming answer of the session object; its coded refusals (`session_busy`) become the API's error answers. */
async function fromSession(response: Response): Promise<Response> {
  if (response.ok) return response;
  const body = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
  const code = body?.error?.code ?? "";
  if (isApiCode(code)) throw new HarnessError(code, body?.error?.message ?? code);
  throw new Error(`the session answered ${response.status}`);
}

/**
 * A prompt's model, when the deployment lists the ones it offers (ALLOWED_MODELS): one of them, MODEL,
 * or a replay (which calls no provider). A tenant otherwise picks any model on the operator's key (hunt 84).
 */
export function requireAllowedModel(model: string, env: AppEnv): void {
  const listed = env.ALLOWED_MODELS?.split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  if (!listed || listed.length === 0 || model.startsWith(REPLAY_MODEL_PREFIX)) return;
  const offered = new Set([...listed, ...(env.MODEL?.trim() ? [env.MODEL.trim()] : [])]);
  if (offered.has(model.trim())) return;
  throw new HarnessError(
    "model_not_allowed",
    `this deployment offers the models ${[...offered].map((name) => JSON.stringify(name)).join(", ")}; the prompt named ${JSON.stringify(model.slice(0, 200))}`,
  );
}
