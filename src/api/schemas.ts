import { z } from "zod";
import { artifactPath, isSchemeRef } from "../awtl/artifacts";
import { BUILT_IN_JUDGES, JUDGE_NAME, JUDGE_NAME_RULE, judgeNameSchema } from "../awtl/builtin-judges";
import { FailedTurnCase } from "../awtl/failed-turn-case";
import { Approval, ImportSummary, MemoryRule, QuarantineEntry } from "../awtl/project-api";
import { Scorecard } from "../awtl/scorecard";
import {
  AfterFailedRun,
  AgentMessage,
  AgentRunOptions,
  API_ERROR_CODES,
  AttributionRecord,
  ContextWindow,
  DEFAULT_ATTRIBUTION_PAGE,
  DEFAULT_CASE_PAGE,
  DEFAULT_QUARANTINE_PAGE,
  DEFAULT_SESSION_PAGE,
  DEFAULT_STREAM_TOKEN_TTL_SECONDS,
  DEFAULT_WORKSPACE_PAGE,
  isoTime,
  JudgeResult,
  JudgeVerdict,
  MAX_APPROVER_CHARS,
  MAX_ARTIFACT_REF_CHARS,
  MAX_ATTRIBUTION_PAGE,
  MAX_CASE_PAGE,
  MAX_COMPACTION_INSTRUCTIONS_CHARS,
  MAX_IDEMPOTENCY_KEY_CHARS,
  MAX_IMPORTED_ID_CHARS,
  MAX_MODEL_NAME_CHARS,
  MAX_PROMPT_CHARS,
  MAX_QUARANTINE_PAGE,
  MAX_SESSION_PAGE,
  MAX_STREAM_TOKEN_TTL_SECONDS,
  MAX_TITLE_CHARS,
  MAX_VERDICT_ARTIFACT_REFS,
  MAX_VERDICT_DETAIL_CHARS,
  MAX_VERDICT_ID_CHARS,
  MAX_WORKSPACE_PAGE,
  MessageId,
  MIN_STREAM_TOKEN_TTL_SECONDS,
  nonBlank,
  ProjectId,
  RunId,
  SessionId,
  WhenBusy,
  WorkspaceId,
} from "../domain";
import { SKIP_REASONS } from "../workspace/archive-entry";

/**
 * The shapes of the HTTP API: what the routes validate requests with, and what they answer. The
 * OpenAPI document (openapi.ts) is built from these same schemas, and tests check real answers
 * against the response schemas.
 */

// Requests

/** An Idempotency-Key header or `requestId` body field: printable ASCII, so it is safe in logs and SQL text. */
export const IdempotencyKey = z
  .string()
  .min(1)
  .max(MAX_IDEMPOTENCY_KEY_CHARS)
  .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces");

const requestId = IdempotencyKey.optional().meta({
  description: "an idempotency key, when the Idempotency-Key header cannot be sent",
});

/** `POST /api/sessions`. */
export const CreateSessionBody = z.strictObject({
  workspaceId: WorkspaceId.optional(),
  projectId: ProjectId.optional(),
  // null is no title, as PATCH and fork take it.
  title: z.string().max(MAX_TITLE_CHARS).nullable().optional(),
  requestId,
});

/** `PATCH /api/sessions/:id`. */
export const PatchSessionBody = z.strictObject({ title: z.string().max(MAX_TITLE_CHARS).nullable() });

/** `POST /api/sessions/:id/fork`. */
export const ForkBody = z.strictObject({
  // As long as an id may be (an imported message's: MAX_IMPORTED_ID_CHARS).
  atMessageId: z
    .string()
    .min(1)
    .max(MAX_IMPORTED_ID_CHARS)
    .optional()
    .meta({ description: "the last message the fork keeps (default: the newest)" }),
  title: z.string().max(MAX_TITLE_CHARS).nullable().optional(),
  requestId,
});

/** A prompt's text: zod counts its characters as code points (an emoji is one). */
export const PromptText = nonBlank.max(MAX_PROMPT_CHARS);

/** `POST /api/sessions/:id/messages/stream`: the text plus optional permissions and limits. */
export const PromptBody = z.strictObject({
  text: PromptText,
  ...AgentRunOptions.partial().shape,
  model: nonBlank
    .max(MAX_MODEL_NAME_CHARS)
    .optional()
    .meta({ description: "another model name, or replay:<sessionId> to replay a recorded session" }),
  retryOf: RunId.optional().meta({
    description: "the run this prompt retries (another attempt of the same task: its failed-turn cases always reach the brief)",
  }),
  whenBusy: WhenBusy.optional().meta({
    description: "while a run is active: reject (409, default), steer the running run, or queue a followUp run",
  }),
  afterFailedRun: AfterFailedRun.optional().meta({
    description: "a queued follow-up: keep (default) or withdraw it when a run before it fails",
  }),
  requestId,
  contextWindow: ContextWindow.optional().meta({
    description: "the model's context window in tokens for this run (overrides MODEL_CONTEXT_WINDOW and the known-model table)",
  }),
});

/** `POST /api/sessions/:id/compact`. */
export const CompactBody = z.strictObject({
  instructions: z
    .string()
    .max(MAX_COMPACTION_INSTRUCTIONS_CHARS)
    .optional()
    .meta({ description: "extra instructions for the summary (what to keep, what to stress)" }),
});

/** `POST /api/sessions/:id/abort` and other routes that take no fields. */
export const EmptyBody = z.strictObject({});

/** `POST /api/sessions/:id/stream-token`. */
export const StreamTokenBody = z.strictObject({
  ttlSeconds: z
    .number()
    .int()
    .min(MIN_STREAM_TOKEN_TTL_SECONDS)
    .max(MAX_STREAM_TOKEN_TTL_SECONDS)
    .default(DEFAULT_STREAM_TOKEN_TTL_SECONDS),
});

/** `?limit=&cursor=` of a list route (query strings, so the limit arrives as text). */
function pageQuery(max: number, fallback: number) {
  const message = `must be a whole number from 1 to ${max}`;
  return {
    limit: z
      .string()
      // Digits only (no sign, exponent or space); leading zeros are the same number.
      .regex(/^\d{1,16}$/, { message })
      .transform(Number)
      .pipe(z.number().int().min(1, { message }).max(max, { message }))
      .optional()
      .meta({ description: `page size, 1-${max} (default ${fallback})` }),
    cursor: z.string().max(1000).optional().meta({ description: "nextCursor of the previous page" }),
  };
}

/** `GET /api/sessions?limit=&cursor=&projectId=`. */
export const SessionListQuery = z.strictObject({
  ...pageQuery(MAX_SESSION_PAGE, DEFAULT_SESSION_PAGE),
  projectId: ProjectId.optional().meta({ description: "only the sessions of this project" }),
});

/** `GET /api/workspaces?limit=&cursor=`. */
export const WorkspaceListQuery = z.strictObject(pageQuery(MAX_WORKSPACE_PAGE, DEFAULT_WORKSPACE_PAGE));

/** `GET /api/projects/:pid/cases?limit=&cursor=`. */
export const CaseListQuery = z.strictObject(pageQuery(MAX_CASE_PAGE, DEFAULT_CASE_PAGE));

/** `GET /api/sessions/:id/attributions?limit=&cursor=`. */
export const AttributionListQuery = z.strictObject(pageQuery(MAX_ATTRIBUTION_PAGE, DEFAULT_ATTRIBUTION_PAGE));

/** `GET /api/projects/:pid/quarantine?limit=&cursor=`. */
export const QuarantineListQuery = z.strictObject(pageQuery(MAX_QUARANTINE_PAGE, DEFAULT_QUARANTINE_PAGE));

/** A seq to resume after (`Last-Event-ID`, `?after=`): a non-negative integer, as text. */
export const ResumeSeq = z
  .string()
  .regex(/^\s*\d{1,15}\s*$/, { message: "must be a non-negative integer seq of at most 15 digits" })
  .meta({ description: "the seq of the last event received; the stream starts after it" });

/**
 * `GET /api/sessions/:id/{messages,events,trace}?after=`: only the records after this seq, e.g. the
 * `x-log-seq` an earlier read answered (or the newest event's `seq`), so a client reads what is new.
 */
export const LogExportQuery = z.strictObject({
  after: ResumeSeq.optional().meta({ description: "only the records after this seq (the x-log-seq of an earlier read)" }),
});

/**
 * `GET /api/sessions/:id/events/stream?after=&token=`: `after` when the client cannot send
 * `Last-Event-ID` (the header wins), `token` a stream token in place of `Authorization`.
 */
export const EventStreamQuery = z.strictObject({
  after: ResumeSeq.optional(),
  token: z.string().optional().meta({ description: "a stream token (POST /api/sessions/{id}/stream-token), for EventSource" }),
  runId: RunId.optional().meta({ description: "resume this run's stream (a queued follow-up's: the runs before it are skipped)" }),
  messageId: MessageId.optional().meta({
    description: "with runId: the steer that stream carries (its message_queued); the stream follows the message as the steer's own did",
  }),
});

/** `POST /api/sessions/import?workspaceId=&projectId=&title=`; the body is the conversation as JSONL. */
export const ImportQuery = z.strictObject({
  workspaceId: WorkspaceId.optional(),
  projectId: ProjectId.optional(),
  title: z.string().max(MAX_TITLE_CHARS).optional(),
});

const ARTIFACT_REF_RULE =
  "must be a path inside the workspace (relative, no '..' above the root) or a ref with a scheme, such as ci:job-12";

/**
 * judgeName's rule in words: refinements, which JSON Schema does not carry. Not a `pattern` either:
 * JUDGE_NAME needs the `u` flag (`\p{Cc}`), which a JSON Schema validator need not apply, and no
 * pattern says "not a look-alike of a built-in judge's name".
 */
const JUDGE_NAME_DESCRIPTION = `${JUDGE_NAME_RULE}; nor be the name of one of the harness's own judges (${Object.values(BUILT_IN_JUDGES).join(", ")}) or read as one (Tool-Error, full-width letters)`;

/** `POST /api/sessions/:id/judgements`: an external judge's verdict on one of the session's runs (a CI test run on `/changes`, a reviewer). */
export const JudgementBody = z.strictObject({
  runId: nonBlank.max(MAX_VERDICT_ID_CHARS),
  judgeName: judgeNameSchema(MAX_VERDICT_ID_CHARS)
    // The harness's own judges' names: an external verdict under one would pass for the harness's.
    .refine((name) => !(Object.values(BUILT_IN_JUDGES) as string[]).includes(name), {
      message: "is the name of one of the harness's own judges",
    })
    .meta({ description: JUDGE_NAME_DESCRIPTION }),
  result: JudgeVerdict,
  sourceActionId: nonBlank.max(MAX_VERDICT_ID_CHARS).optional(),
  artifactRefs: z
    .array(
      nonBlank
        .max(MAX_ARTIFACT_REF_CHARS)
        .refine((ref) => isSchemeRef(ref) || artifactPath(ref) !== null, { message: ARTIFACT_REF_RULE })
        .meta({ description: ARTIFACT_REF_RULE }),
    )
    .max(MAX_VERDICT_ARTIFACT_REFS),
  detail: z.string().max(MAX_VERDICT_DETAIL_CHARS).default(""),
  requestId: IdempotencyKey.optional().meta({ description: "an idempotency key, when the Idempotency-Key header cannot be sent" }),
});

/** `POST /api/projects/:pid/cases/:caseId/approve`. */
export const ApproveBody = z.strictObject({
  // A name shown in the case's page and the viewer: one line, as a judge's name is (hunt 95 sent "a\nb").
  approvedBy: z
    .string()
    .min(1)
    .max(MAX_APPROVER_CHARS)
    .refine((name) => JUDGE_NAME.test(name), { message: JUDGE_NAME_RULE }),
  note: z.string().max(MAX_VERDICT_DETAIL_CHARS).default(""),
});

/** `POST /api/projects/:pid/memory/promote`. */
export const PromoteBody = z.strictObject({ caseId: nonBlank.max(100), write: z.boolean().default(false) });

// Responses

export const ErrorResponse = z.strictObject({
  error: z.strictObject({
    code: z.enum(API_ERROR_CODES),
    message: z.string(),
    requestId: z.string().meta({ description: "the x-request-id of the answer; also in the server's log lines" }),
  }),
});

export const HealthResponse = z.strictObject({ status: z.literal("ok") });

export const WorkspaceCreated = z.strictObject({
  workspaceId: WorkspaceId,
  files: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  skipped: z.array(z.strictObject({ path: z.string(), reason: z.enum(SKIP_REASONS) })),
});

export const WorkspaceInfo = z.strictObject({
  workspaceId: WorkspaceId,
  files: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  createdAt: isoTime,
});

export const WorkspaceList = z.strictObject({
  items: z.array(WorkspaceInfo),
  nextCursor: z.string().nullable().meta({ description: "pass as ?cursor= for the next page; null on the last page" }),
});

export const SessionCreated = z.strictObject({
  sessionId: SessionId,
  workspaceId: WorkspaceId.nullable(),
  projectId: ProjectId.nullable(),
  createdAt: isoTime,
});

export const SessionImported = z.strictObject({
  ...SessionCreated.shape,
  messages: z.number().int().positive(),
});

const ForkOrigin = z.strictObject({ sessionId: SessionId, messageId: z.string().nullable() });

export const SessionInfo = z.strictObject({
  id: SessionId,
  workspaceId: WorkspaceId.nullable(),
  projectId: ProjectId.nullable(),
  title: z.string().nullable(),
  createdAt: isoTime,
  updatedAt: isoTime.meta({ description: "the time of the newest message" }),
  status: z.enum(["idle", "running"]),
  counts: z.strictObject({
    messages: z.number().int().nonnegative(),
    events: z.number().int().nonnegative(),
    trace: z.number().int().nonnegative(),
  }),
  queue: z
    .strictObject({ steering: z.array(z.string()), followUp: z.array(z.string()) })
    .meta({ description: "undelivered queued message ids, oldest first" }),
  forkedFrom: ForkOrigin.nullable().meta({ description: "the session and message this one was forked at" }),
  usage: z
    .strictObject({
      inputTokens: z.number().int().nonnegative(),
      outputTokens: z.number().int().nonnegative(),
      cachedInputTokens: z.number().int().nonnegative(),
      reasoningTokens: z.number().int().nonnegative(),
      totalTokens: z.number().int().nonnegative(),
      cost: z.number().nonnegative().nullable().meta({ description: "US dollars; null when the model's prices are unknown" }),
    })
    .nullable()
    .meta({
      description: "token and cost totals of the session (assistant messages and summary calls); null when its log cannot be read now",
    }),
  contextTokens: z.number().int().nonnegative().nullable().meta({ description: "the estimated tokens of the next model request" }),
  contextWindow: z.number().int().positive().nullable().meta({ description: "the context window the estimate is measured against" }),
});

export const CompactionResult = z.strictObject({
  messageId: nonBlank,
  tokensBefore: z.number().int().nonnegative(),
  tokensAfter: z.number().int().nonnegative(),
});

export const SessionMetaAnswer = z.strictObject({
  id: SessionId,
  workspaceId: WorkspaceId.nullable(),
  projectId: ProjectId.nullable(),
  title: z.string().nullable(),
  createdAt: isoTime,
  updatedAt: isoTime,
});

export const ForkCreated = z.strictObject({
  sessionId: SessionId,
  workspaceId: WorkspaceId.nullable(),
  projectId: ProjectId.nullable(),
  title: z.string().nullable(),
  createdAt: isoTime,
  forkedFrom: ForkOrigin,
});

export const QueueWithdrawn = z.strictObject({ messageId: z.string() });

export const SessionListItem = z.strictObject({
  id: SessionId,
  title: z.string().nullable(),
  projectId: ProjectId.nullable(),
  workspaceId: WorkspaceId.nullable(),
  createdAt: isoTime,
  updatedAt: isoTime.meta({ description: "as last reported by the session (at the start and end of each run)" }),
  status: z.enum(["idle", "running"]),
  counts: z.strictObject({ messages: z.number().int().nonnegative(), events: z.number().int().nonnegative() }),
});

export const SessionList = z.strictObject({
  items: z.array(SessionListItem),
  nextCursor: z.string().nullable().meta({ description: "pass as ?cursor= for the next page; null on the last page" }),
});

/** `POST .../abort`: `runId` names the run meant (a run that ended meanwhile is not mistaken for the next one). */
export const AbortBody = z.strictObject({
  runId: RunId.optional().meta({ description: "abort only this run: when it is not the active one, nothing is aborted" }),
});
export const AbortResult = z.strictObject({ aborted: z.boolean(), runId: z.string().nullable() });

export const StreamToken = z.strictObject({
  token: z.string().meta({ description: "pass as ?token= to GET /api/sessions/{id}/events/stream" }),
  expiresAt: isoTime,
});

/** One line of `GET /api/sessions/:id/messages` (and of an import). */
export const MessageLine = AgentMessage;

export const JudgementResult = z.strictObject({ judgeResult: JudgeResult, attribution: AttributionRecord.nullable() });
export const AttributionList = z.strictObject({
  attributions: z.array(AttributionRecord),
  nextCursor: z.string().nullable().meta({ description: "pass as ?cursor= for the next page; null on the last page" }),
});
export const CaseList = z.strictObject({
  cases: z.array(FailedTurnCase),
  nextCursor: z.string().nullable().meta({ description: "pass as ?cursor= for the next page; null on the last page" }),
});
export const CaseDetail = z.strictObject({
  case: FailedTurnCase,
  /** The latest replay's. */
  scorecard: Scorecard.nullable(),
  /** The latest one a judge settled (passed or stale): what promotion goes by while a later replay is pending or unavailable. */
  judgedScorecard: Scorecard.nullable(),
  /** Who approved it (one approval per name, the latest first; the 20 latest names are kept). */
  approvals: z.array(Approval),
});
export const ScorecardAnswer = z.strictObject({ scorecard: Scorecard });
export const ApprovalAnswer = z.strictObject({ approval: Approval });
export const PromotionAnswer = z.strictObject({ rule: MemoryRule });
export const MemoryList = z.strictObject({ rules: z.array(MemoryRule) });
export const QuarantineList = z.strictObject({
  quarantine: z.array(QuarantineEntry),
  nextCursor: z.string().nullable().meta({ description: "pass as ?cursor= for the next page; null on the last page" }),
});
export const TraceImportSummary = ImportSummary;
