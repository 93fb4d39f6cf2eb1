import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/domain";
import { RECENT_ASSISTANT_MESSAGES, recentPaths } from "../../src/session/learning-loop";

const T = "2026-12-02T03:00:00.000Z";
const assistant = (id: string, paths: string[]): AgentMessage => ({
  kind: "assistant",
  id,
  sessionId: "s_1",
  parentId: null,
  createdAt: T,
  text: "",
  stopReason: "TOOL_CALLS",
  toolCalls: paths.map((path, i) => ({ id: `${id}_${i}`, name: "read", arguments: { path } })),
});
const result = (id: string, callId: string): AgentMessage => ({
  kind: "tool_result",
  id,
  sessionId: "s_1",
  parentId: null,
  createdAt: T,
  toolCallId: callId,
  toolName: "read",
  resultText: "no such file",
  error: true,
});

describe("recentPaths", () => {
  it("keeps the paths of one wide turn whose tool results outnumber the window", () => {
    const paths = Array.from({ length: 25 }, (_, i) => `src/f${i}.ts`);
    const history = [assistant("m_a", paths), ...paths.map((_, i) => result(`m_r${i}`, `m_a_${i}`))];
    expect(recentPaths(history).sort()).toEqual([...paths].sort());
  });

  it(`looks at the latest ${RECENT_ASSISTANT_MESSAGES} assistant messages only`, () => {
    const history = Array.from({ length: RECENT_ASSISTANT_MESSAGES + 1 }, (_, i) => assistant(`m_${i}`, [`src/t${i}.ts`]));
    expect(recentPaths(history).sort()).toEqual(Array.from({ length: RECENT_ASSISTANT_MESSAGES }, (_, i) => `src/t${i + 1}.ts`).sort());
  });
});
