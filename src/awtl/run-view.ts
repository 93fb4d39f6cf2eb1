import {
  type JudgeResult,
  MAX_CASE_MEMORY_READS,
  type MemoryRead,
  PROVIDER_TIMEOUT,
  type TraceAction,
  type TraceObservation,
  type TraceRecord,
} from "../domain";

/** One run's trace, indexed for judging and attribution. */
export class RunTraceView {
  readonly actions: TraceAction[] = [];
  readonly observations = new Map<string, TraceObservation>();
  readonly memoryReads: MemoryRead[] = [];
  readonly judgements: JudgeResult[] = [];
  /** The code the run ended with (span_end of the run), if it has ended with an error (see endingOf). */
  runEnding: string | null = null;
  ended = false;

  constructor(readonly runId: string) {}

  static of(runId: string, records: Iterable<TraceRecord>): RunTraceView {
    const view = new RunTraceView(runId);
    for (const record of records) view.add(record);
    return view;
  }

  add(record: TraceRecord): void {
    if (record.runId !== this.runId) return;
    switch (record.type) {
      case "action":
        this.actions.push(record);
        break;
      case "observation":
        this.observations.set(record.actionId, record);
        break;
      case "memory_read":
        this.memoryReads.push(record);
        break;
      case "judge_result":
        this.judgements.push(record);
        break;
      case "span_end":
        if (record.kind === "run") {
          this.ended = true;
          this.runEnding = record.status === "error" ? this.endingOf(record.stopReason) : null;
        }
        break;
    }
  }

  /**
   * The code a run's failed ending is classed by: its stop reason, except a timeout whose time ran out
   * waiting for the provider's first word (the last action, a model call, observed as PROVIDER_TIMEOUT).
   */
  private endingOf(stopReason: string): string {
    const last = this.actions.at(-1);
    const waited = last?.actor === "model" && this.observations.get(last.actionId)?.code === PROVIDER_TIMEOUT;
    return stopReason === "run_timeout" && waited ? PROVIDER_TIMEOUT : stopReason;
  }

  action(actionId: string): TraceAction | undefined {
    return this.actions.find((a) => a.actionId === actionId);
  }

  /**
   * The files an action changed. A call this harness ran (it has a call id) and saw finish wrote what
   * its observation says: a denied or failed `edit` planned a write it never made (hunt 95). An
   * imported action's observation holds an exit code at most, and the action its files (hunt 96): they
   * count unless it failed. So do the files a call cut off by a restart named: they may be written.
   */
  changed(action: TraceAction): string[] {
    const seen = this.observations.get(action.actionId);
    if (seen && (action.callId !== null || seen.status === "error")) return seen.writes;
    return [...new Set([...action.writes, ...(seen?.writes ?? [])])];
  }

  /** What an action read and wrote: what its arguments named plus what it was seen to touch. */
  touches(action: TraceAction): { reads: string[]; writes: string[] } {
    const seen = this.observations.get(action.actionId);
    return {
      reads: [...new Set([...action.reads, ...(seen?.reads ?? [])])],
      writes: [...new Set([...action.writes, ...(seen?.writes ?? [])])],
    };
  }

  /**
   * Case ids of the briefs this run was given, each once, the most recently given last; the newest
   * MAX_CASE_MEMORY_READS (an imported run may name thousands, and a case keeps them).
   */
  briefCaseIds(): string[] {
    const ids = new Set<string>();
    for (const id of this.memoryReads.flatMap((m) => m.caseIds)) {
      ids.delete(id);
      ids.add(id);
    }
    return [...ids].slice(-MAX_CASE_MEMORY_READS);
  }
}
