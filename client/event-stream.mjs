// Follows one run's events over SSE: the prompt's own stream first, then, whenever the connection
// drops, GET .../events/stream?runId=<the prompt's run> with Last-Event-ID until that run's terminal
// event. Each event is delivered once, in seq order.
import { createParser } from "eventsource-parser";
import { ApiError } from "./api.mjs";

/** The events that end a run. */
export const TERMINAL_EVENTS = new Set(["agent_completed", "agent_error"]);

/** No bytes for this long (the server pings every 15 s) counts as a dropped connection. */
const IDLE_TIMEOUT_MS = 45_000;
const MAX_RECONNECTS = 20;

/**
 * @typedef {{ seq: number; type: string; [field: string]: any }} StreamedEvent
 * @typedef {{ attempt: number; lastSeq: number; delayMs: number; reason: string }} ReconnectInfo
 */

/**
 * Sends a prompt and yields the run's events until it ends.
 * @param {import("./api.mjs").HarnessApi} api
 * @param {string} sessionId
 * @param {Record<string, unknown>} prompt the body of POST .../messages/stream
 * @param {{ onReconnect?: (info: ReconnectInfo) => void; onRunId?: (runId: string | null) => void; reconnectDelayMs?: number }} [hooks]
 * @returns {AsyncGenerator<StreamedEvent>}
 */
export async function* followRun(api, sessionId, prompt, hooks = {}) {
  const path = `/api/sessions/${encodeURIComponent(sessionId)}`;
  const state = { lastSeq: 0, retryMs: hooks.reconnectDelayMs ?? 2000, ended: false };
  const first = await sendPrompt(api, `${path}/messages/stream`, prompt, state, hooks);
  // The run that carries the prompt: a resume asks for its stream, not the session's (which replays
  // the runs before it, terminal events and all).
  let runId = first.headers.get("x-run-id");
  hooks.onRunId?.(runId);
  const runPath = `${path}/events/stream${runId ? `?runId=${encodeURIComponent(runId)}` : ""}`;
  /** A steer's message, once `message_queued` named it: its resume follows the message, also when it becomes a follow-up. */
  let steerId = /** @type {string | null} */ (null);
  let response = /** @type {Response | null} */ (first);
  let failures = 0;
  let reason = "";
  for (;;) {
    if (response) {
      try {
        for await (const event of readEvents(response, state, hooks.reconnectDelayMs === undefined)) {
          failures = 0;
          if (event.type === "message_queued" && prompt.whenBusy === "steer") {
            steerId ??= event.messageId;
            // A steer its run ended without taking is a follow-up now: its run is the one to follow.
            if (event.messageId === steerId && event.mode === "followUp") runId = event.runId;
          }
          yield event;
          if (endsRun(event, runId)) return;
        }
        reason = "the stream ended before the run did";
      } catch (err) {
        reason = err instanceof Error ? err.message : String(err);
      }
    }
    if (++failures > MAX_RECONNECTS) throw new ApiError(0, "network_error", `gave up after ${MAX_RECONNECTS} reconnects: ${reason}`);
    hooks.onReconnect?.({ attempt: failures, lastSeq: state.lastSeq, delayMs: state.retryMs, reason });
    await new Promise((r) => setTimeout(r, state.retryMs));
    try {
      const resumePath = steerId && runId ? `${runPath}&messageId=${encodeURIComponent(steerId)}` : runPath;
      response = await api.request("GET", resumePath, { headers: { "last-event-id": String(state.lastSeq) } });
    } catch (err) {
      if (err instanceof ApiError && err.status !== 0 && err.status < 500) throw err;
      response = null;
      reason = err instanceof Error ? err.message : String(err);
      continue;
    }
    // 204: the run has ended and nothing is after lastSeq.
    if (response.status === 204) return;
  }
}

/** Tries of a prompt whose answer never came (the connection dropped, a 5xx). */
const PROMPT_TRIES = 4;

/**
 * POSTs the prompt under an Idempotency-Key, again with the same key while no answer comes back: a
 * prompt the server took before the connection dropped then answers with the run it started (its
 * stream from the first event), instead of starting a second run (with --allow-write, its edits twice).
 * @param {import("./api.mjs").HarnessApi} api
 * @param {string} url
 * @param {Record<string, unknown>} prompt
 * @param {{ lastSeq: number; retryMs: number }} state
 * @param {{ onReconnect?: (info: ReconnectInfo) => void }} hooks
 * @returns {Promise<Response>}
 */
async function sendPrompt(api, url, prompt, state, hooks) {
  const key = `cli-${crypto.randomUUID()}`;
  const body = JSON.stringify(prompt);
  for (let attempt = 1; ; attempt++) {
    try {
      return await api.request("POST", url, { body, type: "application/json", headers: { "idempotency-key": key } });
    } catch (err) {
      const unanswered = err instanceof ApiError && (err.status === 0 || err.status >= 500);
      if (!unanswered || attempt === PROMPT_TRIES) throw err;
      hooks.onReconnect?.({ attempt, lastSeq: state.lastSeq, delayMs: state.retryMs, reason: err.message });
      await new Promise((r) => setTimeout(r, state.retryMs));
    }
  }
}

/**
 * Whether an event ends the followed run: its terminal event, or the withdrawal of its queued prompt
 * (a follow-up that will never run). Another run's terminal event does not. Without a run id (no
 * `x-run-id` header) any terminal event does.
 * @param {StreamedEvent} event
 * @param {string | null} runId
 */
function endsRun(event, runId) {
  if (runId === null) return TERMINAL_EVENTS.has(event.type);
  return event.runId === runId && (TERMINAL_EVENTS.has(event.type) || event.type === "queued_message_withdrawn");
}

/**
 * The events of one SSE response, skipping any at or below `state.lastSeq`; throws when the
 * connection breaks or stays silent too long.
 * @param {Response} response
 * @param {{ lastSeq: number; retryMs: number }} state
 * @param {boolean} takeRetry adopt the server's `retry:` delay
 * @returns {AsyncGenerator<StreamedEvent>}
 */
async function* readEvents(response, state, takeRetry) {
  if (!response.body) return;
  /** @type {StreamedEvent[]} */
  const queue = [];
  const parser = createParser({
    onEvent: (message) => {
      const data = JSON.parse(message.data);
      const seq = typeof data.seq === "number" ? data.seq : Number(message.id);
      if (seq > state.lastSeq) {
        state.lastSeq = seq;
        queue.push({ ...data, seq });
      }
    },
    onRetry: (ms) => {
      if (takeRetry) state.retryMs = ms;
    },
  });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      /** @type {ReturnType<typeof setTimeout> | undefined} */
      let timer;
      const idle = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`)), IDLE_TIMEOUT_MS);
      });
      const { done, value } = await Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer));
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      while (queue.length > 0) yield/** @type {StreamedEvent} */ (queue.shift());
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
