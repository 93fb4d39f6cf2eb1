import { z } from "zod";
import {
  type AttributionRecord,
  formatIssues,
  type JudgeResult,
  MAX_ARTIFACT_REF_CHARS,
  MAX_JSON_DEPTH,
  MAX_TRACE_ID_CHARS,
  nestsDeeperThan,
  sha256Hex,
  type TraceAction,
  type TraceObservation,
  type TraceRecord,
} from "../domain";
import { artifactPath, isSchemeRef } from "./artifacts";
import { judgeNameSchema } from "./builtin-judges";
import { ImportedAttribution, oversizedRecord } from "./trace-import-bounds";

/** Seed 003's snake_case field names and ours. */
const FIELD_NAMES: Record<string, string> = {
  task_id: "taskId",
  run_id: "runId",
  attempt_id: "attemptId",
  turn_id: "turnId",
  span_id: "spanId",
  parent_span_id: "parentSpanId",
  action_id: "actionId",
  writer_seq: "writerSeq",
  source_action_id: "sourceActionId",
  verifier_action_id: "verifierActionId",
  artifact_refs: "artifactRefs",
  judge_name: "judgeName",
  judge_id: "judgeId",
  failure_kind: "failureKind",
  created_at: "createdAt",
  exit_code: "exitCode",
  args_summary: "argsSummary",
  case_ids: "caseIds",
  call_id: "callId",
};

const text = z.string().min(1).max(MAX_TRACE_ID_CHARS);
const paths = z.array(z.string().max(4096)).max(200).default([]);
/**
 * The task and attempt a line names, capped like every other id (a case repeats them); one left out,
 * null or empty falls back to the import's task and the line's run.
 */
const lineIds = {
  taskId: z.string().max(MAX_TRACE_ID_CHARS).nullable().optional(),
  attemptId: z.string().max(MAX_TRACE_ID_CHARS).nullable().optional(),
};

/**
 * A foreign trace line, after renaming: lenient about what it may leave out (defaults are filled in),
 * strict about what it says. Unknown fields are dropped rather than refused (foreign traces carry
 * their own extras, such as `command` or `lifecycle_event`).
 */
const ImportedLine = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("action"),
    ...lineIds,
    runId: text,
    actionId: text,
    turnId: text.optional(),
    spanId: text.optional(),
    tool: text.default("unknown"),
    argsSummary: z.string().max(300).optional(),
    command: z.string().optional(),
    reads: paths,
    writes: paths,
  }),
  z.object({
    type: z.literal("observation"),
    ...lineIds,
    runId: text,
    actionId: text.optional(),
    spanId: text.optional(),
    status: z.enum(["ok", "error"]).optional(),
    exitCode: z.number().int().nullable().optional(),
    code: z.string().max(100).nullable().optional(),
    summary: z.string().max(300).default(""),
    reads: paths,
    writes: paths,
  }),
  z.object({
    type: z.literal("judge_result"),
    ...lineIds,
    runId: text,
    // As a judgement takes it: a judge's name is shown in briefs. (The harness's own judges' names are
    // kept: its own export imports whole; an imported verdict is never built in.)
    // A foreign trace may use the harness's own judges' names (its export does); never a look-alike.
    judgeName: judgeNameSchema(500),
    result: z.enum(["pass", "fail", "warn", "failed", "passed"]),
    sourceActionId: text.nullable().optional(),
    spanId: text.optional(),
    // As a judgement takes them: a path inside the workspace, or a ref with a scheme (ci:job-12), up
    // to a judgement's length (capped as ids were, a 501-character ref of this harness's own export
    // was quarantined; hunt 59).
    artifactRefs: z
      .array(
        z
          .string()
          .min(1)
          .max(MAX_ARTIFACT_REF_CHARS)
          .refine((ref) => isSchemeRef(ref) || artifactPath(ref) !== null, {
            message: "must be a path inside the workspace or a ref with a scheme",
          }),
      )
      .max(200)
      .default([]),
    detail: z.string().max(2000).default(""),
    failureKind: z.string().max(100).optional(),
    turnId: text.nullable().optional(),
  }),
  z.object({ type: z.literal("span_start"), ...lineIds, runId: text, spanId: text.optional() }),
  z.object({ type: z.literal("span_end"), ...lineIds, runId: text, spanId: text.optional() }),
  z.object({ type: z.literal("memory_read"), ...lineIds, runId: text, caseIds: z.array(text).min(1).max(50) }),
]);

export interface QuarantinedLine {
  line: number;
  sha256: string;
  reason: string;
}

export interface ParsedImport {
  records: { line: number; record: TraceRecord }[];
  /** The first `maxQuarantined` refused lines, in line order... */
  quarantined: QuarantinedLine[];
  /** ...and how many lines were refused in all. */
  quarantinedLines: number;
}

/**
 * Reads a JSONL body of foreign traces line by line. A line that is not UTF-8, not JSON, not an
 * object, of an unknown type or missing what its type needs goes to quarantine with its line number,
 * the SHA-256 of its bytes and the reason (the first `maxQuarantined` of them; the rest are counted);
 * every good line is kept, normalised to this project's records.
 */
export async function parseTraceImport(
  body: Uint8Array,
  ids: { projectTask: string; now: string },
  maxQuarantined = Number.POSITIVE_INFINITY,
): Promise<ParsedImport> {
  const records: ParsedImport["records"] = [];
  const quarantined: QuarantinedLine[] = [];
  let quarantinedLines = 0;
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  let seq = 0;
  let index = -1;
  // A good line's record is kept unless it is too large to store as one row (then the reason).
  const keep = (record: TraceRecord): string | null => {
    const tooLarge = oversizedRecord(record);
    if (tooLarge) return tooLarge;
    records.push({ line: index + 1, record });
    return null;
  };
  for (const raw of splitLines(body)) {
    index++;
    const bytes = raw.at(-1) === 0x0d ? raw.subarray(0, -1) : raw;
    const reason = (() => {
      let line: string;
      try {
        line = decoder.decode(bytes);
      } catch {
        return "not valid UTF-8";
      }
      if (line.trim() === "") return null;
      if (nestsDeeperThan(line, MAX_JSON_DEPTH)) return `arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels`;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (err) {
        return malformedJson(err);
      }
      if (typeof value !== "object" || value === null || Array.isArray(value)) return "a trace line must be a JSON object";
      const renamed = Object.fromEntries(Object.entries(value).map(([k, v]) => [FIELD_NAMES[k] ?? k, v]));
      if (renamed.type === "attribution") {
        // The harness's own export holds attributions: kept as they are when they are exactly that
        // record (cases come from the judge results, attributed again here, never from these).
        const { seq: _seq, ...rest } = renamed;
        const attribution = ImportedAttribution.safeParse(rest);
        if (!attribution.success) return issuesReason(attribution.error.issues);
        return keep(attribution.data as AttributionRecord);
      }
      const parsed = ImportedLine.safeParse(renamed);
      if (!parsed.success) return issuesReason(parsed.error.issues);
      // A line's writerSeq, when it gives none, is its place among the lines kept.
      const refused = keep(normalise(parsed.data, seq + 1, renamed, ids));
      if (refused === null) seq++;
      return refused;
    })();
    if (reason === null) continue;
    quarantinedLines++;
    if (quarantined.length < maxQuarantined)
      quarantined.push({ line: index + 1, sha256: await sha256Hex(bytes), reason: reason.slice(0, 500) });
  }
  return { records, quarantined, quarantinedLines };
}

/**
 * The reason for a line JSON.parse refused, with the position where V8 says it failed, if it says.
 * Never its message: V8 quotes the text around the error, and a quarantine keeps none of the line.
 */
function malformedJson(err: unknown): string {
  const at = /at position (\d+)/.exec(err instanceof Error ? err.message : "")?.[1];
  return at === undefined ? "malformed JSON" : `malformed JSON (at character ${Number(at) + 1})`;
}

/**
 * The reason for a line its schema refused: the fields and what they need (zod's messages name the
 * expected, not the received). Unknown field names come from the line, so only their number is given.
 */
function issuesReason(issues: readonly z.core.$ZodIssue[]): string {
  return formatIssues(
    issues.map((issue) =>
      issue.code === "unrecognized_keys"
        ? { ...issue, message: `${issue.keys.length} unknown field${issue.keys.length === 1 ? "" : "s"}` }
        : issue,
    ),
  );
}

/** The lines of a body, split at LF (a last line without one counts), one at a time: a body may hold millions. */
function* splitLines(body: Uint8Array): Generator<Uint8Array> {
  let start = 0;
  for (let i = body.indexOf(0x0a); i !== -1; i = body.indexOf(0x0a, start)) {
    yield body.subarray(start, i);
    start = i + 1;
  }
  if (start < body.length) yield body.subarray(start);
}

function normalise(
  data: z.infer<typeof ImportedLine>,
  seq: number,
  raw: Record<string, unknown>,
  ids: { projectTask: string; now: string },
): TraceRecord {
  const base = {
    taskId: data.taskId || ids.projectTask,
    runId: data.runId,
    attemptId: data.attemptId || data.runId,
    writerSeq: typeof raw.writerSeq === "number" && Number.isInteger(raw.writerSeq) && raw.writerSeq > 0 ? raw.writerSeq : seq,
    createdAt:
      typeof raw.createdAt === "string" && !Number.isNaN(Date.parse(raw.createdAt)) ? new Date(raw.createdAt).toISOString() : ids.now,
  };
  const span = "spanId" in data && data.spanId ? data.spanId : `imported-${data.runId}`;
  switch (data.type) {
    case "action": {
      const summary = data.argsSummary ?? data.command ?? "";
      const action: TraceAction = {
        type: "action",
        ...base,
        spanId: span,
        turnId: data.turnId ?? span,
        actionId: data.actionId,
        actor: "tool",
        tool: data.tool,
        callId: null,
        argsSummary: summary.slice(0, 200),
        reads: data.reads,
        writes: data.writes,
      };
      return action;
    }
    case "observation": {
      const failed = data.status === "error" || (data.exitCode !== undefined && data.exitCode !== null && data.exitCode !== 0);
      const observation: TraceObservation = {
        type: "observation",
        ...base,
        spanId: span,
        turnId: span,
        actionId: data.actionId ?? span,
        status: failed ? "error" : "ok",
        code: data.code ?? (failed ? "exit_status" : null),
        exitCode: data.exitCode ?? null,
        summary: data.summary.slice(0, 300),
        reads: data.reads,
        writes: data.writes,
      };
      return observation;
    }
    case "judge_result": {
      const result = data.result === "failed" ? "fail" : data.result === "passed" ? "pass" : data.result;
      const judge: JudgeResult = {
        type: "judge_result",
        ...base,
        judgeId: `imported-${data.runId}-${base.writerSeq}`,
        judgeName: data.judgeName,
        builtIn: false,
        result,
        sourceActionId: data.sourceActionId ?? null,
        verifierActionId: null,
        artifactRefs: data.artifactRefs,
        failureKind: data.failureKind ?? "external",
        detail: data.detail,
        turnId: data.turnId ?? null,
      };
      return judge;
    }
    case "span_start":
      return { type: "span_start", ...base, spanId: span, kind: "run", parentSpanId: null, turnId: null, retryOf: null };
    case "span_end":
      return { type: "span_end", ...base, spanId: span, kind: "run", turnId: null, status: "ok", stopReason: "STOP" };
    case "memory_read":
      return { type: "memory_read", ...base, caseIds: data.caseIds, promotedCaseIds: [], briefChars: 0 };
  }
}
