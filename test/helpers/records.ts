import type { AgentEvent, AgentMessage } from "../../src/domain";

export const T0 = "2026-11-30T02:51:00.000Z";

/** A user message of `sessionId`; the id and text default to something recognisable. */
export function userMessage(sessionId: string, id: string, text = `text of ${id}`, parentId: string | null = null): AgentMessage {
  return { kind: "user", id, sessionId, parentId, createdAt: T0, text };
}

/** A small event whose text carries a tag, so tests can tell who appended it. */
export function deltaEvent(sessionId: string, eventId: string, text: string): AgentEvent {
  return { type: "assistant_delta", eventId, sessionId, createdAt: T0, messageId: "m_x", text };
}

/** Events as the `/events` export writes them: one JSONL line each, its seq first. */
export function eventsJsonl(items: readonly { seq: number; event: AgentEvent }[]): string {
  return items.map(({ seq, event }) => `${JSON.stringify({ seq, ...event })}\n`).join("");
}
