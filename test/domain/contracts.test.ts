import { describe, expect, it } from "vitest";
import {
  AgentEvent,
  AgentMessage,
  AgentPromptCommand,
  AgentRunOptions,
  counterIds,
  DomainValidationError,
  EVENT_TYPES,
  isId,
  parseOrThrow,
  randomIds,
  safeRunOptions,
} from "../../src/domain";

const T = "2026-11-30T02:51:00.000Z";
const base = { sessionId: "s_1", createdAt: T };

/** One valid example of every record, with the exact field set its JSON must have. */
const messages = [
  [{ kind: "user", id: "m_1", parentId: null, ...base, text: "hi" }, ["kind", "id", "sessionId", "parentId", "createdAt", "text"]],
  [
    {
      kind: "assistant",
      id: "m_2",
      parentId: "m_1",
      ...base,
      text: "reading",
      stopReason: "TOOL_CALLS",
      toolCalls: [{ id: "tc_1", name: "read", arguments: { path: "README.md" } }],
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedInputTokens: 4, reasoningTokens: 2 },
      cost: 0.00012,
      thinking: "look at the README first",
    },
    ["kind", "id", "sessionId", "parentId", "createdAt", "text", "stopReason", "toolCalls", "usage", "cost", "thinking"],
  ],
  [
    { kind: "tool_result", id: "m_3", parentId: "m_2", ...base, toolCallId: "tc_1", toolName: "read", resultText: "# x", error: false },
    ["kind", "id", "sessionId", "parentId", "createdAt", "toolCallId", "toolName", "resultText", "error"],
  ],
  [
    {
      kind: "compaction",
      id: "m_4",
      parentId: "m_3",
      ...base,
      summary: "## Goal",
      firstKeptMessageId: "m_3",
      tokensBefore: 900,
      tokensAfter: 200,
    },
    ["kind", "id", "sessionId", "parentId", "createdAt", "summary", "firstKeptMessageId", "tokensBefore", "tokensAfter"],
  ],
] as const;

const ev = { eventId: "e_1", ...base };
const events = [
  [{ type: "agent_started", ...ev, runId: "r_1" }, ["runId"]],
  [{ type: "user_message_appended", ...ev, messageId: "m_1" }, ["messageId"]],
  [{ type: "assistant_delta", ...ev, messageId: "m_2", text: "he" }, ["messageId", "text"]],
  [{ type: "assistant_completed", ...ev, messageId: "m_2", stopReason: "STOP" }, ["messageId", "stopReason"]],
  [{ type: "tool_call_started", ...ev, callId: "tc_1", tool: "read", arguments: { path: "a" } }, ["callId", "tool", "arguments"]],
  [{ type: "tool_call_finished", ...ev, callId: "tc_1", tool: "read", error: false }, ["callId", "tool", "error"]],
  [{ type: "tool_call_denied", ...ev, callId: "tc_1", tool: "write", reason: "write_not_allowed" }, ["callId", "tool", "reason"]],
  [{ type: "agent_error", ...ev, runId: "r_1", code: "rate_limited", message: "slow down" }, ["runId", "code", "message"]],
  [{ type: "agent_completed", ...ev, runId: "r_1", stopReason: "STOP" }, ["runId", "stopReason"]],
  [{ type: "brief_injected", ...ev, runId: "r_1", caseIds: ["cs_1"] }, ["runId", "caseIds"]],
  [{ type: "thinking_delta", ...ev, messageId: "m_2", text: "hm" }, ["messageId", "text"]],
  [{ type: "compaction_started", ...ev, reason: "threshold" }, ["reason"]],
  [
    { type: "compaction_finished", ...ev, messageId: "m_9", tokensBefore: 9000, tokensAfter: 2000 },
    ["messageId", "tokensBefore", "tokensAfter"],
  ],
  [{ type: "compaction_failed", ...ev, code: "context_overflow", message: "no" }, ["code", "message"]],
  [
    { type: "message_queued", ...ev, messageId: "m_5", mode: "followUp", runId: "r_2", afterFailedRun: "keep" },
    ["messageId", "mode", "runId", "afterFailedRun"],
  ],
  [{ type: "queue_updated", ...ev, steering: [], followUp: ["m_5"] }, ["steering", "followUp"]],
  [
    { type: "queued_message_withdrawn", ...ev, messageId: "m_5", runId: "r_2", reason: "withdrawn_by_client" },
    ["messageId", "runId", "reason"],
  ],
  [
    { type: "model_retry", ...ev, runId: "r_1", attempt: 1, maxAttempts: 3, delayMs: 1000, code: "rate_limited" },
    ["runId", "attempt", "maxAttempts", "delayMs", "code"],
  ],
] as const;

describe("message contracts", () => {
  for (const [example, fields] of messages) {
    it(`${example.kind}: exact JSON field set, discriminator and ISO time`, () => {
      const json = JSON.parse(JSON.stringify(parseOrThrow(AgentMessage, example, "message")));
      expect(Object.keys(json)).toEqual(fields);
      expect(json.kind).toBe(example.kind);
      expect(json.createdAt).toBe(T);
      expect(json).toEqual(example);
    });
  }

  it("assistant without tool calls or usage omits those fields", () => {
    const msg = parseOrThrow(
      AgentMessage,
      { kind: "assistant", id: "m_2", parentId: "m_1", ...base, text: "done", stopReason: "STOP" },
      "message",
    );
    expect(Object.keys(msg)).toEqual(["kind", "id", "sessionId", "parentId", "createdAt", "text", "stopReason"]);
  });
});

describe("event contracts", () => {
  it("covers every event type exactly once", () => {
    expect(events.map(([e]) => e.type)).toEqual([...EVENT_TYPES]);
  });
  for (const [example, own] of events) {
    it(`${example.type}: exact JSON field set, discriminator and ISO time`, () => {
      const json = JSON.parse(JSON.stringify(parseOrThrow(AgentEvent, example, "event")));
      expect(Object.keys(json)).toEqual(["type", "eventId", "sessionId", "createdAt", ...own]);
      expect(json.type).toBe(example.type);
      expect(json.createdAt).toBe(T);
    });
  }
});

describe("construction rejects what a log must never hold", () => {
  const failure = (schema: typeof AgentMessage | typeof AgentEvent, value: unknown) => {
    try {
      parseOrThrow(schema, value, "record");
    } catch (err) {
      expect(err).toBeInstanceOf(DomainValidationError);
      return (err as Error).message;
    }
    throw new Error("expected a validation failure");
  };
  const user = messages[0][0];
  const result = messages[2][0];

  it("blank ids, naming the field", () => {
    expect(failure(AgentMessage, { ...user, id: "  " })).toBe("invalid record: id: must not be blank");
    expect(failure(AgentMessage, { ...user, sessionId: "" })).toBe("invalid record: sessionId: must not be blank");
    expect(failure(AgentEvent, { ...events[0][0], eventId: "" })).toBe("invalid record: eventId: must not be blank");
  });

  it("missing or invalid createdAt", () => {
    const { createdAt: _, ...noTime } = user;
    expect(failure(AgentMessage, noTime)).toMatch(/^invalid record: createdAt: /);
    expect(failure(AgentMessage, { ...user, createdAt: "yesterday" })).toBe("invalid record: createdAt: must be an ISO-8601 UTC timestamp");
    expect(failure(AgentMessage, { ...user, createdAt: 1764470000000 })).toMatch(/^invalid record: createdAt: /);
  });

  it("blank tool names, call ids and denial reasons", () => {
    expect(failure(AgentMessage, { ...result, toolName: " " })).toBe("invalid record: toolName: must not be blank");
    expect(failure(AgentMessage, { ...result, toolCallId: "" })).toBe("invalid record: toolCallId: must not be blank");
    expect(failure(AgentEvent, { ...events[6][0], reason: "" })).toMatch(
      /^invalid record: reason: Invalid option: expected one of "path_escape"\|/,
    );
    expect(failure(AgentEvent, { ...events[4][0], callId: " " })).toBe("invalid record: callId: must not be blank");
    expect(failure(AgentMessage, { ...messages[1][0], toolCalls: [{ id: "tc_1", name: "", arguments: {} }] })).toBe(
      "invalid record: toolCalls.0.name: must not be blank",
    );
  });

  it("agent_error codes and denial reasons come from the error registry", () => {
    expect(failure(AgentEvent, { ...events[7][0], code: "model_error" })).toMatch(
      /^invalid record: code: Invalid option: expected one of "history_unreadable"\|"workspace_not_found"\|/,
    );
    expect(failure(AgentEvent, { ...events[6][0], reason: "write_denied" })).toMatch(/^invalid record: reason: Invalid option: /);
  });

  it("tool call arguments must be a JSON object", () => {
    expect(failure(AgentMessage, { ...messages[1][0], toolCalls: [{ id: "tc_1", name: "read", arguments: "{}" }] })).toMatch(
      /^invalid record: toolCalls\.0\.arguments: /,
    );
  });

  it("unknown fields and stop reasons", () => {
    expect(failure(AgentMessage, { ...user, payload: {} })).toMatch(/^invalid record: Unrecognized key: "payload"/);
    expect(failure(AgentMessage, { ...messages[1][0], stopReason: "DONE" })).toMatch(/^invalid record: stopReason: /);
  });
});

describe("run options and prompt command", () => {
  it("defaults are safe", () => {
    expect(safeRunOptions()).toEqual({ allowWrite: false, allowBash: false, maxTurns: 6, maxToolCalls: 12, timeoutMs: 120_000 });
  });

  it("out-of-range limits are refused", () => {
    expect(AgentRunOptions.safeParse({ maxTurns: 0 }).success).toBe(false);
    expect(AgentRunOptions.safeParse({ maxToolCalls: -1 }).success).toBe(false);
    expect(AgentRunOptions.safeParse({ timeoutMs: 999 }).success).toBe(false);
    expect(AgentRunOptions.safeParse({ maxTurns: 51 }).success).toBe(false);
  });

  it("a prompt command needs a session id, non-blank text and options", () => {
    const ok = AgentPromptCommand.parse({ sessionId: "s_1", userText: "go", options: safeRunOptions() });
    expect(ok).toEqual({ sessionId: "s_1", userText: "go", options: safeRunOptions() });
    expect(() => parseOrThrow(AgentPromptCommand, { sessionId: "s_1", userText: " ", options: safeRunOptions() }, "command")).toThrow(
      "invalid command: userText: must not be blank",
    );
    expect(AgentPromptCommand.safeParse({ sessionId: "x_1", userText: "go", options: safeRunOptions() }).success).toBe(false);
  });
});

describe("ids", () => {
  it("counter ids are deterministic and prefixed per kind", () => {
    const ids = counterIds();
    expect(["session", "message", "message", "event", "toolCall", "run", "workspace", "project"].map((k) => ids.next(k as never))).toEqual([
      "s_1",
      "m_1",
      "m_2",
      "e_1",
      "tc_1",
      "r_1",
      "w_1",
      "p_1",
    ]);
  });

  it("random ids are prefixed, safe, unique and sort by creation time", () => {
    const a = randomIds.next("session");
    const b = randomIds.next("session");
    expect(a).toMatch(/^s_[0-9a-z]{26}$/);
    expect(a).not.toBe(b);
    expect(isId("session", a)).toBe(true);
    expect(randomIds.next("toolCall")).toMatch(/^tc_[0-9a-z]{26}$/);
  });

  it("isId refuses traversal, separators, NUL, wrong prefix and over-long ids", () => {
    for (const bad of ["s_../x", "s_a/b", "s_..", "s_a\0", "m_1", "s_", `s_${"a".repeat(65)}`, "", 42]) {
      expect(isId("session", bad)).toBe(false);
    }
    expect(isId("session", `s_${"a".repeat(64)}`)).toBe(true);
  });
});
