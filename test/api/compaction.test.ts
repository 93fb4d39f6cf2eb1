import { abortAllDurableObjects } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { counterIds } from "../../src/domain";
import { SUMMARY_SYSTEM_PROMPT } from "../../src/runtime/compaction";
import { DurableSessionStore } from "../../src/session/session-store";
import { readSse } from "../helpers/sse-client";
import { useSessionDeps } from "../helpers/test-worker";
import { chunk, jsonResponse, sse, sseResponse } from "../model/helpers";

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const post = (path: string, body: unknown) =>
  api(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
const store = new DurableSessionStore(env);

type Body = { system?: string; messages: { role: string; content: string | null }[] } & Record<string, unknown>;
type Answer = (body: Body) => Response;

const isSummary = (body: Body) => body.messages[0]?.content === SUMMARY_SYSTEM_PROMPT;

/** A session whose model answers agent requests with `agent` and summary requests with `summary`. */
async function session(agent: Answer[], summary: Answer = text("## Goal\nthe summary")) {
  const res = await api("/api/sessions", { method: "POST" });
  const { sessionId } = (await res.json()) as { sessionId: string };
  const requests: Body[] = [];
  let agentCalls = 0;
  useSessionDeps(sessionId, {
    ids: counterIds(),
    modelFetch: async (_input, init) => {
      const body = JSON.parse(String(init?.body)) as Body;
      requests.push(body);
      if (isSummary(body)) return summary(body);
      const answer = agent[agentCalls++];
      if (!answer) throw new Error(`unexpected agent request ${agentCalls}`);
      return answer(body);
    },
  });
  return { sessionId, requests };
}

const usage = (prompt: number, completion: number, extra: Record<string, unknown> = {}) => ({
  id: "c",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ...extra },
});

/** A text answer; its usage counts the request as a provider would (its JSON at 4 characters a token). */
const text =
  (content: string): Answer =>
  (body) =>
    sseResponse(sse([chunk({ content }), chunk({}, "stop"), usage(Math.ceil(JSON.stringify(body.messages).length / 4), 10)]));

const run = async (sessionId: string, body: Record<string, unknown>) =>
  (await readSse(await post(`/api/sessions/${sessionId}/messages/stream`, body))).frames;

describe("POST /api/sessions/:id/compact", () => {
  it("summarises the older history; the next request holds the summary plus the kept messages; the log keeps everything", async () => {
    const long = (n: number) => `answer ${n}: ${"w".repeat(4_000)}`;
    const { sessionId, requests } = await session([text(long(1)), text(long(2)), text(long(3)), text("short")]);
    for (const n of [1, 2, 3]) await run(sessionId, { text: `question ${n}`, contextWindow: 8_000 });

    const res = await post(`/api/sessions/${sessionId}/compact`, { instructions: "mention the questions" });
    expect(res.status).toBe(200);
    const compacted = (await res.json()) as { messageId: string; tokensBefore: number; tokensAfter: number };
    expect(compacted.tokensAfter).toBeLessThan(compacted.tokensBefore);
    const summaryRequest = requests.find(isSummary)!;
    expect(summaryRequest.messages[1]!.content).toContain("Additional instructions: mention the questions");
    expect(summaryRequest.tools).toBeUndefined();

    const messages = await store.loadMessages(sessionId);
    expect(messages.map((m) => m.kind)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "compaction"]);
    const record = messages.at(-1)!;
    expect(record).toMatchObject({ id: compacted.messageId, summary: "## Goal\nthe summary", firstKeptMessageId: messages[4]!.id });
    const events = (await store.loadEvents(sessionId)).map((e) => e.type);
    expect(events.slice(-2)).toEqual(["compaction_started", "compaction_finished"]);

    // The next prompt: system, the summary with the first kept message (roles alternate: hunt 62), the
    // rest of the kept messages, the new prompt.
    await run(sessionId, { text: "question 4", contextWindow: 8_000 });
    const next = requests.at(-1)!;
    expect(next.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(next.messages[1]!.content).toContain("<summary>\n## Goal\nthe summary\n</summary>\n\nquestion 3");

    // The export is the whole log, compaction record included.
    const exported = new TextDecoder().decode(await (await api(`/api/sessions/${sessionId}/messages`)).arrayBuffer());
    expect(exported.trim().split("\n")).toHaveLength(9);

    const info = (await (await api(`/api/sessions/${sessionId}`)).json()) as Record<string, unknown>;
    expect(info.contextWindow).toBe(8_000);
    expect(info.contextTokens).toBeGreaterThan(0);
    expect(info.contextTokens).toBeLessThan(compacted.tokensBefore);
    // Four answers and the summary call, 10 output tokens each; no price is known for test-model.
    expect(info.usage).toMatchObject({ outputTokens: 50, cost: null });
  });

  it("409 session_busy while a run is active; 409 nothing_to_compact for a short history", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const { sessionId } = await session([
      () =>
        sseResponse(
          new ReadableStream({
            async pull(controller) {
              await gate;
              controller.enqueue(new TextEncoder().encode(sse([chunk({ content: "ok" }), chunk({}, "stop")])));
              controller.close();
            },
          }),
        ),
    ]);
    const stream = post(`/api/sessions/${sessionId}/messages/stream`, { text: "wait" });
    const response = await stream;
    const busy = await post(`/api/sessions/${sessionId}/compact`, {});
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { error: { code: string } }).error.code).toBe("session_busy");
    release();
    await readSse(response);
    const before = (await store.loadEventsAfter(sessionId, 0)).length;
    const short = await post(`/api/sessions/${sessionId}/compact`, {});
    expect(short.status).toBe(409);
    expect(((await short.json()) as { error: { code: string } }).error.code).toBe("nothing_to_compact");
    // A refusal leaves nothing in the log (it added compaction_started and compaction_failed before).
    expect((await store.loadEventsAfter(sessionId, 0)).length).toBe(before);
  });
});

/**
 * A session with three long answers in its history (enough to compact at an 8,000-token window)
 * whose summary requests `summarise` answers, given the request's init (its abort signal).
 */
async function compactableSession(summarise: (body: Body, init?: RequestInit) => Promise<Response>): Promise<string> {
  const res = await api("/api/sessions", { method: "POST" });
  const { sessionId } = (await res.json()) as { sessionId: string };
  let agentCalls = 0;
  useSessionDeps(sessionId, {
    ids: counterIds(),
    modelFetch: async (_input, init) => {
      const body = JSON.parse(String(init?.body)) as Body;
      return isSummary(body) ? summarise(body, init) : text(`answer ${++agentCalls}: ${"w".repeat(4_000)}`)(body);
    },
  });
  for (const n of [1, 2, 3]) await run(sessionId, { text: `question ${n}`, contextWindow: 8_000 });
  return sessionId;
}

/**
 * Waits (polling, from the test) until `flag()` holds. Plain flags set by the model stand-in: a
 * promise resolved inside the object would carry the test's next steps into the object's I/O context.
 */
async function until(flag: () => boolean): Promise<boolean> {
  for (let i = 0; i < 200 && !flag(); i++) await new Promise((r) => setTimeout(r, 10));
  return flag();
}

describe("the session list during a manual compaction", () => {
  it("says running while it lasts and idle after, as the session itself does (hunt 32)", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    const sessionId = await compactableSession(async (body) => {
      started = true;
      await held;
      return text("## Goal\nthe summary")(body);
    });
    const listed = async () => {
      const { items } = (await (await api("/api/sessions?limit=200")).json()) as { items: { id: string; status: string }[] };
      return items.find((s) => s.id === sessionId)?.status;
    };
    const own = async () => ((await (await api(`/api/sessions/${sessionId}`)).json()) as { status: string }).status;
    const compaction = post(`/api/sessions/${sessionId}/compact`, {});
    expect(await until(() => started)).toBe(true);
    // The report goes to the tenant's index in the background.
    let during: string | undefined;
    for (let i = 0; i < 100 && during !== "running"; i++) {
      during = await listed();
      if (during !== "running") await new Promise((r) => setTimeout(r, 10));
    }
    expect([await own(), during]).toEqual(["running", "running"]);
    release();
    expect((await compaction).status).toBe(200);
    let after: string | undefined;
    for (let i = 0; i < 100 && after !== "idle"; i++) {
      after = await listed();
      if (after !== "idle") await new Promise((r) => setTimeout(r, 10));
    }
    expect([await own(), after]).toEqual(["idle", "idle"]);
  });
});

describe("deleting a session during a manual compaction", () => {
  it("cancels the summary request, answers the compaction 404 session_not_found, and the deletion completes", async () => {
    const summary = { started: false, cancelled: false };
    const sessionId = await compactableSession(async (_body, init) => {
      // The summary hangs until its request is cancelled.
      summary.started = true;
      await new Promise<void>((resolve) => init?.signal?.addEventListener("abort", () => resolve()));
      summary.cancelled = true;
      throw new DOMException("aborted", "AbortError");
    });
    const compaction = post(`/api/sessions/${sessionId}/compact`, {});
    expect(await until(() => summary.started)).toBe(true);
    const deleted = await api(`/api/sessions/${sessionId}`, { method: "DELETE" });
    expect([deleted.status, summary.cancelled]).toEqual([204, true]);
    const answer = await compaction;
    expect([answer.status, ((await answer.json()) as { error: { code: string; message: string } }).error]).toEqual([
      404,
      { code: "session_not_found", message: `session '${sessionId}' was deleted during the compaction`, requestId: expect.any(String) },
    ]);
    expect((await api(`/api/sessions/${sessionId}`)).status).toBe(404);
    expect((await env.STORE.list({ prefix: `sessions/${sessionId}/` })).objects).toEqual([]);
  });
});

describe("aborting a manual compaction (hunt 50)", () => {
  it("POST .../abort ends it: the compaction answers 409 compaction_aborted, the log closes it with compaction_failed run_aborted, and the session is free again", async () => {
    const summary = { started: false, cancelled: false, hang: true };
    const sessionId = await compactableSession(async (body, init) => {
      summary.started = true;
      if (!summary.hang) return text("## Goal\nsecond try")(body);
      await new Promise<void>((resolve) => init?.signal?.addEventListener("abort", () => resolve()));
      summary.cancelled = true;
      throw new DOMException("aborted", "AbortError");
    });
    const compaction = post(`/api/sessions/${sessionId}/compact`, {});
    expect(await until(() => summary.started)).toBe(true);
    const busy = await post(`/api/sessions/${sessionId}/messages/stream`, { text: "meanwhile" });
    expect([busy.status, ((await busy.json()) as { error: { code: string } }).error.code]).toEqual([409, "session_busy"]);
    const aborted = await post(`/api/sessions/${sessionId}/abort`, {});
    expect([aborted.status, await aborted.json()]).toEqual([200, { aborted: true, runId: null }]);
    const answer = await compaction;
    expect([answer.status, ((await answer.json()) as { error: Record<string, unknown> }).error, summary.cancelled]).toEqual([
      409,
      {
        code: "compaction_aborted",
        message: "the compaction was aborted before it finished; nothing was compacted",
        requestId: expect.any(String),
      },
      true,
    ]);
    const events = (await store.loadEventsAfter(sessionId, 0)).map(({ event }) => event);
    expect(
      events
        .filter((e) => e.type.startsWith("compaction_"))
        .map((e) => [e.type, "code" in e ? e.code : null, "message" in e ? e.message : null]),
    ).toEqual([
      ["compaction_started", null, null],
      ["compaction_failed", "run_aborted", "the compaction was aborted; nothing was compacted"],
    ]);
    expect(((await (await api(`/api/sessions/${sessionId}`)).json()) as { status: string }).status).toBe("idle");
    // Nothing left to abort; the session compacts and runs again.
    expect(await (await post(`/api/sessions/${sessionId}/abort`, {})).json()).toEqual({ aborted: false, runId: null });
    summary.hang = false;
    expect((await post(`/api/sessions/${sessionId}/compact`, {})).status).toBe(200);
    expect((await run(sessionId, { text: "after" })).at(-1)!.data.type).toBe("agent_completed");
  });
});

describe("a restart during a manual compaction", () => {
  it("closes its compaction_started with compaction_failed run_interrupted; the session compacts again afterwards", async () => {
    const state = { summaryStarted: false, hang: true };
    const sessionId = await compactableSession(async (body) => {
      state.summaryStarted = true;
      if (state.hang) await new Promise(() => {}); // the object dies while this request is open
      return text("## Goal\nsecond try")(body);
    });
    void post(`/api/sessions/${sessionId}/compact`, {}).then(
      (r) => r.body?.cancel(),
      () => {},
    );
    expect(await until(() => state.summaryStarted)).toBe(true);
    await abortAllDurableObjects();
    state.hang = false;
    // Any request wakes the object; its recovery ends the compaction that was cut off.
    const events = (await store.loadEventsAfter(sessionId, 0)).map(({ event }) => event);
    const compactionEvents = events.filter((e) => e.type.startsWith("compaction_")).map((e) => [e.type, "code" in e ? e.code : null]);
    expect(compactionEvents).toEqual([
      ["compaction_started", null],
      ["compaction_failed", "run_interrupted"],
    ]);
    const again = await post(`/api/sessions/${sessionId}/compact`, {});
    expect(again.status).toBe(200);
  });
});

describe("replay across a compaction", () => {
  it("replay:<id> plays a compacted session's turns in order, with its recorded summaries, and calls no model", async () => {
    const answers = Array.from({ length: 8 }, (_, i) => text(`answer ${i} ${"q".repeat(4_000)}`));
    const recorded = await session(answers, text("## Goal\nrecorded summary"));
    for (let i = 0; i < 8; i++) await run(recorded.sessionId, { text: `question ${i}`, contextWindow: 8_000 });
    const original = await store.loadMessages(recorded.sessionId);
    expect(original.filter((m) => m.kind === "compaction").length).toBeGreaterThanOrEqual(1);

    const replayed = await session([]);
    for (let i = 0; i < 8; i++) {
      const frames = await run(replayed.sessionId, { text: `question ${i}`, contextWindow: 8_000, model: `replay:${recorded.sessionId}` });
      expect(frames.at(-1)!.data).toMatchObject({ type: "agent_completed" });
    }
    expect(replayed.requests).toEqual([]);
    const copy = await store.loadMessages(replayed.sessionId);
    const shape = (messages: typeof copy) =>
      messages.map((m) =>
        m.kind === "assistant" ? m.text : m.kind === "compaction" ? `[${m.summary}]` : m.kind === "user" ? m.text : m.kind,
      );
    expect(shape(copy)).toEqual(shape(original));
  });
});

describe("overflow and accounting over HTTP", () => {
  it("a provider overflow with a failing summary ends the run with context_overflow; the next prompt works", async () => {
    const overflow = () =>
      jsonResponse(400, { error: { message: "This model's maximum context length is 8000 tokens", code: "context_length_exceeded" } });
    const { sessionId } = await session([text(`a ${"v".repeat(9_000)}`), text(`b ${"v".repeat(9_000)}`), overflow, text("fine")], () =>
      jsonResponse(400, { error: { message: "summary refused" } }),
    );
    await run(sessionId, { text: "one" });
    await run(sessionId, { text: "two" });
    const frames = await run(sessionId, { text: "three", contextWindow: 16_000 });
    const types = frames.map((f) => f.data.type);
    expect(types).toContain("compaction_failed");
    expect(frames.find((f) => f.data.type === "compaction_failed")!.data).toMatchObject({ code: "bad_request" });
    expect(frames.at(-1)!.data).toMatchObject({ type: "agent_error", code: "context_overflow" });
    const next = await run(sessionId, { text: "four" });
    expect(next.at(-1)!.data).toMatchObject({ type: "agent_completed" });
  });

  it("usage with cached and reasoning tokens, cost from the price table, thinking kept and streamed but never sent back", async () => {
    const thinking = () =>
      sseResponse(
        sse([
          chunk({ reasoning_content: "Let me think" }),
          chunk({ reasoning: " harder." }),
          chunk({ content: "42" }),
          chunk({}, "stop"),
          usage(1_000, 200, { prompt_tokens_details: { cached_tokens: 400 }, completion_tokens_details: { reasoning_tokens: 150 } }),
        ]),
      );
    const { sessionId, requests } = await session([thinking, text("ok")]);
    const frames = await run(sessionId, { text: "the answer?", model: "gpt-4o-mini" });
    expect(frames.filter((f) => f.data.type === "thinking_delta").map((f) => f.data.text)).toEqual(["Let me think", " harder."]);
    const [, assistant] = await store.loadMessages(sessionId);
    expect(assistant).toMatchObject({
      text: "42",
      thinking: "Let me think harder.",
      usage: { inputTokens: 1_000, outputTokens: 200, totalTokens: 1_200, cachedInputTokens: 400, reasoningTokens: 150 },
      // (600 x 0.15 + 400 x 0.075 + 200 x 0.6) / 1e6
      cost: 0.00024,
    });
    await run(sessionId, { text: "again", model: "gpt-4o-mini" });
    expect(JSON.stringify(requests[1])).not.toContain("Let me think");
    const info = (await (await api(`/api/sessions/${sessionId}`)).json()) as { usage: Record<string, unknown>; contextWindow: number };
    expect(info.contextWindow).toBe(128_000);
    expect(info.usage).toMatchObject({ outputTokens: 210, cachedInputTokens: 400, reasoningTokens: 150 });
    expect(info.usage.cost as number).toBeGreaterThan(0.00024);
  });
});
