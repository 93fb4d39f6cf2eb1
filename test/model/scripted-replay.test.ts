import { describe, expect, it } from "vitest";
import type { AgentMessage, AssistantMessage } from "../../src/domain";
import { counterIds } from "../../src/domain";
import { createModelClient, type ModelRequest, modelConfigFromEnv, ReplayModelClient } from "../../src/model";
import { ScriptedModelClient } from "../helpers/scripted-model";
import { chunk, collect, scriptedFetch, sse, sseResponse } from "./helpers";

const never = () => new AbortController().signal;
const req = (messages: AgentMessage[] = []): ModelRequest => ({ system: "sys", messages, tools: [] });
const meta = (id: string) => ({ id, sessionId: "s_rec", parentId: null, createdAt: "2026-11-30T00:00:00.000Z" });
const userMsg = (id: string, text: string): AgentMessage => ({ kind: "user", ...meta(id), text });
const asst = (id: string, fields: Partial<AssistantMessage>): AssistantMessage => ({
  kind: "assistant",
  ...meta(id),
  text: "",
  stopReason: "STOP",
  ...fields,
});

describe("ScriptedModelClient", () => {
  it("plays shorthand turns in order and defaults ids and stop reasons", async () => {
    const client = new ScriptedModelClient([
      {
        text: ["Let me ", "look."],
        toolCalls: [
          { name: "ls", arguments: { path: "." } },
          { id: "call_x", name: "read" },
        ],
      },
      { text: "Done.", usage: { inputTokens: 9, outputTokens: 2, totalTokens: 11 } },
      { reasoning: "hmm", text: "cut", stopReason: "LENGTH" },
    ]);
    expect(await collect(client.stream(req(), never()))).toEqual([
      { type: "text_delta", text: "Let me " },
      { type: "text_delta", text: "look." },
      { type: "tool_call", call: { id: "tc_1_1", name: "ls", arguments: { path: "." } } },
      { type: "tool_call", call: { id: "call_x", name: "read", arguments: {} } },
      { type: "done", stopReason: "TOOL_CALLS" },
    ]);
    expect(await collect(client.stream(req(), never()))).toEqual([
      { type: "text_delta", text: "Done." },
      { type: "done", stopReason: "STOP", usage: { inputTokens: 9, outputTokens: 2, totalTokens: 11 } },
    ]);
    expect(await collect(client.stream(req(), never()))).toEqual([
      { type: "reasoning_delta", text: "hmm" },
      { type: "text_delta", text: "cut" },
      { type: "done", stopReason: "LENGTH" },
    ]);
  });

  it("plays an event list exactly, an error turn, and ends with script_exhausted", async () => {
    const client = new ScriptedModelClient([
      [{ type: "text_delta", text: "raw" }],
      { text: "oops", error: { code: "rate_limited", message: "slow down" } },
    ]);
    expect(await collect(client.stream(req(), never()))).toEqual([{ type: "text_delta", text: "raw" }]);
    expect(await collect(client.stream(req(), never()))).toEqual([
      { type: "text_delta", text: "oops" },
      { type: "error", code: "rate_limited", message: "slow down" },
    ]);
    expect(await collect(client.stream(req(), never()))).toEqual([
      { type: "error", code: "script_exhausted", message: "the scripted model has 2 turn(s); call 3 has none" },
    ]);
  });

  it("records a deep copy of every request and can answer from the request", async () => {
    const history = [userMsg("m_1", "hi")];
    const client = new ScriptedModelClient([(request, call) => ({ text: `call ${call} saw ${request.messages.length} message(s)` })]);
    const events = await collect(client.stream(req(history), never()));
    history.push(userMsg("m_2", "later"));
    expect(events[0]).toEqual({ type: "text_delta", text: "call 1 saw 1 message(s)" });
    expect(client.requests).toEqual([{ system: "sys", messages: [userMsg("m_1", "hi")], tools: [] }]);
    expect(client.calls).toBe(1);
  });

  it("holds a paused turn until aborted, then ends with aborted", async () => {
    const controller = new AbortController();
    const client = new ScriptedModelClient([{ text: "working", pause: new Promise(() => {}), toolCalls: [{ name: "ls" }] }]);
    const events = [];
    for await (const event of client.stream(req(), controller.signal)) {
      events.push(event);
      if (event.type === "text_delta") controller.abort();
    }
    expect(events).toEqual([
      { type: "text_delta", text: "working" },
      { type: "error", code: "aborted", message: "the model request was aborted" },
    ]);
  });
});

describe("ReplayModelClient", () => {
  const recording: AgentMessage[] = [
    userMsg("m_1", "fix it"),
    asst("m_2", {
      text: "Looking.",
      stopReason: "TOOL_CALLS",
      toolCalls: [{ id: "call_orig1", name: "read", arguments: { path: "a.ts" } }],
      usage: { inputTokens: 10, outputTokens: 3, totalTokens: 13 },
    }),
    { kind: "tool_result", ...meta("m_3"), toolCallId: "call_orig1", toolName: "read", resultText: "old contents", error: false },
    asst("m_4", { text: "Fixed.", stopReason: "STOP" }),
  ];

  it("yields the k-th recorded assistant turn on the k-th call, keeping recorded tool call ids, then replay_exhausted", async () => {
    const client = new ReplayModelClient(recording);
    expect(await collect(client.stream(req(), never()))).toEqual([
      { type: "text_delta", text: "Looking." },
      { type: "tool_call", call: { id: "call_orig1", name: "read", arguments: { path: "a.ts" } } },
      { type: "done", stopReason: "TOOL_CALLS", usage: { inputTokens: 10, outputTokens: 3, totalTokens: 13 } },
    ]);
    expect(await collect(client.stream(req(), never()))).toEqual([
      { type: "text_delta", text: "Fixed." },
      { type: "done", stopReason: "STOP" },
    ]);
    expect(await collect(client.stream(req(), never()))).toEqual([
      { type: "error", code: "replay_exhausted", message: "the recording has 2 assistant turn(s); turn 3 was requested" },
    ]);
  });

  it("continues from the history when a new client is made for a later run", async () => {
    const client = new ReplayModelClient(recording);
    const history = [
      userMsg("m_9", "again"),
      asst("m_10", { text: "x", stopReason: "TOOL_CALLS", toolCalls: [{ id: "call_orig1", name: "read", arguments: {} }] }),
    ];
    expect(await collect(client.stream(req(history), never()))).toEqual([
      { type: "text_delta", text: "Fixed." },
      { type: "done", stopReason: "STOP" },
    ]);
  });

  it("answers a summary request with the summary recorded at the same point, whichever client (run) asks", async () => {
    const compaction = (id: string, summary: string): AgentMessage => ({
      kind: "compaction",
      ...meta(id),
      summary,
      firstKeptMessageId: "m_1",
      tokensBefore: 100,
      tokensAfter: 10,
    });
    const withSummaries = [
      userMsg("m_1", "one"),
      asst("m_2", { text: "a" }),
      asst("m_3", { text: "b" }),
      compaction("m_4", "SUMMARY after 2"),
      asst("m_5", { text: "c" }),
      compaction("m_6", "SUMMARY after 3"),
      asst("m_7", { text: "d" }),
    ];
    const summaryOf = async (client: ReplayModelClient, assistantTurns?: number) => {
      const events = await collect(
        client.stream({ ...req(), purpose: "compaction", ...(assistantTurns === undefined ? {} : { assistantTurns }) }, never()),
      );
      return events.find((e) => e.type === "text_delta")?.text;
    };
    // A new client per run, as the session makes them: each finds its own point.
    expect(await summaryOf(new ReplayModelClient(withSummaries), 2)).toBe("SUMMARY after 2");
    expect(await summaryOf(new ReplayModelClient(withSummaries), 3)).toBe("SUMMARY after 3");
    expect(await summaryOf(new ReplayModelClient(withSummaries), 9)).toBe("SUMMARY after 3");
    // An offset (a replay of a later run) shifts the point as it shifts turns.
    expect(await summaryOf(new ReplayModelClient(withSummaries, 1), 1)).toBe("SUMMARY after 2");
    // Without a count: in order, then the last again.
    const inOrder = new ReplayModelClient(withSummaries);
    expect([await summaryOf(inOrder), await summaryOf(inOrder), await summaryOf(inOrder)]).toEqual([
      "SUMMARY after 2",
      "SUMMARY after 3",
      "SUMMARY after 3",
    ]);
  });

  it("replays a recorded failed turn as replay_recorded_error", async () => {
    const client = new ReplayModelClient([asst("m_1", { text: "par", stopReason: "ERROR" })]);
    expect(await collect(client.stream(req(), never()))).toEqual([
      { type: "text_delta", text: "par" },
      { type: "error", code: "replay_recorded_error", message: "recorded turn 1 ended with ERROR" },
    ]);
  });

  it("loads the recording once through the loader, and reports a loader failure as replay_load_failed", async () => {
    const loaded: string[] = [];
    let fail = true;
    const client = new ReplayModelClient({
      sessionId: "s_rec",
      load: async (id) => {
        loaded.push(id);
        if (fail) throw new Error("no such session");
        return recording;
      },
    });
    expect(await collect(client.stream(req(), never()))).toEqual([
      { type: "error", code: "replay_load_failed", message: "could not load the recording of session s_rec: no such session" },
    ]);
    fail = false;
    expect((await collect(client.stream(req(), never()))).at(-1)).toEqual({
      type: "done",
      stopReason: "TOOL_CALLS",
      usage: { inputTokens: 10, outputTokens: 3, totalTokens: 13 },
    });
    expect((await collect(client.stream(req(), never()))).at(-1)).toEqual({ type: "done", stopReason: "STOP" });
    expect(loaded).toEqual(["s_rec", "s_rec"]);
  });
});

describe("createModelClient", () => {
  const noLoad = async (): Promise<AgentMessage[]> => {
    throw new Error("not expected");
  };

  it("chooses the replay client for replay:<sessionId>, with no key", async () => {
    const loaded: string[] = [];
    const client = createModelClient({}, "replay:s_rec", {
      loadMessages: async (id) => {
        loaded.push(id);
        return recordingOf("Hi.");
      },
    });
    expect(client).toBeInstanceOf(ReplayModelClient);
    expect(await collect(client.stream(req(), never()))).toEqual([
      { type: "text_delta", text: "Hi." },
      { type: "done", stopReason: "STOP" },
    ]);
    expect(loaded).toEqual(["s_rec"]);
  });

  it("refuses a malformed replay id with bad_request", async () => {
    const client = createModelClient({ apiKey: "k" }, "replay:../x", { loadMessages: noLoad });
    expect(await collect(client.stream(req(), never()))).toEqual([
      {
        type: "error",
        code: "bad_request",
        message: "'replay:../x' is not a replay model: write replay:<sessionId>, e.g. replay:s_abc123",
      },
    ]);
  });

  it("gives model_not_configured as an event when the API key is missing or blank", async () => {
    for (const apiKey of [undefined, "  "]) {
      const client = createModelClient({ apiKey, model: "m" }, undefined, { loadMessages: noLoad });
      const events = await collect(client.stream(req(), never()));
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ type: "error", code: "model_not_configured", message: expect.stringContaining("OPENAI_API_KEY") });
    }
  });

  it("gives model_not_configured when no model name is configured or requested", async () => {
    const client = createModelClient({ apiKey: "k" }, undefined, { loadMessages: noLoad });
    expect((await collect(client.stream(req(), never())))[0]).toMatchObject({
      type: "error",
      code: "model_not_configured",
      message: expect.stringContaining("MODEL"),
    });
  });

  it("builds the OpenAI client from env-style config, with the requested model overriding MODEL", async () => {
    const { fetch, calls } = scriptedFetch([sseResponse(sse([chunk({ content: "hey" }, "stop")]))]);
    const config = {
      ...modelConfigFromEnv({ OPENAI_API_KEY: "sk-env-key", OPENAI_BASE_URL: "https://gw.example.test/v1", MODEL: "default-model" }),
      fetch,
    };
    const client = createModelClient(config, "requested-model", { loadMessages: noLoad, ids: counterIds() });
    expect(await collect(client.stream(req(), never()))).toEqual([
      { type: "text_delta", text: "hey" },
      { type: "done", stopReason: "STOP" },
    ]);
    expect(calls[0]!.url).toBe("https://gw.example.test/v1/chat/completions");
    expect(calls[0]!.body.model).toBe("requested-model");
    expect(calls[0]!.headers.get("authorization")).toBe("Bearer sk-env-key");
  });
});

function recordingOf(text: string): AgentMessage[] {
  return [userMsg("m_1", "hello"), asst("m_2", { text })];
}
