import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type AgentEvent, type AgentMessage, counterIds, safeRunOptions } from "../../src/domain";
import { NO_REPLY_TEXT } from "../../src/model";
import { INTERRUPTED_TOOL_RESULT_TEXT } from "../../src/runtime/run-closing";
import { DurableSessionStore } from "../../src/session/session-store";
import { T0, userMessage } from "../helpers/records";
import { readSse } from "../helpers/sse-client";
import { useSessionDeps } from "../helpers/test-worker";
import { chunk, sse, sseResponse } from "../model/helpers";

const store = new DurableSessionStore(env);

/** A session whose object died in the middle of run r_dead, after writing `records`. */
async function crashedSession(records: (AgentMessage | AgentEvent)[]) {
  const { id } = await store.create({});
  const startSeq = await runInDurableObject(
    store.stub(id),
    (_instance, state) => state.storage.sql.exec<{ seq: number }>(`SELECT IFNULL(MAX(seq), 0) AS seq FROM log`).one().seq,
  );
  await runInDurableObject(store.stub(id), (_instance, state) => {
    state.storage.sql.exec(`INSERT INTO runs (run_id, status, started_at, start_seq) VALUES ('r_dead', 'running', ?, ?)`, T0, startSeq);
  });
  for (const record of records) {
    if ("kind" in record) await store.appendMessage(id, { ...record, sessionId: id });
    else await store.appendEvent(id, { ...record, sessionId: id });
  }
  useSessionDeps(id, { ids: counterIds() });
  await abortAllDurableObjects();
  return id;
}

/** The events of `acceptedRun`'s session once its run is closed: one start, its prompt, its end. */
const ACCEPTED_RUN_CLOSED = [
  ["agent_started", ""],
  ["user_message_appended", "m_queued"],
  ["assistant_completed", "m_1"],
  ["agent_error", "run_interrupted"],
];

/** A session whose run r_dead was accepted (its command and prompt id stored) after message m_u, and nothing of it logged. */
async function acceptedRun() {
  const { id } = await store.create({});
  await store.appendMessage(id, userMessage(id, "m_u"));
  const command = { sessionId: id, userText: "fix the build", options: safeRunOptions() };
  await runInDurableObject(store.stub(id), (_instance, state) => {
    state.storage.sql.exec(
      `INSERT INTO runs (run_id, status, started_at, start_seq, command, user_message_id) VALUES ('r_dead', 'running', ?, 1, ?, 'm_queued')`,
      T0,
      JSON.stringify(command),
    );
  });
  return id;
}

const ev = (body: Record<string, unknown>, n: number) => ({ eventId: `e_run${n}`, sessionId: "", createdAt: T0, ...body }) as AgentEvent;
const msg = (body: Record<string, unknown>) => ({ sessionId: "", createdAt: T0, ...body }) as AgentMessage;
const shape = (events: AgentEvent[]) =>
  events.map((e) => [e.type, "code" in e ? e.code : "callId" in e ? e.callId : "messageId" in e ? e.messageId : ""]);

describe("a run interrupted by a crash is closed when the object restarts", () => {
  it("with no records of its own: an ERROR message and agent_error run_interrupted", async () => {
    const { id } = await store.create({});
    await store.appendMessage(id, userMessage(id, "m_u"));
    await runInDurableObject(store.stub(id), (_instance, state) => {
      state.storage.sql.exec(`INSERT INTO runs (run_id, status, started_at) VALUES ('r_dead', 'running', '2026-11-30T03:00:00.000Z')`);
    });
    await abortAllDurableObjects();

    expect((await store.info(id))!.status).toBe("idle");
    const events = await store.loadEvents(id);
    expect(events.map((e) => [e.type, e.type === "agent_error" ? e.code : "", e.type === "agent_error" ? e.runId : ""])).toEqual([
      ["assistant_completed", "", ""],
      ["agent_error", "run_interrupted", "r_dead"],
    ]);
    const messages = await store.loadMessages(id);
    expect(messages.map((m) => [m.kind, m.parentId, m.kind === "assistant" ? m.stopReason : ""])).toEqual([
      ["user", null, ""],
      ["assistant", "m_u", "ERROR"],
    ]);
    const runs = await runInDurableObject(store.stub(id), (_i, state) =>
      state.storage.sql.exec(`SELECT run_id, status, stop_reason FROM runs`).toArray(),
    );
    expect(runs).toEqual([{ run_id: "r_dead", status: "finished", stop_reason: "ERROR" }]);
  });

  it("its trace is ended too, so a verdict on it blames the restart (environment), not the agent", async () => {
    const { id } = await store.create({});
    await store.appendMessage(id, userMessage(id, "m_u"));
    await runInDurableObject(store.stub(id), (_instance, state) => {
      state.storage.sql.exec(`INSERT INTO runs (run_id, status, started_at, start_seq) VALUES ('r_dead', 'running', ?, 1)`, T0);
    });
    useSessionDeps(id, { ids: counterIds() });
    await abortAllDurableObjects();
    expect((await store.info(id))!.status).toBe("idle");
    const trace = (await (await exports.default.fetch(`http://localhost/api/sessions/${id}/trace`)).text())
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // The run never opened its trace: it is opened and ended with the code the run ended with.
    expect(trace.map((r) => [r.type, r.kind, r.runId, r.status ?? null, r.stopReason ?? null])).toEqual([
      ["span_start", "run", "r_dead", null, null],
      ["span_end", "run", "r_dead", "error", "run_interrupted"],
    ]);
    const verdict = await exports.default.fetch(`http://localhost/api/sessions/${id}/judgements`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ runId: "r_dead", judgeName: "ci", result: "fail", artifactRefs: ["src/a.ts"] }),
    });
    expect(verdict.status).toBe(201);
    const { attribution } = (await verdict.json()) as { attribution: { classification: string; caseId: string | null } };
    expect({ classification: attribution.classification, caseId: attribution.caseId }).toEqual({
      classification: "environment",
      caseId: null,
    });
  });

  it("accepted but stopped before it logged its start (as versions that logged it after the setup left it): the start and the prompt (under its announced id) are logged, then it is closed", async () => {
    const id = await acceptedRun();
    useSessionDeps(id, { ids: counterIds() });
    await abortAllDurableObjects();

    expect((await store.info(id))!.status).toBe("idle");
    expect(shape(await store.loadEvents(id))).toEqual(ACCEPTED_RUN_CLOSED);
    const messages = await store.loadMessages(id);
    expect(
      messages.map((m) => [m.kind, m.id, m.parentId, m.kind === "user" ? m.text : m.kind === "assistant" ? m.stopReason : ""]),
    ).toEqual([
      ["user", "m_u", null, "text of m_u"],
      ["user", "m_queued", "m_u", "fix the build"],
      ["assistant", "m_1", "m_queued", "ERROR"],
    ]);
  });

  it("started (its agent_started logged as it took the slot) but stopped before it logged its prompt: the prompt is logged, the start is not repeated", async () => {
    const id = await acceptedRun();
    await store.appendEvent(id, { ...ev({ type: "agent_started", runId: "r_dead" }, 1), sessionId: id });
    useSessionDeps(id, { ids: counterIds() });
    await abortAllDurableObjects();

    expect((await store.info(id))!.status).toBe("idle");
    expect(shape(await store.loadEvents(id))).toEqual(ACCEPTED_RUN_CLOSED);
    expect((await store.loadMessages(id)).map((m) => [m.kind, m.id, m.parentId])).toEqual([
      ["user", "m_u", null],
      ["user", "m_queued", "m_u"],
      ["assistant", "m_1", "m_queued"],
    ]);
  });

  it("in the middle of a tool call: every unanswered call gets an error tool_result, in call order", async () => {
    const calls = [
      { id: "tc_a", name: "read", arguments: { path: "a.txt" } },
      { id: "tc_b", name: "bash", arguments: { command: "sleep 100" } },
      { id: "tc_c", name: "read", arguments: { path: "c.txt" } },
    ];
    const id = await crashedSession([
      ev({ type: "agent_started", runId: "r_dead" }, 1),
      msg({ kind: "user", id: "m_u", parentId: null, text: "go" }),
      msg({ kind: "assistant", id: "m_a", parentId: "m_u", text: "", stopReason: "TOOL_CALLS", toolCalls: calls }),
      ev({ type: "tool_call_started", callId: "tc_a", tool: "read", arguments: {} }, 2),
      ev({ type: "tool_call_finished", callId: "tc_a", tool: "read", error: false }, 3),
      msg({ kind: "tool_result", id: "m_r", parentId: "m_a", toolCallId: "tc_a", toolName: "read", resultText: "A", error: false }),
      ev({ type: "tool_call_started", callId: "tc_b", tool: "bash", arguments: {} }, 4),
    ]);
    const messages = await store.loadMessages(id);
    expect(
      messages.map((m) => [m.kind, m.id, m.parentId, m.kind === "tool_result" ? m.toolCallId : m.kind === "assistant" ? m.stopReason : ""]),
    ).toEqual([
      ["user", "m_u", null, ""],
      ["assistant", "m_a", "m_u", "TOOL_CALLS"],
      ["tool_result", "m_r", "m_a", "tc_a"],
      ["tool_result", "m_1", "m_r", "tc_b"],
      ["tool_result", "m_2", "m_1", "tc_c"],
      ["assistant", "m_3", "m_2", "ERROR"],
    ]);
    expect(messages[3]).toMatchObject({ resultText: INTERRUPTED_TOOL_RESULT_TEXT, error: true, toolName: "bash" });
    expect(messages[4]).toMatchObject({ resultText: INTERRUPTED_TOOL_RESULT_TEXT, error: true, toolName: "read" });
    // Only the call that had started gets a tool_call_finished.
    expect(shape((await store.loadEvents(id)).slice(4))).toEqual([
      ["tool_call_finished", "tc_b"],
      ["assistant_completed", "m_3"],
      ["agent_error", "run_interrupted"],
    ]);
    expect((await store.loadEvents(id))[4]).toMatchObject({ messageId: "m_1", summary: INTERRUPTED_TOOL_RESULT_TEXT, error: true });

    // The next prompt sends a history every provider accepts: each call answered once, right after it.
    const requests: { messages: { role: string; tool_call_id?: string; tool_calls?: { id: string }[]; content: unknown }[] }[] = [];
    useSessionDeps(id, {
      modelFetch: async (_input, init) => {
        requests.push(JSON.parse(String(init?.body)));
        return sseResponse(sse([chunk({ content: "ok" }), chunk({}, "stop")]));
      },
    });
    const res = await exports.default.fetch(
      new Request(`http://localhost/api/sessions/${id}/messages/stream`, {
        method: "POST",
        body: JSON.stringify({ text: "again" }),
        headers: { "content-type": "application/json" },
      }),
    );
    expect((await readSse(res)).frames.at(-1)!.data.type).toBe("agent_completed");
    const sent = requests[0]!.messages;
    expect(sent.map((m) => [m.role, m.tool_call_id ?? m.tool_calls?.map((c) => c.id).join(",") ?? ""])).toEqual([
      ["system", ""],
      ["user", ""],
      ["assistant", "tc_a,tc_b,tc_c"],
      ["tool", "tc_a"],
      ["tool", "tc_b"],
      ["tool", "tc_c"],
      // The interrupted run never answered its tool results: a stand-in reply keeps roles in order (hunt 62).
      ["assistant", ""],
      ["user", ""],
    ]);
    expect(sent[4]!.content).toBe(INTERRUPTED_TOOL_RESULT_TEXT);
    expect(sent[6]!.content).toBe(NO_REPLY_TEXT);
  });

  it("in the middle of the model's answer: the closing message keeps the streamed text under the streamed id", async () => {
    const id = await crashedSession([
      ev({ type: "agent_started", runId: "r_dead" }, 1),
      msg({ kind: "user", id: "m_u", parentId: null, text: "go" }),
      ev({ type: "user_message_appended", messageId: "m_u" }, 2),
      ev({ type: "assistant_delta", messageId: "m_s", text: "Hello, " }, 3),
      ev({ type: "assistant_delta", messageId: "m_s", text: "wor" }, 4),
    ]);
    const messages = await store.loadMessages(id);
    expect(messages.at(-1)).toEqual({
      kind: "assistant",
      id: "m_s",
      sessionId: id,
      parentId: "m_u",
      createdAt: expect.any(String),
      text: "Hello, wor",
      stopReason: "ERROR",
    });
    expect(shape((await store.loadEvents(id)).slice(-2))).toEqual([
      ["assistant_completed", "m_s"],
      ["agent_error", "run_interrupted"],
    ]);
  });

  it("during the run's compaction: compaction_failed run_interrupted closes it before the run's end; a finished one stays", async () => {
    const id = await crashedSession([
      ev({ type: "agent_started", runId: "r_dead" }, 1),
      msg({ kind: "user", id: "m_u", parentId: null, text: "go" }),
      ev({ type: "user_message_appended", messageId: "m_u" }, 2),
      ev({ type: "compaction_started", reason: "threshold" }, 3),
      ev({ type: "compaction_failed", code: "provider_error", message: "first try" }, 4),
      ev({ type: "compaction_started", reason: "threshold" }, 5),
    ]);
    expect(shape((await store.loadEvents(id)).slice(-4))).toEqual([
      ["compaction_started", ""],
      ["compaction_failed", "run_interrupted"],
      ["assistant_completed", expect.any(String)],
      ["agent_error", "run_interrupted"],
    ]);
    const closed = (await store.loadEvents(id)).at(-3)!;
    expect(closed.type === "compaction_failed" && closed.message).toMatch(/^nothing was compacted: /);
  });
});
