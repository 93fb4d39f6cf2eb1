import { type AgentEvent, type AgentMessage, counterIds, type ToolCall, type ToolDefinition, type TraceDraft } from "../../src/domain";
import type { RunLog, RunRecord } from "../../src/runtime/run-log";
import type { ToolExecution, ToolRunner } from "../../src/tools/execution-service";

/** A RunLog that keeps what was appended, in order, for assertions. */
export class MemoryRunLog implements RunLog {
  readonly messages: AgentMessage[] = [];
  readonly events: AgentEvent[] = [];
  readonly trace: TraceDraft[] = [];
  appendMessage(message: AgentMessage): void {
    this.messages.push(message);
  }
  appendEvent(event: AgentEvent): void {
    this.events.push(event);
  }
  appendTogether(records: readonly RunRecord[]): void {
    for (const r of records) {
      if (r.stream === "messages") this.appendMessage(r.record);
      else this.appendEvent(r.record);
    }
  }
  appendTrace(record: TraceDraft): void {
    this.trace.push(record);
  }
  types(): string[] {
    return this.events.map((e) => e.type);
  }
}

/** A ToolRunner answering each call from a function; records the calls it executed. */
export class FakeToolRunner implements ToolRunner {
  readonly executed: ToolCall[] = [];
  constructor(
    private readonly answer: (call: ToolCall) => ToolExecution | Promise<ToolExecution> = (call) => ({
      outcome: "finished",
      text: `ran ${call.name}`,
      error: false,
    }),
    private readonly defs: ToolDefinition[] = [{ name: "read", description: "Read a file.", parameters: { type: "object" } }],
  ) {}
  definitions(): ToolDefinition[] {
    return this.defs;
  }
  /** Like the real runner's: every call that reached it, denied ones included. */
  get callCount(): number {
    return this.executed.length;
  }
  async execute(call: ToolCall): Promise<ToolExecution> {
    this.executed.push(call);
    return this.answer(call);
  }
}

/** Deterministic ids and a frozen clock for a run. */
export function runDeps() {
  return { ids: counterIds(), clock: () => Date.parse("2026-11-30T03:00:00Z") };
}
