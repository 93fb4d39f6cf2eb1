import type { AgentEvent, AgentMessage } from "../domain";

/**
 * Where a run writes. In the SessionDO each call is a synchronous, durable SQLite append that also
 * publishes to live subscribers, so nothing is seen before it is stored.
 */
export interface RunLog {
  appendMessage(message: AgentMessage): void;
  appendEvent(event: AgentEvent): void;
}
