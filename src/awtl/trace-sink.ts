import {
  type AttributionRecord,
  type IdGenerator,
  type JudgeResult,
  MAX_TRACE_ARTIFACT_REFS,
  nowIso,
  type TraceDraft,
  type TraceRecord,
} from "../domain";
import { logLine } from "../log";
import { attribute } from "./attribution";
import { type JudgeDraft, judgeRecord } from "./builtin-judges";
import { buildCase } from "./case-builder";
import type { FailedTurnCase } from "./failed-turn-case";
import { RunTraceView } from "./run-view";

export interface TraceSinkDeps {
  sessionId: string;
  ids: IdGenerator;
  clock: () => number;
  /** Appends a record durably and returns it with its seq; throws if the log refuses it. */
  append(draft: TraceDraft): TraceRecord;
  /** Whether the run's failures may become cases: a replay's do not (they settle its case's scorecard). */
  keepsCases(runId: string): boolean;
  /** A failure was attributed; `found` is the case it became (agent and policy failures). */
  attributed(attribution: AttributionRecord, found: FailedTurnCase | null): void;
}

/** An external judge's verdict, as the judgement route receives it. */
export interface ExternalVerdict {
  judgeName: string;
  result: JudgeResult["result"];
  sourceActionId: string | null;
  artifactRefs: string[];
  detail: string;
}

/**
 * Where a session's trace records go, and the AWTL steps that follow them at once: every record is
 * appended; a failure the harness can see becomes a built-in judge_result; every failed verdict is
 * attributed (an `attribution` record) and may become a case for the project.
 */
export class TraceSink {
  private active: RunTraceView | null = null;

  constructor(private readonly deps: TraceSinkDeps) {}

  /** A record of the running run (from the agent loop). */
  record(draft: TraceDraft): void {
    if (this.active?.runId !== draft.runId) this.active = new RunTraceView(draft.runId);
    const run = this.active;
    const record = this.deps.append(draft);
    run.add(record);
    const verdict = judgeRecord(record, run);
    if (verdict) {
      // Learning from a failure must not become the run's failure: a fault in a judge, the
      // attribution or the case is logged, and the run goes on (the record itself is stored).
      try {
        this.judge(verdict, run, false);
      } catch (err) {
        logLine("error", "awtl built-in judgement failed", {
          sessionId: this.deps.sessionId,
          runId: draft.runId,
          error: String(err),
          stack: (err as Error).stack,
        });
      }
    }
    if (record.type === "span_end" && record.kind === "run") this.active = null;
  }

  /** An external verdict on a finished (or running) run, with the run's trace read back from the log. */
  external(
    verdict: ExternalVerdict,
    run: RunTraceView,
    opts: { replayPassed: boolean; attemptId: string },
  ): { judge: JudgeResult; attribution: AttributionRecord | null } {
    const turnId = verdict.sourceActionId ? (run.action(verdict.sourceActionId)?.turnId ?? null) : null;
    const draft: JudgeDraft = {
      runId: run.runId,
      judgeName: verdict.judgeName,
      builtIn: false,
      result: verdict.result,
      sourceActionId: verdict.sourceActionId,
      verifierActionId: null,
      artifactRefs: verdict.artifactRefs,
      failureKind: "external",
      detail: verdict.detail,
      turnId,
    };
    return this.judge(draft, run, opts.replayPassed, opts.attemptId);
  }

  private judge(
    draft: JudgeDraft,
    run: RunTraceView,
    replayPassed: boolean,
    attemptId = run.runId,
  ): { judge: JudgeResult; attribution: AttributionRecord | null } {
    const base = { taskId: this.deps.sessionId, attemptId, createdAt: nowIso(this.deps.clock) };
    const judge = this.deps.append({ type: "judge_result", ...base, ...draft, judgeId: this.deps.ids.next("judge") }) as JudgeResult;
    run.add(judge);
    if (judge.result !== "fail") return { judge, attribution: null };
    const attributed = attribute(judge, run, { replayPassed });
    // A replay's failure names no case: none is made of it (hunt 113: its record named one that never existed).
    const found = this.deps.keepsCases(run.runId)
      ? buildCase(attributed, judge, run, { sessionId: this.deps.sessionId, imported: false, now: base.createdAt })
      : null;
    const attribution = this.deps.append({
      type: "attribution",
      ...attributed,
      // Within what an import of the record takes (the case's id is made of all of them; a case keeps its first ones too).
      artifactRefs: attributed.artifactRefs.slice(0, MAX_TRACE_ARTIFACT_REFS),
      createdAt: base.createdAt,
      attributionId: this.deps.ids.next("attribution"),
      caseId: found?.caseId ?? null,
    }) as AttributionRecord;
    this.deps.attributed(attribution, found);
    return { judge, attribution };
  }
}
