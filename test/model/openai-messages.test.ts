import { describe, expect, it } from "vitest";
import type { AgentMessage, AssistantMessage, ToolCall } from "../../src/domain";
import { compactionText, MISSING_TOOL_RESULT_TEXT, NO_REPLY_TEXT, toOpenAIMessages, toOpenAITools } from "../../src/model";

let n = 0;
const base = () => ({ id: `m_${++n}`, sessionId: "s_1", parentId: null, createdAt: "2026-11-30T00:00:00.000Z" });
const user = (text: string): AgentMessage => ({ kind: "user", ...base(), text });
const assistant = (text: string, stopReason: AssistantMessage["stopReason"], toolCalls?: ToolCall[]): AgentMessage =>
  toolCalls ? { kind: "assistant", ...base(), text, stopReason, toolCalls } : { kind: "assistant", ...base(), text, stopReason };
const result = (toolCallId: string, resultText: string, error = false): AgentMessage => ({
  kind: "tool_result",
  ...base(),
  toolCallId,
  toolName: "read",
  resultText,
  error,
});
const call = (id: string, args: Record<string, unknown> = {}): ToolCall => ({ id, name: "read", arguments: args });
const wireCall = (id: string, args = "{}") => ({ id, type: "function", function: { name: "read", arguments: args } });

describe("toOpenAIMessages", () => {
  it("sends reasoning_content back on a tool-call turn whose provider streamed it there, and a call's extra_content (hunt 62)", () => {
    const signature = { google: { thought_signature: "c2ln" } };
    const history: AgentMessage[] = [
      user("which port?"),
      {
        kind: "assistant",
        ...base(),
        text: "",
        stopReason: "TOOL_CALLS",
        toolCalls: [{ ...call("c1"), extraContent: signature }],
        thinking: "Check the config.",
        thinkingField: "reasoning_content",
      },
      result("c1", "port = 8080"),
      { kind: "assistant", ...base(), text: "", stopReason: "TOOL_CALLS", toolCalls: [call("c2")], thinkingField: "reasoning_content" },
      result("c2", "ok"),
      { kind: "assistant", ...base(), text: "8080", stopReason: "STOP", thinking: "Done.", thinkingField: "reasoning_content" },
      { kind: "assistant", ...base(), text: "", stopReason: "TOOL_CALLS", toolCalls: [call("c3")], thinking: "from `reasoning`" },
      result("c3", "ok"),
    ];
    expect(toOpenAIMessages("", history)).toEqual([
      { role: "user", content: "which port?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ ...wireCall("c1"), extra_content: signature }],
        reasoning_content: "Check the config.",
      },
      { role: "tool", tool_call_id: "c1", content: "port = 8080" },
      // DeepSeek refuses a tool-call turn without the field, even when it had no reasoning.
      { role: "assistant", content: null, tool_calls: [wireCall("c2")], reasoning_content: "" },
      { role: "tool", tool_call_id: "c2", content: "ok" },
      { role: "assistant", content: "8080" },
      { role: "assistant", content: null, tool_calls: [wireCall("c3")] },
      { role: "tool", tool_call_id: "c3", content: "ok" },
    ]);
  });

  it("converts a whole conversation: system first, tool calls with verbatim ids, results as tool messages", () => {
    const history = [
      user("read a and b"),
      assistant("Reading.", "TOOL_CALLS", [call("call_A", { path: "a" }), call("tc_01B", { path: "b", nested: { x: [1, "é"] } })]),
      result("call_A", "contents of a"),
      result("tc_01B", "ENOENT: b", true),
      assistant("Both read.", "STOP"),
      user("thanks"),
    ];
    expect(toOpenAIMessages("sys", history)).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "read a and b" },
      {
        role: "assistant",
        content: "Reading.",
        tool_calls: [wireCall("call_A", '{"path":"a"}'), wireCall("tc_01B", '{"path":"b","nested":{"x":[1,"é"]}}')],
      },
      { role: "tool", tool_call_id: "call_A", content: "contents of a" },
      { role: "tool", tool_call_id: "tc_01B", content: "ENOENT: b" },
      { role: "assistant", content: "Both read." },
      { role: "user", content: "thanks" },
    ]);
  });

  it("sends content null for an assistant message with tool calls and no text", () => {
    expect(toOpenAIMessages("", [user("go"), assistant("", "TOOL_CALLS", [call("c1")]), result("c1", "ok")])).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [wireCall("c1")] },
      { role: "tool", tool_call_id: "c1", content: "ok" },
    ]);
  });

  it("drops ERROR, ABORTED and TIMEOUT assistant messages without tool calls, and empty assistant messages; the user messages around them join (hunt 62)", () => {
    const history = [
      user("a"),
      assistant("partial", "ABORTED"),
      assistant("", "ERROR"),
      assistant("late", "TIMEOUT"),
      assistant("", "STOP"),
      user("b"),
      assistant("fine", "LENGTH"),
    ];
    expect(toOpenAIMessages("s", history)).toEqual([
      { role: "system", content: "s" },
      // Two user messages in a row are refused by strict chat templates (roles must alternate).
      { role: "user", content: "a\n\nb" },
      { role: "assistant", content: "fine" },
    ]);
  });

  it("keeps roles alternating after a compaction, a steer and a failed first turn: every request a strict provider takes (hunt 62)", () => {
    const compaction: AgentMessage = {
      kind: "compaction",
      ...base(),
      summary: "S",
      firstKeptMessageId: "m_x",
      tokensBefore: 10,
      tokensAfter: 2,
    };
    const history = [
      compaction,
      user("next"),
      assistant("", "TOOL_CALLS", [call("c1")]),
      result("c1", "r"),
      user("steer"),
      assistant("ok", "STOP"),
    ];
    const out = toOpenAIMessages("sys", history);
    expect(out.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user", "assistant"]);
    expect(out[1]).toEqual({ role: "user", content: `${compactionText("S")}\n\nnext` });
    // The property itself: no user after user or tool, across the history shapes above.
    for (const shape of [
      history,
      [user("a"), assistant("", "ERROR"), user("b")],
      [user("a"), assistant("", "TOOL_CALLS", [call("c9")]), user("b")],
    ]) {
      const roles = toOpenAIMessages("", shape).map((m) => m.role);
      const pairs = roles.slice(1).map((role, i) => `${roles[i]}>${role}`);
      expect(pairs.filter((pair) => pair === "user>user" || pair === "tool>user")).toEqual([]);
    }
  });

  it("keeps an ERROR assistant message that has tool calls, with its results", () => {
    expect(toOpenAIMessages("", [assistant("x", "ERROR", [call("c1")]), result("c1", "r")])).toEqual([
      { role: "assistant", content: "x", tool_calls: [wireCall("c1")] },
      { role: "tool", tool_call_id: "c1", content: "r" },
    ]);
  });

  it("gives a call without a recorded result a synthetic error result before the next message", () => {
    const history = [assistant("", "TOOL_CALLS", [call("c1"), call("c2"), call("c3")]), result("c2", "two"), user("stop that")];
    expect(toOpenAIMessages("", history)).toEqual([
      { role: "assistant", content: null, tool_calls: [wireCall("c1"), wireCall("c2"), wireCall("c3")] },
      { role: "tool", tool_call_id: "c2", content: "two" },
      { role: "tool", tool_call_id: "c1", content: MISSING_TOOL_RESULT_TEXT },
      { role: "tool", tool_call_id: "c3", content: "No result provided" },
      // Mistral refuses a user message right after tool results.
      { role: "assistant", content: NO_REPLY_TEXT },
      { role: "user", content: "stop that" },
    ]);
  });

  it("gives unanswered calls at the end of the history a synthetic result too", () => {
    expect(toOpenAIMessages("", [assistant("", "TOOL_CALLS", [call("c1")])])).toEqual([
      { role: "assistant", content: null, tool_calls: [wireCall("c1")] },
      { role: "tool", tool_call_id: "c1", content: "No result provided" },
    ]);
  });

  it("sends a tool call id that an earlier call used under a new one, with its result (hunt 32: an imported history reusing call_0)", () => {
    const history = [
      user("go"),
      assistant("", "TOOL_CALLS", [call("call_0")]),
      result("call_0", "first"),
      assistant("", "TOOL_CALLS", [call("call_0"), call("call_0_2")]),
      result("call_0", "second"),
      result("call_0_2", "third"),
      assistant("", "TOOL_CALLS", [call("call_0")]),
      user("stop"),
    ];
    expect(toOpenAIMessages("", history)).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [wireCall("call_0")] },
      { role: "tool", tool_call_id: "call_0", content: "first" },
      // The stored call_0_2 comes after call_0's renaming took that name: it gets the next free one.
      { role: "assistant", content: null, tool_calls: [wireCall("call_0_2"), wireCall("call_0_2_2")] },
      { role: "tool", tool_call_id: "call_0_2", content: "second" },
      { role: "tool", tool_call_id: "call_0_2_2", content: "third" },
      { role: "assistant", content: null, tool_calls: [wireCall("call_0_3")] },
      { role: "tool", tool_call_id: "call_0_3", content: MISSING_TOOL_RESULT_TEXT },
      { role: "assistant", content: NO_REPLY_TEXT },
      { role: "user", content: "stop" },
    ]);
  });

  it("gives every reuse of one id its own name: 5,000 turns all calling call_0", () => {
    const history: AgentMessage[] = [user("go")];
    for (let i = 0; i < 5_000; i++) history.push(assistant("", "TOOL_CALLS", [call("call_0")]), result("call_0", `r${i}`));
    const ids = toOpenAIMessages("", history).flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : []));
    expect(ids.length).toBe(5_000);
    expect(new Set(ids).size).toBe(5_000);
    expect([ids[0], ids[1], ids[4_999]]).toEqual(["call_0", "call_0_2", "call_0_5000"]);
  });

  it("drops tool results whose call is not in the history, or that answer a call twice", () => {
    const history = [
      user("hi"),
      result("ghost", "boo"),
      assistant("", "TOOL_CALLS", [call("c1")]),
      result("c1", "first"),
      result("c1", "again"),
      assistant("ok", "STOP"),
      result("c1", "late"),
    ];
    expect(toOpenAIMessages("", history)).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: null, tool_calls: [wireCall("c1")] },
      { role: "tool", tool_call_id: "c1", content: "first" },
      { role: "assistant", content: "ok" },
    ]);
  });
});

describe("toOpenAITools", () => {
  it("wraps each definition as a function tool", () => {
    const parameters = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
    expect(toOpenAITools([{ name: "read", description: "Read a file.", parameters }])).toEqual([
      { type: "function", function: { name: "read", description: "Read a file.", parameters } },
    ]);
  });
});
