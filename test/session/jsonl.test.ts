import { describe, expect, it } from "vitest";
import { type AgentEvent, AgentMessage } from "../../src/domain";
import { decodeEvents, decodeMessageLine, decodeMessages, encodeJsonl, encodeLine, JsonlDecodeError } from "../../src/session/jsonl";

const T = "2026-11-30T02:51:00.000Z";
const user: AgentMessage = { kind: "user", id: "m_1", sessionId: "s_1", parentId: null, createdAt: T, text: "read the README" };
const assistant: AgentMessage = {
  kind: "assistant",
  id: "m_2",
  sessionId: "s_1",
  parentId: "m_1",
  createdAt: T,
  text: "",
  stopReason: "TOOL_CALLS",
  toolCalls: [{ id: "tc_1", name: "read", arguments: { path: "README.md" } }],
};
const result: AgentMessage = {
  kind: "tool_result",
  id: "m_3",
  sessionId: "s_1",
  parentId: "m_2",
  createdAt: T,
  toolCallId: "tc_1",
  toolName: "read",
  resultText: "# hello\n",
  error: false,
};
const started: AgentEvent = { type: "agent_started", eventId: "e_1", sessionId: "s_1", createdAt: T, runId: "r_1" };
const delta: AgentEvent = { type: "assistant_delta", eventId: "e_2", sessionId: "s_1", createdAt: T, messageId: "m_2", text: "hé" };

function failure(fn: () => unknown): JsonlDecodeError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(JsonlDecodeError);
    return err as JsonlDecodeError;
  }
  throw new Error("expected a decode failure");
}

describe("JSONL codec", () => {
  it("keeps message order through encode and decode", () => {
    expect(decodeMessages(encodeJsonl([user, assistant, result]))).toEqual([user, assistant, result]);
    expect(decodeMessages(encodeJsonl([result, user]))).toEqual([result, user]);
  });

  it("keeps event order through encode and decode", () => {
    expect(decodeEvents(encodeJsonl([delta, started, delta]))).toEqual([delta, started, delta]);
  });

  it("writes one flat object per line, \\n separated, no wrapper fields", () => {
    const text = encodeJsonl([user, started]);
    expect(text).toBe(
      '{"kind":"user","id":"m_1","sessionId":"s_1","parentId":null,"createdAt":"2026-11-30T02:51:00.000Z","text":"read the README"}\n' +
        '{"type":"agent_started","eventId":"e_1","sessionId":"s_1","createdAt":"2026-11-30T02:51:00.000Z","runId":"r_1"}\n',
    );
    for (const line of text.trimEnd().split("\n")) {
      const keys = Object.keys(JSON.parse(line));
      expect(keys).not.toContain("payload");
      expect(keys).not.toContain("json");
    }
  });

  it("decodes a message as it came, byte for byte: its own field order, and a __proto__ key in tool-call arguments", () => {
    const lines = [
      '{"id":"m_2","kind":"assistant","sessionId":"s_1","parentId":"m_1","createdAt":"2026-11-30T02:51:00.000Z","text":"","stopReason":"TOOL_CALLS","toolCalls":[{"id":"tc_1","name":"read","arguments":{"path":"a.txt","__proto__":{"x":1}}}]}',
      '{"parentId":"m_2","kind":"compaction","id":"m_5","sessionId":"s_1","createdAt":"2026-11-30T02:51:00.000Z","summary":"s","firstKeptMessageId":"m_2","tokensBefore":9,"tokensAfter":3}',
    ];
    for (const line of lines) expect(encodeLine(decodeMessageLine(line))).toBe(line);
    // Still checked: a top-level __proto__ is an unknown field.
    expect(() => decodeMessageLine(lines[0]!.replace('{"id"', '{"__proto__":{},"id"'))).toThrow(/invalid assistant message/);
  });

  it("has message schemas that add nothing (decoding keeps the input, so a default would be lost)", () => {
    const compaction: AgentMessage = {
      kind: "compaction",
      id: "m_4",
      sessionId: "s_1",
      parentId: "m_3",
      createdAt: T,
      summary: "s",
      firstKeptMessageId: "m_3",
      tokensBefore: 9,
      tokensAfter: 3,
    };
    const minimalAssistant: AgentMessage = {
      kind: "assistant",
      id: "m_2",
      sessionId: "s_1",
      parentId: "m_1",
      createdAt: T,
      text: "",
      stopReason: "STOP",
    };
    const fullAssistant: AgentMessage = {
      ...assistant,
      text: "  padded  ",
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedInputTokens: 4, reasoningTokens: 2 },
      cost: 0.25,
      thinking: " why ",
    };
    for (const message of [user, minimalAssistant, assistant, fullAssistant, result, compaction]) {
      expect(JSON.stringify(AgentMessage.parse(message))).toBe(JSON.stringify(message));
    }
  });

  it("restores the concrete record from kind / type", () => {
    const [a, b, c] = decodeMessages(encodeJsonl([user, assistant, result]));
    expect([a!.kind, b!.kind, c!.kind]).toEqual(["user", "assistant", "tool_result"]);
    expect(b!.kind === "assistant" && b!.toolCalls).toEqual([{ id: "tc_1", name: "read", arguments: { path: "README.md" } }]);
    expect(decodeEvents(encodeJsonl([delta]))[0]).toEqual(delta);
  });

  it("fails on an unknown discriminator, naming the line", () => {
    const err = failure(() => decodeMessages(`${encodeJsonl([user])}{"kind":"system","id":"m_9"}\n`));
    expect(err.line).toBe(2);
    expect(err.message).toBe("line 2: unknown message kind 'system'");
    expect(failure(() => decodeEvents('{"type":"agent_paused"}')).message).toBe("line 1: unknown event type 'agent_paused'");
  });

  it("fails on a missing discriminator", () => {
    expect(failure(() => decodeMessages('{"id":"m_1"}')).message).toBe("line 1: missing discriminator 'kind'");
    expect(failure(() => decodeEvents('{"eventId":"e_1"}')).message).toBe("line 1: missing discriminator 'type'");
  });

  it("fails on a non-string discriminator", () => {
    expect(failure(() => decodeMessages('{"kind":1}')).message).toBe("line 1: discriminator 'kind' must be a string");
    expect(failure(() => decodeEvents('{"type":null}')).message).toBe("line 1: discriminator 'type' must be a string");
  });

  it("fails on a malformed line and names its number", () => {
    const err = failure(() => decodeMessages(`${encodeJsonl([user, assistant])}{"kind":"user",\n`));
    expect(err.line).toBe(3);
    expect(err.message).toMatch(/^line 3: malformed JSON \(/);
    expect(failure(() => decodeMessages("[1,2]")).message).toBe("line 1: a record must be a JSON object");
  });

  it("fails on a record whose fields do not fit its kind", () => {
    const bad = JSON.stringify({ ...user, text: 5 });
    expect(failure(() => decodeMessages(bad)).message).toMatch(/^line 1: invalid user message: text: /);
  });

  it("skips blank lines but counts them for line numbers", () => {
    const text = `\n${encodeJsonl([user])}   \n\n${encodeJsonl([result])}`;
    expect(decodeMessages(text)).toEqual([user, result]);
    expect(failure(() => decodeMessages("\n\nnot json")).line).toBe(3);
  });

  it("refuses a record of another session when the session is given", () => {
    const other = { ...user, sessionId: "s_2" };
    expect(decodeMessages(encodeJsonl([other]))).toEqual([other]);
    expect(failure(() => decodeMessages(encodeJsonl([user, other]), "s_1")).message).toBe(
      "line 2: record belongs to session 's_2', not 's_1'",
    );
  });
});
