import type { AgentEvent, AgentMessage, TraceDraft } from "../domain";

/**
 * Where a run writes. In the SessionDO each call is a synchronous, durable SQLite append that also
 * publishes to live subscribers, so nothing is seen before it is stored.
 */
export interface RunLog {
  appendMessage(message: AgentMessage): void;
  appendEvent(event: AgentEvent): void;
  /** Trace records (AWTL); the log gives each its seq as `writerSeq`. */
  appendTrace(record: TraceDraft): void;
}
