import { describe, expect, it } from "vitest";
import { type AgentMessage, type AgentRunOptions, safeRunOptions } from "../../src/domain";
import type { ModelClient } from "../../src/model";
import { type RunContext, runAgent, WARM_UP_AFTER_MS } from "../../src/runtime/agent-runtime";
import type { ToolRunner } from "../../src/tools/execution-service";
import { FakeToolRunner, MemoryRunLog, runDeps } from "../helpers/run-fixtures";
import { ScriptedModelClient, type ScriptedTurn, type ScriptedTurnShorthand } from "../helpers/scripted-model";

const T = "2026-11-30T03:00:00.000Z";

function setup(turns: ScriptedTurn[], opts: { tools?: ToolRunner | null; history?: AgentMessage[]; signal?: AbortSignal } = {}) {
  const log = new MemoryRunLog();
  const model = new ScriptedModelClient(turns);
  const ctx: RunContext = {
    sessionId: "s_1",
    runId: "r_1",
    workspaceId: opts.tools === null ? null : "w_1",
    history: opts.history ?? [],
    setup: { ok: true, model, tools: opts.tools === undefined ? new FakeToolRunner() : opts.tools },
    log,
    signal: opts.signal ?? new AbortController().signal,
    ...runDeps(),
  };
  return { log, model, ctx };
}

const run = (text: string, ctx: RunContext, options: Partial<AgentRunOptions> = {}) =>
  runAgent(text, { ...safeRunOptions(), ...options }, ctx);

describe("AgentRuntime", () => {
  it("tool_call_finished names its tool_result message and carries the result's first line", async () => {
    const tools = new FakeToolRunner(() => ({ outcome: "finished", text: `line one\nline two`, error: false }));
    const { log, ctx } = setup([{ toolCalls: [{ id: "call_A", name: "read", arguments: { path: "a" } }] }, { text: "done" }], { tools });
    await run("go", ctx);
    const finished = log.events.find((e) => e.type === "tool_call_finished");
    const result = log.messages.find((m) => m.kind === "tool_result");
    expect(finished).toMatchObject({ callId: "call_A", tool: "read", error: false, messageId: result!.id, summary: "line one" });
    expect(result).toMatchObject({ toolCallId: "call_A", resultText: "line one\nline two" });
  });

  it("a tool call id the history already holds gets a fresh one (servers that count from call_0 every turn)", async () => {
    const earlier: AgentMessage[] = [
      { id: "m_1", sessionId: "s_1", parentId: null, createdAt: T, kind: "user", text: "before" },
      {
        id: "m_2",
        sessionId: "s_1",
        parentId: "m_1",
        createdAt: T,
        kind: "assistant",
        text: "",
        stopReason: "TOOL_CALLS",
        toolCalls: [{ id: "call_0", name: "ls", arguments: {} }],
      },
      {
        id: "m_3",
        sessionId: "s_1",
        parentId: "m_2",
        createdAt: T,
        kind: "tool_result",
        toolCallId: "call_0",
        toolName: "ls",
        resultText: "a",
        error: false,
      },
    ];
    const { log, ctx } = setup(
      [
        { toolCalls: [{ id: "call_0", name: "read", arguments: { path: "a" } }] },
        {
          toolCalls: [
            { id: "call_0", name: "read", arguments: { path: "b" } },
            { id: "call_1", name: "ls", arguments: {} },
          ],
        },
        { text: "done" },
      ],
      { history: earlier },
    );
    await run("go", ctx);
    const calls = log.messages.flatMap((m) => (m.kind === "assistant" ? (m.toolCalls ?? []).map((c) => c.id) : []));
    expect(calls).toHaveLength(3);
    expect(new Set([...calls, "call_0"]).size).toBe(4);
    expect(calls[2]).toBe("call_1");
    const results = log.messages.flatMap((m) => (m.kind === "tool_result" ? [m.toolCallId] : []));
    expect(results).toEqual(calls);
    expect(log.events.filter((e) => e.type === "tool_call_started").map((e) => (e as { callId: string }).callId)).toEqual(calls);
  });

  it("lets the tools warm up while a slow model answers, stops the warm-up when the answer is in, and not for a quick answer or no tools", async () => {
    const warmups: AbortSignal[] = [];
    class WarmingTools extends FakeToolRunner {
      async warmUp(signal: AbortSignal): Promise<void> {
        warmups.push(signal);
      }
    }
    const seen: boolean[][] = [];
    const answer = (turn: ScriptedTurnShorthand) => () => {
      seen.push(warmups.map((s) => s.aborted));
      return turn;
    };
    const read = (id: string) => ({ id, name: "read", arguments: { path: "a" } });
    const { ctx, model } = setup(
      [answer({ toolCalls: [read("call_A")] }), answer({ toolCalls: [read("call_B"), read("call_C")] }), answer({ text: "done" })],
      {
        tools: new WarmingTools((call) =>
          call.id === "call_C"
            ? { outcome: "denied", reason: "tool_budget_exhausted", text: "tool_budget_exhausted: no calls left" }
            : { outcome: "finished", text: "ok", error: false },
        ),
      },
    );
    // The first and last answers take longer than WARM_UP_AFTER_MS, the second comes at once.
    const delays = [WARM_UP_AFTER_MS + 40, 0, WARM_UP_AFTER_MS + 40];
    let call = 0;
    const slow: ModelClient = {
      async *stream(request, signal) {
        await new Promise((resolve) => setTimeout(resolve, delays[call++]));
        yield* model.stream(request, signal);
      },
    };
    if (ctx.setup.ok) ctx.setup = { ...ctx.setup, model: slow };
    // The third call is denied for the budget: the last turn offers no tools, so nothing warms up.
    expect(await run("go", ctx)).toEqual({ stopReason: "STOP" });
    expect(seen).toEqual([[false], [true], [true]]);
    expect(warmups.map((s) => s.aborted)).toEqual([true]);
  });

  it("a plain answer: events in order, user and assistant messages linked", async () => {
    const { log, ctx } = setup([{ text: ["Hel", "lo"], usage: { inputTokens: 7, outputTokens: 2, totalTokens: 9 } }]);
    expect(await run("hi", ctx)).toEqual({ stopReason: "STOP" });
    // Frozen clock: the first delta goes out at once, the second is held until the turn ends.
    expect(log.types()).toEqual([
      "agent_started",
      "user_message_appended",
      "assistant_delta",
      "assistant_delta",
      "assistant_completed",
      "agent_completed",
    ]);
    expect(log.messages).toEqual([
      { kind: "user", id: "m_1", sessionId: "s_1", parentId: null, createdAt: T, text: "hi" },
      {
        kind: "assistant",
        id: "m_2",
        sessionId: "s_1",
        parentId: "m_1",
        createdAt: T,
        text: "Hello",
        stopReason: "STOP",
        usage: { inputTokens: 7, outputTokens: 2, totalTokens: 9 },
      },
    ]);
    expect(log.events[0]).toEqual({ type: "agent_started", eventId: "e_1", sessionId: "s_1", createdAt: T, runId: "r_1" });
    expect(log.events[1]).toMatchObject({ type: "user_message_appended", messageId: "m_1" });
    expect(log.events[2]).toMatchObject({ type: "assistant_delta", messageId: "m_2", text: "Hel" });
    expect(log.events[3]).toMatchObject({ type: "assistant_delta", messageId: "m_2", text: "lo" });
    expect(log.events[4]).toMatchObject({ type: "assistant_completed", messageId: "m_2", stopReason: "STOP" });
    expect(log.events[5]).toEqual({
      type: "agent_completed",
      eventId: "e_6",
      sessionId: "s_1",
      createdAt: T,
      runId: "r_1",
      stopReason: "STOP",
    });
  });

  it("runs tool calls, appends results and calls the model again with them", async () => {
    const tools = new FakeToolRunner((call) => ({ outcome: "finished", text: `contents of ${call.arguments.path}`, error: false }));
    const { log, model, ctx } = setup(
      [{ text: "Reading.", toolCalls: [{ id: "call_A", name: "read", arguments: { path: "README.md" } }] }, { text: "It says hi." }],
      { tools },
    );
    expect(await run("what is in the README?", ctx)).toEqual({ stopReason: "STOP" });
    expect(log.types()).toEqual([
      "agent_started",
      "user_message_appended",
      "assistant_delta",
      "assistant_completed",
      "tool_call_started",
      "tool_call_finished",
      "assistant_delta",
      "assistant_completed",
      "agent_completed",
    ]);
    expect(log.events[4]).toMatchObject({ callId: "call_A", tool: "read", arguments: { path: "README.md" } });
    expect(log.events[5]).toMatchObject({ callId: "call_A", tool: "read", error: false });
    expect(log.messages.map((m) => [m.kind, m.id, m.parentId])).toEqual([
      ["user", "m_1", null],
      ["assistant", "m_2", "m_1"],
      ["tool_result", "m_3", "m_2"],
      ["assistant", "m_4", "m_3"],
    ]);
    expect(log.messages[1]).toMatchObject({
      stopReason: "TOOL_CALLS",
      toolCalls: [{ id: "call_A", name: "read", arguments: { path: "README.md" } }],
    });
    expect(log.messages[2]).toMatchObject({ toolCallId: "call_A", toolName: "read", resultText: "contents of README.md", error: false });
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1]!.messages.map((m) => m.id)).toEqual(["m_1", "m_2", "m_3"]);
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(["read"]);
    expect(model.requests[0]!.system).toContain("Workspace: w_1.");
  });

  it("a denied call becomes tool_call_denied plus an error result, and the model continues", async () => {
    const tools = new FakeToolRunner(() => ({
      outcome: "denied",
      reason: "write_not_allowed",
      text: "write_not_allowed: this run is read-only",
    }));
    const { log, ctx } = setup(
      [{ toolCalls: [{ id: "c1", name: "write", arguments: { path: "a", content: "b" } }] }, { text: "ok, I cannot write" }],
      { tools },
    );
    expect(await run("write a", ctx)).toEqual({ stopReason: "STOP" });
    expect(log.types().slice(2, 5)).toEqual(["assistant_completed", "tool_call_started", "tool_call_denied"]);
    expect(log.events[4]).toMatchObject({ callId: "c1", tool: "write", reason: "write_not_allowed" });
    expect(log.messages[2]).toMatchObject({ kind: "tool_result", resultText: "write_not_allowed: this run is read-only", error: true });
  });

  it("an invalid tool call from the model is denied without executing", async () => {
    const tools = new FakeToolRunner();
    const { log, ctx } = setup(
      [
        [
          {
            type: "tool_call",
            call: { id: "c1", name: "read", arguments: {} },
            invalid: { code: "invalid_arguments", message: "arguments are not JSON: {pa", rawArguments: "{pa" },
          },
          { type: "done", stopReason: "TOOL_CALLS" },
        ],
        { text: "sorry" },
      ],
      { tools },
    );
    await run("go", ctx);
    expect(tools.executed).toEqual([]);
    expect(log.events[4]).toMatchObject({ type: "tool_call_denied", callId: "c1", tool: "read", reason: "invalid_arguments" });
    expect(log.messages[2]).toMatchObject({ resultText: "invalid_arguments: arguments are not JSON: {pa", error: true });
  });

  it("without a workspace no tools are offered and a call is unknown_tool", async () => {
    const { log, model, ctx } = setup([{ toolCalls: [{ id: "c1", name: "ls" }] }, { text: "no tools then" }], { tools: null });
    await run("ls", ctx);
    expect(model.requests[0]!.tools).toEqual([]);
    expect(model.requests[0]!.system).toContain("No workspace is attached");
    expect(log.events[4]).toMatchObject({ type: "tool_call_denied", callId: "c1", tool: "ls", reason: "unknown_tool" });
  });

  it("maxTurns ends the run with MAX_TURNS and agent_error", async () => {
    const looping = { toolCalls: [{ name: "read", arguments: { path: "x" } }] };
    const { log, model, ctx } = setup([looping, looping, looping]);
    expect(await run("loop", ctx, { maxTurns: 2 })).toEqual({
      stopReason: "MAX_TURNS",
      error: { code: "max_turns_reached", message: "the run used all 2 model turns" },
    });
    expect(model.calls).toBe(2);
    // The last turn describes the tools but may not call them (a model that does anyway still ends the run).
    expect(model.requests.map((r) => [r.tools.map((t) => t.name), r.toolChoice])).toEqual([
      [["read"], undefined],
      [["read"], "none"],
    ]);
    expect(log.types().slice(-3)).toEqual(["tool_call_finished", "assistant_completed", "agent_error"]);
    expect(log.messages.at(-1)).toMatchObject({ kind: "assistant", text: "", stopReason: "MAX_TURNS", parentId: log.messages.at(-2)!.id });
  });

  it("the last turn is for the answer: a model that honours tool_choice none answers instead of ending the run with max_turns_reached", async () => {
    const { log, model, ctx } = setup([{ toolCalls: [{ name: "read", arguments: { path: "a" } }] }, { text: "the answer" }]);
    expect(await run("go", ctx, { maxTurns: 2 })).toEqual({ stopReason: "STOP" });
    expect(model.requests.map((r) => r.toolChoice)).toEqual([undefined, "none"]);
    expect(model.requests[1]!.system).toContain(
      "On the last turn, and once the tool calls are used up, tools cannot be called: then answer with what you have.",
    );
    expect(log.messages.at(-1)).toMatchObject({ kind: "assistant", text: "the answer", stopReason: "STOP" });
  });

  it("a run whose tool calls are used up asks for the answer on the next turn, before any call is denied", async () => {
    const { log, model, ctx } = setup([{ toolCalls: [{ name: "read", arguments: { path: "a" } }] }, { text: "summary" }]);
    expect(await run("go", ctx, { maxToolCalls: 1 })).toEqual({ stopReason: "STOP" });
    expect(model.requests.map((r) => [r.tools.map((t) => t.name), r.toolChoice])).toEqual([
      [["read"], undefined],
      [["read"], "none"],
    ]);
    expect(log.events.filter((e) => e.type === "tool_call_denied")).toEqual([]);
  });

  it("maxToolCalls 0 describes the tools and forbids calling them from the first turn", async () => {
    const { model, ctx } = setup([{ text: "from memory" }]);
    expect(await run("go", ctx, { maxToolCalls: 0 })).toEqual({ stopReason: "STOP" });
    expect(model.requests.map((r) => [r.tools.map((t) => t.name), r.toolChoice])).toEqual([[["read"], "none"]]);
  });

  it("a call past the tool budget is denied and the next turn may not call tools", async () => {
    let calls = 0;
    const tools = new FakeToolRunner(() =>
      ++calls > 1
        ? { outcome: "denied", reason: "tool_budget_exhausted", text: "tool_budget_exhausted: 1 call allowed" }
        : { outcome: "finished", text: "ok", error: false },
    );
    const { log, model, ctx } = setup([{ toolCalls: [{ name: "read" }, { name: "read" }] }, { text: "summary" }], { tools });
    expect(await run("go", ctx, { maxToolCalls: 1 })).toEqual({ stopReason: "STOP" });
    // Described (the history holds calls, and some providers refuse that without tools), not callable.
    expect(model.requests.map((r) => [r.tools.map((t) => t.name), r.toolChoice])).toEqual([
      [["read"], undefined],
      [["read"], "none"],
    ]);
    expect(log.events.filter((e) => e.type === "tool_call_denied").map((e) => e.type === "tool_call_denied" && e.reason)).toEqual([
      "tool_budget_exhausted",
    ]);
  });

  it("a provider error ends with an ERROR assistant message and agent_error with the provider's code", async () => {
    const { log, ctx } = setup([{ text: "partial", error: { code: "rate_limited", message: "429 after 3 attempts" } }]);
    expect(await run("go", ctx)).toEqual({ stopReason: "ERROR", error: { code: "rate_limited", message: "429 after 3 attempts" } });
    expect(log.types()).toEqual(["agent_started", "user_message_appended", "assistant_delta", "assistant_completed", "agent_error"]);
    expect(log.messages[1]).toMatchObject({ kind: "assistant", text: "partial", stopReason: "ERROR" });
    expect(log.events[4]).toEqual({
      type: "agent_error",
      eventId: "e_5",
      sessionId: "s_1",
      createdAt: T,
      runId: "r_1",
      code: "rate_limited",
      message: "429 after 3 attempts",
    });
  });

  it("the timeout ends a hanging model turn with TIMEOUT", async () => {
    const { log, ctx } = setup([{ text: "thinking", pause: new Promise(() => {}) }]);
    expect(await run("go", ctx, { timeoutMs: 30 })).toEqual({
      stopReason: "TIMEOUT",
      error: { code: "run_timeout", message: "the run did not finish within 30 ms" },
    });
    expect(log.messages[1]).toMatchObject({ kind: "assistant", text: "thinking", stopReason: "TIMEOUT" });
    expect(log.types().at(-1)).toBe("agent_error");
  });

  it("an abort ends the run with ABORTED and agent_completed", async () => {
    const abort = new AbortController();
    const { log, ctx } = setup([{ text: "work", pause: new Promise(() => {}) }], { signal: abort.signal });
    const outcome = run("go", ctx);
    setTimeout(() => abort.abort(), 5);
    expect(await outcome).toEqual({ stopReason: "ABORTED" });
    expect(log.messages[1]).toMatchObject({ kind: "assistant", text: "work", stopReason: "ABORTED" });
    expect(log.events.at(-1)).toMatchObject({ type: "agent_completed", stopReason: "ABORTED" });
  });

  /** A run of one answer with read calls `ids`, whose tools finish with "done" after `each`; what it logged after the prompt. */
  async function abortedBatch(ids: string[], each: (abort: AbortController) => void) {
    const abort = new AbortController();
    const tools = new FakeToolRunner(() => {
      each(abort);
      return { outcome: "finished", text: "done", error: false };
    });
    const { log, ctx } = setup([{ toolCalls: ids.map((id) => ({ id, name: "read" })) }], { tools, signal: abort.signal });
    const outcome = await run("go", ctx);
    const logged = log.messages
      .slice(2)
      .map((m) => [m.kind, m.kind === "tool_result" ? m.resultText : m.kind === "assistant" ? m.stopReason : ""]);
    return { outcome, executed: tools.executed.map((c) => c.id), logged };
  }

  it("gives the event loop a turn between the calls of one answer: an abort arriving meanwhile skips the rest (hunt 72)", async () => {
    // Another request's abort, or the run's timer: it runs when the isolate gets a turn. Calls served
    // from memory never wait on I/O, so without a turn between them all three ran first.
    expect(await abortedBatch(["a", "b", "c"], (abort) => setTimeout(() => abort.abort(), 0))).toEqual({
      outcome: { stopReason: "ABORTED" },
      executed: ["a"],
      logged: [
        ["tool_result", "done"],
        ["tool_result", "not executed: the run was aborted"],
        ["tool_result", "not executed: the run was aborted"],
        ["assistant", "ABORTED"],
      ],
    });
  });

  it("an abort during tools records results for the calls it skips", async () => {
    expect(await abortedBatch(["a", "b"], (abort) => abort.abort())).toEqual({
      outcome: { stopReason: "ABORTED" },
      executed: ["a"],
      logged: [
        ["tool_result", "done"],
        ["tool_result", "not executed: the run was aborted"],
        ["assistant", "ABORTED"],
      ],
    });
  });

  it("a follow-up sends the earlier messages and links its user message to the last one", async () => {
    const history: AgentMessage[] = [
      { kind: "user", id: "m_a", sessionId: "s_1", parentId: null, createdAt: T, text: "first" },
      { kind: "assistant", id: "m_b", sessionId: "s_1", parentId: "m_a", createdAt: T, text: "answer", stopReason: "STOP" },
    ];
    const { log, model, ctx } = setup([{ text: "second answer" }], { history });
    await run("second", ctx);
    expect(log.messages[0]).toMatchObject({ kind: "user", parentId: "m_b", text: "second" });
    expect(model.requests[0]!.messages.map((m) => m.id)).toEqual(["m_a", "m_b", log.messages[0]!.id]);
  });

  it("coalesces tiny deltas: fewer events, same text", async () => {
    const chars = Array.from({ length: 600 }, (_, i) => String.fromCharCode(97 + (i % 26)));
    const { log, ctx } = setup([{ text: chars }]);
    await run("go", ctx);
    const deltas = log.events.filter((e) => e.type === "assistant_delta").map((e) => (e.type === "assistant_delta" ? e.text : ""));
    // Frozen clock: the first char goes out at once, then every 256 chars, then the rest at the end.
    expect(deltas.map((d) => d.length)).toEqual([1, 256, 256, 87]);
    expect(deltas.join("")).toBe(chars.join(""));
  });
});
