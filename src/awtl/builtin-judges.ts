import type { JudgeResult, TraceObservation, TraceRecord } from "../domain";
import { isPolicyCode, LIMIT_CODES } from "./failure-classes";
import type { RunTraceView } from "./run-view";

/** The harness's own judges; each turns a failure it can see into a judge_result at once. */
export const BUILT_IN_JUDGES = {
  toolError: "tool-error",
  policy: "policy",
  limit: "run-limit",
  model: "model-error",
} as const;

/** A verdict before the log gives it its seq. */
export type JudgeDraft = Omit<JudgeResult, "writerSeq" | "judgeId" | "taskId" | "attemptId" | "createdAt" | "type">;

/**
 * The built-in verdict on a trace record, if it shows a failure: a tool call that failed or was denied
 * (policy), a tool budget or a run limit hit (run-limit), a model call that failed (model-error).
 * Called after the record is added to `run`.
 */
export function judgeRecord(record: TraceRecord, run: RunTraceView): JudgeDraft | null {
  if (record.type === "observation" && record.status === "error") return judgeObservation(record, run);
  if (record.type === "span_end" && record.kind === "run" && record.status === "error" && LIMIT_CODES.has(record.stopReason)) {
    return {
      runId: record.runId,
      judgeName: BUILT_IN_JUDGES.limit,
      builtIn: true,
      result: "fail",
      sourceActionId: null,
      verifierActionId: null,
      artifactRefs: [],
      failureKind: record.stopReason,
      detail: `the run ended with ${record.stopReason}`,
      turnId: run.actions.at(-1)?.turnId ?? null,
    };
  }
  return null;
}

function judgeObservation(observation: TraceObservation, run: RunTraceView): JudgeDraft | null {
  const action = run.action(observation.actionId);
  if (!action || observation.code === null || observation.code === "aborted") return null;
  const kind = observation.code;
  const judgeName =
    action.actor === "model"
      ? BUILT_IN_JUDGES.model
      : LIMIT_CODES.has(kind)
        ? BUILT_IN_JUDGES.limit
        : isPolicyCode(kind)
          ? BUILT_IN_JUDGES.policy
          : BUILT_IN_JUDGES.toolError;
  const touched = run.touches(action);
  return {
    runId: observation.runId,
    judgeName,
    builtIn: true,
    result: "fail",
    sourceActionId: action.actionId,
    verifierActionId: action.actionId,
    // The workspace root ("", as `read .` names it) is no artifact: a case about it would warn of nothing.
    artifactRefs: [...new Set([...touched.writes, ...touched.reads])].filter((ref) => ref !== ""),
    failureKind: kind,
    detail: `${action.tool} ${action.argsSummary}: ${observation.summary}`.slice(0, 2000),
    turnId: action.turnId,
  };
}
