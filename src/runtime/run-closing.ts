import {
  type AgentEvent,
  type AgentMessage,
  type IdGenerator,
  nowIso,
  type RunErrorCode,
  type ToolCall,
  toolResultSummary,
  wellFormed,
} from "../domain";

/** The text of the error result given to a tool call that never finished. */
export const INTERRUPTED_TOOL_RESULT_TEXT = "interrupted before it finished: the server restarted while this tool call was running";

/** A record to append, in order: messages and events share one seq space. */
export type ClosingRecord = { stream: "messages"; record: AgentMessage } | { stream: "events"; record: AgentEvent };

/** What a run left behind that needs closing: calls without results and text never put in a message. */
export interface RunLeftovers {
  /** Tool calls of the run's assistant messages that have no tool_result, in call order. */
  unanswered: ToolCall[];
  /** Of those, the ones whose tool_call_started event was written (they get a tool_call_finished). */
  started: ReadonlySet<string>;
  /** Text streamed as assistant_delta for a message that was never appended. */
  partial: { messageId: string; text: string } | null;
}

/**
 * Reads a run's own records (everything it appended, in seq order) for what a crash left open: an
 * assistant message whose tool calls were not all answered, and deltas of an assistant message that
 * was still streaming.
 */
export function runLeftovers(messages: readonly AgentMessage[], events: readonly AgentEvent[]): RunLeftovers {
  const pending = new Map<string, ToolCall>();
  const messageIds = new Set<string>();
  for (const message of messages) {
    messageIds.add(message.id);
    if (message.kind === "assistant") for (const call of message.toolCalls ?? []) pending.set(call.id, call);
    if (message.kind === "tool_result") pending.delete(message.toolCallId);
  }
  const started = new Set<string>();
  let partial = null as RunLeftovers["partial"];
  for (const event of events) {
    if (event.type === "tool_call_started") started.add(event.callId);
    if (event.type === "tool_call_finished" || event.type === "tool_call_denied") started.delete(event.callId);
    if (event.type === "assistant_delta" && !messageIds.has(event.messageId)) {
      partial =
        partial?.messageId === event.messageId
          ? { messageId: event.messageId, text: partial.text + event.text }
          : { messageId: event.messageId, text: event.text };
    }
  }
  const unanswered = [...pending.values()];
  return { unanswered, started: new Set([...started].filter((id) => pending.has(id))), partial };
}

export interface ClosingInput {
  sessionId: string;
  runId: string;
  /** The newest message of the session: the parent of the first closing message. */
  parentId: string | null;
  leftovers: RunLeftovers;
  code: RunErrorCode;
  message: string;
  ids: IdGenerator;
  clock: () => number;
}

/**
 * The records that end a run the agent loop could not end itself (the object died, or the run could
 * not start): an error tool_result for every unanswered call (providers reject a tool call without
 * its result), an ERROR assistant message that keeps whatever text was streamed, and `agent_error`.
 */
export function closingRecords(input: ClosingInput): ClosingRecord[] {
  const { sessionId, runId, leftovers } = input;
  const createdAt = nowIso(input.clock);
  const records: ClosingRecord[] = [];
  let parentId = input.parentId;
  const event = (body: Record<string, unknown>) =>
    records.push({ stream: "events", record: { eventId: input.ids.next("event"), sessionId, createdAt, ...body } as AgentEvent });
  const message = (body: Record<string, unknown>, id = input.ids.next("message")) => {
    records.push({ stream: "messages", record: { id, sessionId, parentId, createdAt, ...body } as AgentMessage });
    parentId = id;
    return id;
  };
  for (const call of leftovers.unanswered) {
    const resultId = input.ids.next("message");
    if (leftovers.started.has(call.id)) {
      const summary = toolResultSummary(INTERRUPTED_TOOL_RESULT_TEXT);
      event({ type: "tool_call_finished", callId: call.id, tool: call.name, error: true, messageId: resultId, summary });
    }
    message(
      { kind: "tool_result", toolCallId: call.id, toolName: call.name, resultText: INTERRUPTED_TOOL_RESULT_TEXT, error: true },
      resultId,
    );
  }
  // The streamed part may end inside a surrogate pair.
  const partial = wellFormed(leftovers.partial?.text ?? "");
  const messageId = message({ kind: "assistant", text: partial, stopReason: "ERROR" }, leftovers.partial?.messageId);
  event({ type: "assistant_completed", messageId, stopReason: "ERROR" });
  event({ type: "agent_error", runId, code: input.code, message: input.message });
  return records;
}
