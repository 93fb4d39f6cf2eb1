import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type AgentEvent, counterIds } from "../../src/domain";
import { DurableSessionStore } from "../../src/session/session-store";
import { readSse, type SseFrame } from "../helpers/sse-client";
import { useSessionDeps } from "../helpers/test-worker";
import { chunk, jsonResponse, sse, sseResponse, usageChunk } from "../model/helpers";

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const prompt = (id: string, body: unknown, headers: Record<string, string> = {}) =>
  api(`/api/sessions/${id}/messages/stream`, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });
const store = new DurableSessionStore(env);

type Answer = (body: Record<string, unknown>) => Response;

/** A session whose model requests are answered by `answers` (the k-th request gets the k-th answer). */
async function sessionWithModel(answers: Answer[]) {
  const res = await api("/api/sessions", { method: "POST" });
  const { sessionId } = (await res.json()) as { sessionId: string };
  const requests: Record<string, unknown>[] = [];
  useSessionDeps(sessionId, {
    ids: counterIds(),
    modelFetch: async (_input, init) => {
      const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
      requests.push(body);
      const answer = answers[requests.length - 1];
      if (!answer) throw new Error(`unexpected model request ${requests.length}`);
      return answer(body);
    },
  });
  return { sessionId, requests };
}

const textAnswer =
  (...parts: string[]): Answer =>
  () =>
    sseResponse(sse([...parts.map((p) => chunk({ content: p })), chunk({}, "stop"), usageChunk(12, 3)]));

/**
 * A model response whose SSE body the test releases chunk by chunk. The stream is created inside the
 * Durable Object (I/O objects cannot cross objects), and it polls a plain queue the test fills.
 */
function gatedAnswer() {
  const queue: (string | null)[] = [];
  const encoder = new TextEncoder();
  let cancelled = false;
  const answer: Answer = () =>
    sseResponse(
      new ReadableStream<Uint8Array>({
        cancel: () => {
          cancelled = true;
        },
        async pull(controller) {
          while (queue.length === 0) {
            if (cancelled) return;
            await new Promise((r) => setTimeout(r, 5));
          }
          const next = queue.shift()!;
          if (next === null) return controller.close();
          controller.enqueue(encoder.encode(next));
        },
      }),
    );
  return {
    answer,
    send: (text: string) => queue.push(sse([chunk({ content: text })], { done: false })),
    finish: () => queue.push(sse([chunk({}, "stop")]), null),
  };
}

const types = (frames: SseFrame[]) => frames.map((f) => f.data.type);

async function eventsWithSeq(sessionId: string): Promise<{ seq: number; event: AgentEvent }[]> {
  return store.loadEventsAfter(sessionId, 0);
}

async function waitForStatus(sessionId: string, status: string) {
  for (let i = 0; i < 200; i++) {
    if ((await store.info(sessionId))!.status === status) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`session never became ${status}`);
}

describe("POST /api/sessions/:id/messages/stream", () => {
  it("streams the run as SSE frames with seq ids and stores the messages", async () => {
    const { sessionId, requests } = await sessionWithModel([textAnswer("Hello", " world")]);
    const res = await prompt(sessionId, { text: "say hello" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(res.headers.get("x-run-id")).toBe("r_1");
    const { frames, ended } = await readSse(res);
    expect(ended).toBe(true);
    expect(new Set(frames.map((f) => f.event))).toEqual(new Set(["agent_event"]));
    expect(types(frames)).toEqual([
      "agent_started",
      "user_message_appended",
      "assistant_delta",
      "assistant_delta",
      "assistant_completed",
      "agent_completed",
    ]);
    // SSE ids are the log seqs of exactly these events.
    expect(frames.map((f) => f.id)).toEqual((await eventsWithSeq(sessionId)).map((e) => e.seq));
    // ...and each frame's data is the stored event with its seq first.
    expect(frames.map((f) => f.data)).toEqual((await eventsWithSeq(sessionId)).map((e) => ({ seq: e.seq, ...e.event })));
    expect(frames.map((f) => Object.keys(f.data)[0])).toEqual(frames.map(() => "seq"));

    const messages = await store.loadMessages(sessionId);
    expect(messages.map((m) => m.kind)).toEqual(["user", "assistant"]);
    expect(messages[1]).toMatchObject({
      text: "Hello world",
      stopReason: "STOP",
      parentId: messages[0]!.id,
      usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 },
    });
    expect(requests[0]).toMatchObject({ model: "test-model", stream: true, stream_options: { include_usage: true } });
    expect((requests[0]!.messages as { role: string }[]).map((m) => m.role)).toEqual(["system", "user"]);
    expect((await store.info(sessionId))!.status).toBe("idle");
    // The run's end flushed the log to R2.
    const listed = await env.STORE.list({ prefix: `sessions/${sessionId}/events/` });
    expect(listed.objects.length).toBe(1);
  });

  it("a follow-up sends the earlier messages, links to the previous message and may override the model", async () => {
    const { sessionId, requests } = await sessionWithModel([textAnswer("first answer"), textAnswer("second answer")]);
    await readSse(await prompt(sessionId, { text: "first" }));
    await readSse(await prompt(sessionId, { text: "second", model: "other-model" }));
    const sent = requests[1]!.messages as { role: string; content: string }[];
    expect(sent.map((m) => [m.role, m.content])).toEqual([
      ["system", expect.any(String)],
      ["user", "first"],
      ["assistant", "first answer"],
      ["user", "second"],
    ]);
    expect(requests[1]!.model).toBe("other-model");
    const messages = await store.loadMessages(sessionId);
    expect(messages.map((m) => m.parentId)).toEqual([null, messages[0]!.id, messages[1]!.id, messages[2]!.id]);
  });

  it("a provider failure ends with agent_error and an ERROR message; the session stays usable", async () => {
    const overflow = () =>
      jsonResponse(400, { error: { message: "This model's maximum context length is 8192 tokens", code: "context_length_exceeded" } });
    const { sessionId } = await sessionWithModel([overflow, textAnswer("fine now")]);
    const { frames } = await readSse(await prompt(sessionId, { text: "too long" }));
    expect(types(frames)).toEqual(["agent_started", "user_message_appended", "assistant_completed", "agent_error"]);
    expect(frames[3]!.data).toMatchObject({ code: "context_overflow", runId: "r_1" });
    expect((await store.loadMessages(sessionId))[1]).toMatchObject({ kind: "assistant", stopReason: "ERROR", text: "" });
    const again = await readSse(await prompt(sessionId, { text: "short" }));
    expect(types(again.frames).at(-1)).toBe("agent_completed");
    // The key never reaches the log.
    const jsonl = await (await api(`/api/sessions/${sessionId}/events`)).text();
    expect(jsonl).not.toContain("sk-test-SECRET");
  });

  it("429 with Retry-After is retried inside the run; the client sees one clean answer", async () => {
    const limited = () => jsonResponse(429, { error: { message: "slow down" } }, { "retry-after": "0" });
    const { sessionId, requests } = await sessionWithModel([limited, textAnswer("after the retry")]);
    const { frames } = await readSse(await prompt(sessionId, { text: "go" }));
    expect(requests).toHaveLength(2);
    expect(types(frames)).toEqual([
      "agent_started",
      "user_message_appended",
      "model_retry",
      "assistant_delta",
      "assistant_completed",
      "agent_completed",
    ]);
    expect(frames[2]!.data).toMatchObject({ runId: "r_1", attempt: 1, maxAttempts: 3, delayMs: 0, code: "rate_limited" });
    expect(frames[3]!.data.text).toBe("after the retry");
  });

  it("an error inside a 200 stream and a dropped connection end the run with agent_error", async () => {
    const inStream: Answer = () =>
      sseResponse(sse([chunk({ content: "par" }), { error: { message: "upstream exploded", type: "server_error" } }], { done: false }));
    const dropped: Answer = () =>
      sseResponse(
        new ReadableStream<Uint8Array>({
          // First read: a chunk; second read: the connection breaks (after output, so no retry).
          pull(this: { sent: boolean }, controller: ReadableStreamDefaultController<Uint8Array>) {
            if (this.sent) return controller.error(new Error("connection reset"));
            this.sent = true;
            controller.enqueue(new TextEncoder().encode(sse([chunk({ content: "half" })], { done: false })));
          },
          sent: false,
        } as UnderlyingSource<Uint8Array> & { sent: boolean }),
      );
    const { sessionId } = await sessionWithModel([inStream, dropped]);
    const first = await readSse(await prompt(sessionId, { text: "one" }));
    expect(first.frames.at(-1)!.data).toMatchObject({ type: "agent_error", code: "provider_error" });
    const second = await readSse(await prompt(sessionId, { text: "two" }));
    expect(second.frames.at(-1)!.data).toMatchObject({ type: "agent_error", code: "network_error" });
    const assistants = (await store.loadMessages(sessionId)).filter((m) => m.kind === "assistant");
    expect(assistants.map((m) => m.kind === "assistant" && [m.text, m.stopReason])).toEqual([
      ["par", "ERROR"],
      ["half", "ERROR"],
    ]);
  });

  it("a run whose history cannot be read ends with agent_error instead of hanging", async () => {
    const { sessionId } = await sessionWithModel([textAnswer("first"), textAnswer("never sent")]);
    await readSse(await prompt(sessionId, { text: "one" }));
    await waitForStatus(sessionId, "idle");
    await store.stub(sessionId).flush();
    // Lose the flushed segment behind the session's back, and drop the in-memory history as a restart
    // would. The object keeps a copy of its recent messages in SQLite, which would answer instead of
    // R2: drop it too, as an object from before the copy has none.
    const listed = await env.STORE.list({ prefix: `sessions/${sessionId}/messages/` });
    expect(listed.objects.length).toBe(1);
    await env.STORE.delete(listed.objects.map((o) => o.key));
    await runInDurableObject(store.stub(sessionId), (_i, state) => {
      state.storage.sql.exec(`UPDATE log SET body = NULL, parts = 0 WHERE seq <= (SELECT flushed_seq FROM flush_state)`);
      state.storage.sql.exec(`UPDATE flush_state SET kept_from = flushed_seq + 1, kept_bytes = 0`);
    });
    await abortAllDurableObjects();
    const { frames, ended } = await readSse(await prompt(sessionId, { text: "two" }));
    expect(ended).toBe(true);
    // Like every run's, its stream begins with agent_started and its prompt, then it is closed.
    expect(types(frames)).toEqual(["agent_started", "user_message_appended", "assistant_completed", "agent_error"]);
    expect(frames[3]!.data).toMatchObject({
      code: "history_unreadable",
      message: expect.stringMatching(
        /^the run could not start: the session's history could not be read \(segment sessions\/.+ is missing from R2\)$/,
      ),
    });
    expect((await store.info(sessionId))!.status).toBe("idle");
  });

  it("400 for blank text, out-of-range limits and unknown fields", async () => {
    const { sessionId } = await sessionWithModel([]);
    const code = async (body: unknown) =>
      ((await (await prompt(sessionId, body)).json()) as { error: { code: string; message: string } }).error;
    expect(await code({ text: "   " })).toMatchObject({ code: "invalid_body", message: "invalid request body: text: must not be blank" });
    expect((await code({ text: "x", maxTurns: 0 })).message).toMatch(/^invalid request body: maxTurns: /);
    expect((await code({ text: "x", timeoutMs: 10_000_000 })).message).toMatch(/^invalid request body: timeoutMs: /);
    expect((await code({ text: "x", allowWrite: "yes" })).message).toMatch(/^invalid request body: allowWrite: /);
    expect(await code({ text: "x", sudo: true })).toMatchObject({
      code: "invalid_body",
      message: 'invalid request body: Unrecognized key: "sudo"',
    });
    expect((await prompt("s_nope", { text: "x" })).status).toBe(404);
    expect(await store.loadMessages(sessionId)).toEqual([]);
  });
});

describe("busy, abort, disconnect and resume", () => {
  it("409 session_busy while a run is active; abort ends it with ABORTED", async () => {
    const gate = gatedAnswer();
    const { sessionId } = await sessionWithModel([gate.answer]);
    const first = await prompt(sessionId, { text: "long task" });
    gate.send("working");
    await waitForStatus(sessionId, "running");
    const busy = await prompt(sessionId, { text: "another" });
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { error: { code: string } }).error.code).toBe("session_busy");

    const abort = await api(`/api/sessions/${sessionId}/abort`, { method: "POST" });
    expect(await abort.json()).toEqual({ aborted: true, runId: "r_1" });
    const { frames, ended } = await readSse(first);
    expect(ended).toBe(true);
    expect(types(frames).slice(-2)).toEqual(["assistant_completed", "agent_completed"]);
    expect(frames.at(-1)!.data).toMatchObject({ stopReason: "ABORTED" });
    expect((await store.loadMessages(sessionId)).at(-1)).toMatchObject({ kind: "assistant", stopReason: "ABORTED", text: "working" });
    expect(await (await api(`/api/sessions/${sessionId}/abort`, { method: "POST" })).json()).toEqual({ aborted: false, runId: null });
  });

  it("an abort that names its run stops only that run: one that ended is not mistaken for the next (hunt 69)", async () => {
    const [one, two] = [gatedAnswer(), gatedAnswer()];
    const { sessionId } = await sessionWithModel([one.answer, two.answer]);
    const abort = (body: unknown) =>
      api(`/api/sessions/${sessionId}/abort`, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json" },
      });
    const first = await prompt(sessionId, { text: "first" });
    one.send("done");
    one.finish();
    expect((await readSse(first)).ended).toBe(true);
    const second = await prompt(sessionId, { text: "second" });
    two.send("working");
    await waitForStatus(sessionId, "running");

    // The first run's Ctrl-C, arriving late: nothing is aborted, and the second run goes on.
    expect(await (await abort({ runId: "r_1" })).json()).toEqual({ aborted: false, runId: "r_1" });
    expect(((await (await api(`/api/sessions/${sessionId}`)).json()) as { status: string }).status).toBe("running");
    expect(await (await abort({ runId: "r_2" })).json()).toEqual({ aborted: true, runId: "r_2" });
    expect((await readSse(second)).frames.at(-1)!.data).toMatchObject({ type: "agent_completed", stopReason: "ABORTED" });
    const refused = await abort({ runId: "not a run" });
    expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_body"]);
  });

  it("a client that disconnects does not cancel the run; resuming yields exactly the remaining events", async () => {
    const gate = gatedAnswer();
    const { sessionId } = await sessionWithModel([gate.answer]);
    const res = await prompt(sessionId, { text: "go" });
    gate.send("one ");
    const seen = await readSse(res, 3); // agent_started, user_message_appended, first delta; then hang up
    expect(seen.ended).toBe(false);
    expect(types(seen.frames)).toEqual(["agent_started", "user_message_appended", "assistant_delta"]);
    // The run keeps going without a reader.
    await new Promise((r) => setTimeout(r, 60)); // let the coalescing interval pass between deltas
    gate.send("two ");
    await new Promise((r) => setTimeout(r, 60));
    gate.send("three");
    gate.finish();
    await waitForStatus(sessionId, "idle");

    const lastId = seen.frames.at(-1)!.id;
    const resumed = await readSse(await api(`/api/sessions/${sessionId}/events/stream`, { headers: { "last-event-id": String(lastId) } }));
    expect(resumed.ended).toBe(true);
    const all = await eventsWithSeq(sessionId);
    expect(resumed.frames.map((f) => f.id)).toEqual(all.filter((e) => e.seq > lastId).map((e) => e.seq));
    expect([...seen.frames, ...resumed.frames].map((f) => f.data)).toEqual(all.map((e) => ({ seq: e.seq, ...e.event })));
    expect(types(resumed.frames).at(-1)).toBe("agent_completed");
    const messages = await store.loadMessages(sessionId);
    expect(messages.map((m) => [m.kind, m.kind === "assistant" ? m.text : ""])).toEqual([
      ["user", ""],
      ["assistant", "one two three"],
    ]);
  });

  it("resuming during a run replays, then tails live until the run ends (no duplicates, no gaps)", async () => {
    const gate = gatedAnswer();
    const { sessionId } = await sessionWithModel([gate.answer]);
    const original = prompt(sessionId, { text: "go" });
    gate.send("a");
    await waitForStatus(sessionId, "running");
    const tail = readSse(await api(`/api/sessions/${sessionId}/events/stream?after=0`));
    await new Promise((r) => setTimeout(r, 60));
    gate.send("b");
    gate.finish();
    const [{ frames }, first] = await Promise.all([tail, original.then((r) => readSse(r))]);
    const all = await eventsWithSeq(sessionId);
    expect(frames.map((f) => f.id)).toEqual(all.map((e) => e.seq));
    expect(first.frames.map((f) => f.id)).toEqual(all.map((e) => e.seq));
    expect(types(frames).at(-1)).toBe("agent_completed");
  });

  it("with no active run the stream replays and ends; a bad Last-Event-ID is a 400", async () => {
    const { sessionId } = await sessionWithModel([textAnswer("done")]);
    await readSse(await prompt(sessionId, { text: "go" }));
    const all = await eventsWithSeq(sessionId);
    const after = all[2]!.seq;
    const { frames, ended } = await readSse(await api(`/api/sessions/${sessionId}/events/stream?after=${after}`));
    expect(ended).toBe(true);
    expect(frames.map((f) => f.id)).toEqual(all.slice(3).map((e) => e.seq));
    const bad = await api(`/api/sessions/${sessionId}/events/stream`, { headers: { "last-event-id": "-1" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_last_event_id");
  });

  it("a stream opens with a retry: field; 204 once the run has ended and nothing is after Last-Event-ID", async () => {
    const { sessionId } = await sessionWithModel([textAnswer("done")]);
    const res = await prompt(sessionId, { text: "go" });
    expect((await res.clone().text()).startsWith("retry: 2000\n\n")).toBe(true);
    await readSse(res);
    const last = (await eventsWithSeq(sessionId)).at(-1)!.seq;
    const caughtUp = await api(`/api/sessions/${sessionId}/events/stream`, { headers: { "last-event-id": String(last) } });
    expect(caughtUp.status).toBe(204);
    expect(await caughtUp.text()).toBe("");
    expect(caughtUp.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    // An id past the session's newest seq was never sent by it: refused, not answered as caught up.
    const past = await api(`/api/sessions/${sessionId}/events/stream?after=${last + 5}`);
    expect([past.status, ((await past.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_last_event_id"]);
    // A session that never ran has nothing to send either.
    const { sessionId: idle } = await sessionWithModel([]);
    expect((await api(`/api/sessions/${idle}/events/stream`)).status).toBe(204);
  });
});
