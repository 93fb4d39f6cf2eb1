import type { AgentEvent, AgentMessage, ToolCall, ToolDefinition } from "../domain";

/**
 * Where a run writes. In the SessionDO each call is a synchronous, durable SQLite append that also
 * publishes to live subscribers, so nothing is seen before it is stored.
 */
export interface RunLog {
  appendMessage(message: AgentMessage): void;
  appendEvent(event: AgentEvent): void;
}

/** The outcome of one tool call after the policy: executed (maybe with an error) or denied. */
export type ToolExecution = { outcome: "finished"; text: string; error: boolean } | { outcome: "denied"; reason: string; text: string };

/** The tools of a run, behind their policy (the ToolExecutionService in production). */
export interface ToolRunner {
  definitions(): ToolDefinition[];
  execute(call: ToolCall, signal: AbortSignal): Promise<ToolExecution>;
}
