import type { AgentEvent, AgentMessage, TraceDraft } from "../domain";

/** A message or an event of a run, tagged with the log stream it goes to. */
export type RunRecord = { stream: "messages"; record: AgentMessage } | { stream: "events"; record: AgentEvent };

/**
 * Where a run writes. In the SessionDO each call is a synchronous, durable SQLite append that also
 * publishes to live subscribers, so nothing is seen before it is stored.
 */
export interface RunLog {
  appendMessage(message: AgentMessage): void;
  appendEvent(event: AgentEvent): void;
  /**
   * Records the run produces together (a message and the event that announces it), in this order:
   * one commit for all of them, then published. Cheaper than one call each, and never half-stored.
   */
  appendTogether(records: readonly RunRecord[]): void;
  /** Trace records (AWTL); the log gives each its seq as `writerSeq`. */
  appendTrace(record: TraceDraft): void;
}
