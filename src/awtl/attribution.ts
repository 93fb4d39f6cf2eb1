import { type AttributionRecord, type JudgeResult, MAX_ATTRIBUTION_ACTION_IDS, type TraceAction } from "../domain";
import { overlapsAny } from "./artifacts";
import { classifyFailure } from "./failure-classes";
import type { RunTraceView } from "./run-view";

/** An attribution before the log gives it its seq and the case it became. */
export type AttributionDraft = Omit<AttributionRecord, "writerSeq" | "attributionId" | "caseId" | "type" | "createdAt">;

/**
 * Ties a failed verdict to the actions behind it, deterministically. Source actions: the one the judge
 * named (if the run has it), else the latest action of the run that changed an overlapping artifact,
 * else (for an external verdict) every action of the run that wrote a file, else the latest that read
 * an overlapping artifact, else the action that failed, else the run's last action. Also: the
 * verifier action, the other actions that touched those artifacts, the cases of any brief the run was
 * given (a misleading brief is blamed this way), evidence refs, and the failure's class.
 */
export function attribute(judge: JudgeResult, run: RunTraceView, opts: { replayPassed: boolean }): AttributionDraft {
  const { sources, rule } = sourceActions(judge, run);
  const sourceIds = new Set(sources.map((a) => a.actionId));
  const touched = run.actions.filter((a) => {
    if (sourceIds.has(a.actionId) || judge.artifactRefs.length === 0) return false;
    const t = run.touches(a);
    return overlapsAny(judge.artifactRefs, [...t.reads, ...t.writes]);
  });
  const failureTurnId = judge.turnId ?? sources.at(-1)?.turnId ?? null;
  return {
    taskId: judge.taskId,
    runId: judge.runId,
    attemptId: judge.attemptId,
    failureEventId: judge.judgeId,
    failureTurnId,
    judgeName: judge.judgeName,
    failureKind: judge.failureKind,
    classification: classifyFailure(judge.failureKind, { replayPassed: opts.replayPassed, runEnding: run.runEnding }),
    sourceActionIds: sources.map((a) => a.actionId),
    verifierActionId: judge.verifierActionId,
    // The latest: a run of thousands of calls on one file must not make an attribution too large to import.
    touchedActionIds: touched.map((a) => a.actionId).slice(-MAX_ATTRIBUTION_ACTION_IDS),
    memoryReadNodeIds: run.briefCaseIds(),
    artifactRefs: judge.artifactRefs,
    evidenceRefs: [`judge:${judge.judgeName}`, `trace:${judge.taskId}#${judge.writerSeq}`, ...sources.map((a) => `action:${a.actionId}`)],
    rule,
  };
}

function sourceActions(judge: JudgeResult, run: RunTraceView): { sources: TraceAction[]; rule: AttributionRecord["rule"] } {
  const given = judge.sourceActionId ? run.action(judge.sourceActionId) : undefined;
  if (given) return { sources: [given], rule: "given" };
  const latest = (paths: (a: TraceAction) => string[]) =>
    judge.artifactRefs.length === 0 ? undefined : run.actions.findLast((a) => overlapsAny(judge.artifactRefs, paths(a)));
  // Only writes that happened count, here and below: a denied or failed edit planned one, and blaming
  // it made a case "after changing it" of a run that changed nothing (hunt 95).
  const writer = latest((a) => run.changed(a));
  if (writer) return { sources: [writer], rule: "wrote_artifact" };
  // A CI verdict names the test that failed, not the change that broke it: the run's changes are what
  // it judged, and a read or the closing answer changed nothing. A built-in judge always names its action.
  if (!judge.builtIn) {
    const changed = run.actions.filter((a) => run.changed(a).length > 0);
    if (changed.length > 0) return { sources: changed.slice(-MAX_ATTRIBUTION_ACTION_IDS), rule: "wrote_in_run" };
  }
  const reader = latest((a) => run.touches(a).reads);
  if (reader) return { sources: [reader], rule: "read_artifact" };
  const failing = judge.verifierActionId ? run.action(judge.verifierActionId) : undefined;
  if (failing) return { sources: [failing], rule: "failing_action" };
  const last = run.actions.at(-1);
  return last ? { sources: [last], rule: "last_action" } : { sources: [], rule: "none" };
}
