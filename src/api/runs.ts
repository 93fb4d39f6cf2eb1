import { Hono } from "hono";
import { z } from "zod";
import { type AgentPromptCommand, AgentRunOptions, ContextWindow, HarnessError, MAX_PROMPT_CHARS, nonBlank, RunId } from "../domain";
import { SESSION_STREAM_ORIGIN, SESSION_STREAM_PATHS } from "../session/session-api";
import { readJsonBody } from "./body";
import type { AppBindings } from "./context";
import { requireSession } from "./lookup";

/** A prompt: the text plus optional permissions and limits (validated against the run option ranges). */
const PromptBody = z.strictObject({
  text: nonBlank.pipe(z.string().max(MAX_PROMPT_CHARS)),
  ...AgentRunOptions.partial().shape,
  model: nonBlank.pipe(z.string().max(200)).optional(),
  /** The run this prompt retries (another attempt of the same task: its cases always reach the brief). */
  retryOf: RunId.optional(),
  /** The model's context window in tokens for this prompt (overrides MODEL_CONTEXT_WINDOW and the known-model table). */
  contextWindow: ContextWindow.optional(),
});

/** Runs: start one and stream it, resume a stream, abort. */
export const runRoutes = new Hono<AppBindings>()
  /** Starts a run and streams its events as SSE until it ends. 409 `session_busy` while another runs. */
  .post("/:id/messages/stream", async (c) => {
    const { store, meta } = await requireSession(c);
    const { text, model, retryOf, contextWindow, ...limits } = await readJsonBody(c, PromptBody);
    const command: AgentPromptCommand = {
      sessionId: meta.id,
      userText: text,
      ...(meta.workspaceId ? { workspaceId: meta.workspaceId } : {}),
      ...(model ? { model } : {}),
      ...(retryOf ? { retryOf } : {}),
      ...(contextWindow ? { contextWindow } : {}),
      options: AgentRunOptions.parse(limits),
    };
    const url = `${SESSION_STREAM_ORIGIN}${SESSION_STREAM_PATHS.run}`;
    return store.stub(meta.id).fetch(new Request(url, { method: "POST", body: JSON.stringify(command) }));
  })
  /** Replays every event after `Last-Event-ID` (or `?after=`), tails the active run live, then ends. */
  .get("/:id/events/stream", async (c) => {
    const { store, meta } = await requireSession(c);
    const raw = c.req.header("last-event-id") ?? c.req.query("after") ?? "0";
    if (!/^\d{1,15}$/.test(raw.trim())) {
      throw new HarnessError(
        "invalid_last_event_id",
        `Last-Event-ID / after must be a non-negative integer seq, not ${JSON.stringify(raw.slice(0, 40))}`,
      );
    }
    const url = `${SESSION_STREAM_ORIGIN}${SESSION_STREAM_PATHS.events}?after=${Number(raw.trim())}`;
    return store.stub(meta.id).fetch(new Request(url));
  })
  /** Cancels the active run, if any: `{aborted, runId}`. */
  .post("/:id/abort", async (c) => {
    const { store, meta } = await requireSession(c);
    await readJsonBody(c, z.strictObject({}));
    return c.json(await store.stub(meta.id).abortRun());
  });
