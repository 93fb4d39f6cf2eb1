import { z } from "zod";
import { DENIAL_CODES, RUN_ERROR_CODES } from "./errors";
import { isoTime, nonBlank } from "./schema";

/**
 * Trace records (AWTL): what a run did, action by action, in the session's log beside its messages
 * and events (a third stream, same gap-free seq: `writerSeq` is the record's own seq). Summaries only,
 * never raw file contents. Discriminated by `type`.
 */

const traceBase = {
  /** The task: the session. */
  taskId: nonBlank,
  runId: nonBlank,
  /** One run is one attempt; a retry (`retryOf`) is another attempt of the same task. */
  attemptId: nonBlank,
  writerSeq: z.number().int().positive(),
  createdAt: isoTime,
};

/** A run or one of its turns (one model call and the tool calls it asked for) begins. */
export const SpanStart = z.strictObject({
  type: z.literal("span_start"),
  ...traceBase,
  spanId: nonBlank,
  kind: z.enum(["run", "turn"]),
  parentSpanId: nonBlank.nullable(),
  turnId: nonBlank.nullable(),
  /** Runs only: the run this one retries, if any. */
  retryOf: nonBlank.nullable(),
});

export const SpanEnd = z.strictObject({
  type: z.literal("span_end"),
  ...traceBase,
  spanId: nonBlank,
  kind: z.enum(["run", "turn"]),
  turnId: nonBlank.nullable(),
  status: z.enum(["ok", "error"]),
  /** Runs: the stop reason; turns: why the turn ended. */
  stopReason: nonBlank,
});

/** One model call or one tool call, with the workspace paths it read or wrote. */
export const TraceAction = z.strictObject({
  type: z.literal("action"),
  ...traceBase,
  spanId: nonBlank,
  turnId: nonBlank,
  actionId: nonBlank,
  actor: z.enum(["model", "tool"]),
  /** The tool's name, or the model's name for a model call. */
  tool: nonBlank,
  /** The tool call's id (tool actions). */
  callId: nonBlank.nullable(),
  /** A short, single-line summary of the arguments (never whole file contents). */
  argsSummary: z.string().max(300),
  reads: z.array(z.string()),
  writes: z.array(z.string()),
});

/** What came of an action. */
export const TraceObservation = z.strictObject({
  type: z.literal("observation"),
  ...traceBase,
  spanId: nonBlank,
  turnId: nonBlank,
  actionId: nonBlank,
  status: z.enum(["ok", "error"]),
  /** The error or denial code (`not_found`, `write_not_allowed`, `rate_limited`, ...), or null. */
  code: z.string().nullable(),
  /** A command's exit code (bash), or null. */
  exitCode: z.number().int().nullable(),
  summary: z.string().max(300),
  /** The workspace paths the action read or wrote, as observed when it finished. */
  reads: z.array(z.string()),
  writes: z.array(z.string()),
});

/**
 * A model call's observation code when the run's time ran out before the provider sent any of its
 * answer: an `environment` failure, where a timeout during the agent's own work is a limit it hit.
 */
export const PROVIDER_TIMEOUT = "provider_timeout";

export const JudgeVerdict = z.enum(["pass", "fail", "warn"]);
export type JudgeVerdict = z.infer<typeof JudgeVerdict>;

/** A judge's verdict on a run: built in (tool errors, denials, limits, model errors) or posted by a client. */
export const JudgeResult = z.strictObject({
  type: z.literal("judge_result"),
  ...traceBase,
  judgeId: nonBlank,
  judgeName: nonBlank,
  builtIn: z.boolean(),
  result: JudgeVerdict,
  /** The action the judge blames, when it knows. */
  sourceActionId: nonBlank.nullable(),
  /** The action that observed the failure (built-in judges), when there is one. */
  verifierActionId: nonBlank.nullable(),
  /** Workspace paths (or other refs) the verdict is about. */
  artifactRefs: z.array(nonBlank),
  /** What failed: a tool error code, a denial reason, a run error code, or `external`. */
  failureKind: nonBlank,
  detail: z.string().max(2000),
  turnId: nonBlank.nullable(),
});

/** The cases of a Failure Prevention Brief that a run was given (so a later failure can blame a brief). */
export const MemoryRead = z.strictObject({
  type: z.literal("memory_read"),
  ...traceBase,
  caseIds: z.array(nonBlank).min(1),
  promotedCaseIds: z.array(nonBlank),
  briefChars: z.number().int().nonnegative(),
});

export const FailureClass = z.enum(["environment", "flaky", "harness", "policy", "agent"]);
export type FailureClass = z.infer<typeof FailureClass>;

/** A failed judge result tied to the actions behind it; derived once, when the verdict arrives. */
export const AttributionRecord = z.strictObject({
  type: z.literal("attribution"),
  ...traceBase,
  attributionId: nonBlank,
  /** The judge_result's judgeId. */
  failureEventId: nonBlank,
  failureTurnId: nonBlank.nullable(),
  judgeName: nonBlank,
  failureKind: nonBlank,
  classification: FailureClass,
  sourceActionIds: z.array(nonBlank),
  verifierActionId: nonBlank.nullable(),
  touchedActionIds: z.array(nonBlank),
  memoryReadNodeIds: z.array(nonBlank),
  artifactRefs: z.array(nonBlank),
  evidenceRefs: z.array(nonBlank),
  /** How the source action was chosen (`wrote_in_run`: an external verdict named none of the files the run changed; its writes are the sources). */
  rule: z.enum(["given", "wrote_artifact", "wrote_in_run", "read_artifact", "failing_action", "last_action", "none"]),
  /** The case this failure became (agent and policy failures), or null. */
  caseId: nonBlank.nullable(),
});

export const TraceRecord = z.discriminatedUnion("type", [
  SpanStart,
  SpanEnd,
  TraceAction,
  TraceObservation,
  JudgeResult,
  MemoryRead,
  AttributionRecord,
]);
export type TraceRecord = z.infer<typeof TraceRecord>;
export type TraceType = TraceRecord["type"];
export const TRACE_TYPES: readonly TraceType[] = TraceRecord.options.map((o) => o.shape.type.value);
export type TraceAction = z.infer<typeof TraceAction>;
export type TraceObservation = z.infer<typeof TraceObservation>;
export type JudgeResult = z.infer<typeof JudgeResult>;
export type AttributionRecord = z.infer<typeof AttributionRecord>;
export type MemoryRead = z.infer<typeof MemoryRead>;

/** Codes a judge may name as the failure kind, besides free `external` verdicts. */
export const BUILT_IN_FAILURE_KINDS = [...DENIAL_CODES, ...RUN_ERROR_CODES] as const;

/** A trace record before the log gives it its seq (`writerSeq`). */
export type TraceDraft = TraceRecord extends infer R ? (R extends TraceRecord ? Omit<R, "writerSeq"> : never) : never;
