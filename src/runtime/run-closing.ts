import {
  type AgentEvent,
  type AgentMessage,
  type IdGenerator,
  nowIso,
  type RunErrorCode,
  type ToolCall,
  type TraceDraft,
  type TraceRecord,
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
  /** A compaction_started without its compaction_finished or compaction_failed: cut off while summarising. */
  compacting: boolean;
}

/**
 * Reads a run's own records (everything it appended, in seq order) for what a crash left open: an
 * assistant message whose tool calls were not all answered, deltas of an assistant message that
 * was still streaming, and a compaction still summarising.
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
  let compacting = false;
  for (const event of events) {
    if (event.type === "compaction_started") compacting = true;
    if (event.type === "compaction_finished" || event.type === "compaction_failed") compacting = false;
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
  return { unanswered, started: new Set([...started].filter((id) => pending.has(id))), partial, compacting };
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
 * not start): `compaction_failed` for a compaction cut off (clients show it as running until it
 * ends), an error tool_result for every unanswered call (providers reject a tool call without
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
    records.push({ stream: "messages", record: { kind: body.kind, id, sessionId, parentId, createdAt, ...body } as AgentMessage });
    parentId = id;
    return id;
  };
  if (leftovers.compacting) event({ type: "compaction_failed", code: input.code, message: `nothing was compacted: ${input.message}` });
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

/**
 * The trace records that end a run's trace where the run was cut off: an error observation for every
 * action left without one, an error end for every open turn and for the run (opened first when the
 * run never got to open it), all with `code`. A verdict on the run then sees how it ended (a restart
 * is the environment's doing, not the agent's). None when the run's trace has ended already.
 */
export function closingTrace(
  records: readonly TraceRecord[],
  input: { sessionId: string; runId: string; code: RunErrorCode; message: string; ids: IdGenerator; clock: () => number },
): TraceDraft[] {
  const own = records.filter((r) => r.runId === input.runId);
  const ended = new Set(own.flatMap((r) => (r.type === "span_end" ? [r.spanId] : [])));
  const observed = new Set(own.flatMap((r) => (r.type === "observation" ? [r.actionId] : [])));
  const runSpan = own.find((r): r is Extract<TraceRecord, { type: "span_start" }> => r.type === "span_start" && r.kind === "run");
  if (runSpan && ended.has(runSpan.spanId)) return [];
  const base = { taskId: input.sessionId, runId: input.runId, attemptId: input.runId, createdAt: nowIso(input.clock) };
  const drafts: TraceDraft[] = [];
  const runSpanId = runSpan?.spanId ?? input.ids.next("span");
  if (!runSpan)
    drafts.push({ ...base, type: "span_start", spanId: runSpanId, kind: "run", parentSpanId: null, turnId: null, retryOf: null });
  for (const r of own) {
    if (r.type !== "action" || observed.has(r.actionId)) continue;
    const summary = input.message;
    drafts.push({
      ...base,
      type: "observation",
      spanId: r.spanId,
      turnId: r.turnId,
      actionId: r.actionId,
      status: "error",
      code: input.code,
      exitCode: null,
      summary,
      reads: [],
      writes: [],
    });
  }
  for (const r of own) {
    if (r.type !== "span_start" || r.kind !== "turn" || ended.has(r.spanId)) continue;
    drafts.push({ ...base, type: "span_end", spanId: r.spanId, kind: "turn", turnId: r.turnId, status: "error", stopReason: input.code });
  }
  drafts.push({ ...base, type: "span_end", spanId: runSpanId, kind: "run", turnId: null, status: "error", stopReason: input.code });
  return drafts;
}
