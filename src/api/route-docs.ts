import type { z } from "zod";
import {
  AgentMessage,
  type ApiErrorCode,
  EVENT_TYPES,
  MAX_ATTRIBUTION_PAGE_BYTES,
  MAX_PROJECT_QUARANTINE_LINES,
  MAX_QUARANTINED_LINES_PER_IMPORT,
  MAX_STALLED_EVENT_STREAMS_PER_ISOLATE,
  MAX_STALLED_EVENT_STREAMS_PER_SESSION,
  SeqAgentEvent,
  SSE_STALL_GRACE_MS,
  SSE_STALLED_STREAM_MS,
  TraceRecord,
} from "../domain";
import { ARCHIVE_CONTENT_TYPES } from "../workspace/archive-format";
import { JSONL_MEDIA_TYPES } from "./request-body";
import {
  AbortBody,
  AbortResult,
  ApprovalAnswer,
  ApproveBody,
  AttributionList,
  AttributionListQuery,
  CaseDetail,
  CaseList,
  CaseListQuery,
  CompactBody,
  CompactionResult,
  CreateSessionBody,
  EmptyBody,
  EventStreamQuery,
  ForkBody,
  ForkCreated,
  HealthResponse,
  IdempotencyKey,
  ImportQuery,
  JudgementBody,
  JudgementResult,
  LogExportQuery,
  MemoryList,
  PatchSessionBody,
  PromoteBody,
  PromotionAnswer,
  PromptBody,
  QuarantineList,
  QuarantineListQuery,
  QueueWithdrawn,
  ResumeSeq,
  ScorecardAnswer,
  SessionCreated,
  SessionImported,
  SessionInfo,
  SessionList,
  SessionListQuery,
  SessionMetaAnswer,
  StreamToken,
  StreamTokenBody,
  TraceImportSummary,
  WorkspaceCreated,
  WorkspaceInfo,
  WorkspaceList,
  WorkspaceListQuery,
} from "./schemas";

/**
 * What each route of the API takes, answers and can fail with: the one table the OpenAPI document
 * (openapi.ts) is built from. The schemas are the ones the routes validate with (schemas.ts and the
 * domain's); test/api/openapi.test.ts checks the table against the routes Hono has registered.
 */

export type Method = "get" | "post" | "patch" | "delete";

/**
 * A body or answer: a JSON schema, or another media type described in words. A body taken in several
 * media types lists them all (each gets its own entry in the document's `content`).
 */
export type Content =
  | { type: "application/json"; schema: z.ZodType; name: string; example?: unknown }
  | { type: string | readonly string[]; description: string; itemSchema?: { schema: z.ZodType; name: string } };

/** A header of a route's success answer, besides x-request-id (and x-run-id on a stream). */
export interface AnswerHeader {
  name: string;
  description: string;
  schema: { type: "string" | "integer"; minimum?: number };
}

export interface RouteDoc {
  method: Method;
  /** The path as Hono registers it (`/api/sessions/:id`). */
  path: string;
  summary: string;
  /** Needs the bearer token when AUTH_TOKENS is set. */
  auth: boolean;
  /** Takes a stream token in `?token=` instead of the bearer token (auth.ts, STREAM_PATH). */
  streamToken?: true;
  query?: z.ZodObject;
  /** Request headers the route reads, besides Authorization and Content-Type. */
  headers?: readonly { name: string; schema: z.ZodType }[];
  body?: Content;
  status: number;
  answer: Content | null;
  /** Headers the success answer carries, besides x-request-id (and x-run-id on a stream). */
  answerHeaders?: readonly AnswerHeader[];
  /**
   * The codes of this route. Those of every `/api/` route (COMMON_API_ERRORS) and of every route with
   * a body (BODY_API_ERRORS) are added by the document; they need not be listed.
   */
  errors: readonly ApiErrorCode[];
}

const SESSION: readonly ApiErrorCode[] = ["invalid_session_id", "session_not_found"];
const JSON_BODY: readonly ApiErrorCode[] = ["unsupported_media_type", "invalid_json", "invalid_body", "invalid_text", "body_too_large"];
const KEY: readonly ApiErrorCode[] = ["invalid_idempotency_key", "idempotency_key_reused"];
const IDEMPOTENCY_HEADER = {
  name: "Idempotency-Key",
  schema: IdempotencyKey.meta({ description: "the same key from the same tenant within 24 h returns the original outcome" }),
};
// A path under a file reads as not_found (not_a_directory is for writes).
const FILE: readonly ApiErrorCode[] = ["not_found", "is_directory", "path_escape", "path_too_long", "file_too_large"];
const JSONL = "application/x-ndjson";
/** The archive types an upload is read as; magic bytes decide first, so any type carries a recognisable archive. */
const ARCHIVE_TYPES = [...ARCHIVE_CONTENT_TYPES, "application/octet-stream"];
/** Where a prompt's stream ends (README, "prompts while busy"). */
const PROMPT_STREAM_END =
  "The stream ends after the terminal event (agent_completed or agent_error) of the run that carries the prompt, except: a follow-up withdrawn before its run starts ends its stream at queued_message_withdrawn; a steer the run ends without taking goes on past that run's terminal event, with message_queued (mode followUp) and then the run that now carries it, to that run's terminal event.";
/** Where a replayed or resumed stream ends. */
const EVENT_STREAM_END =
  "Without runId the stream ends once the events after Last-Event-ID are sent and the active run, if any, has ended (agent_completed or agent_error). With runId it ends at that run's terminal event, or at queued_message_withdrawn for a follow-up withdrawn before its run started; with messageId too it follows the steer as its own stream did (past the run's terminal event, into the follow-up run that carries it, when the run did not take it).";

const sessionLocation: AnswerHeader = {
  name: "location",
  description: "the session created: /api/sessions/{id}",
  schema: { type: "string" },
};
/** A file download's headers: its length, and no content sniffing (the bytes are the workspace's, not a page). */
const FILE_HEADERS: readonly AnswerHeader[] = [
  { name: "content-length", description: "the file's size in bytes (on HEAD too)", schema: { type: "integer", minimum: 0 } },
  { name: "x-content-type-options", description: "nosniff", schema: { type: "string" } },
];
const LOG_SEQ: AnswerHeader = {
  name: "x-log-seq",
  description: "the log's last seq when the read began: pass it as after to read only what came since",
  schema: { type: "integer", minimum: 0 },
};

const json = (schema: z.ZodType, name: string, example?: unknown): Content => ({ type: "application/json", schema, name, example });

const T = "2026-11-30T03:00:00.000Z";
const SID = "s_01jd8x7k2m3n4p5q6r7s8t9v0w";
const WID = "w_01jd8x6a1b2c3d4e5f6g7h8j9k";

/** The routes of workspaces, sessions and runs, in the order the README lists them. */
const CORE_ROUTES: readonly RouteDoc[] = [
  {
    method: "get",
    path: "/healthz",
    summary:
      "Liveness: answers without auth and without touching storage; a misconfigured CORS_ORIGINS fails it too (500 cors_misconfigured), as it fails every route closed.",
    auth: false,
    status: 200,
    answer: json(HealthResponse, "Health", { status: "ok" }),
    errors: ["cors_misconfigured"],
  },
  {
    method: "get",
    path: "/openapi.json",
    summary: "This document.",
    auth: false,
    status: 200,
    answer: { type: "application/json", description: "the OpenAPI 3.1 document" },
    errors: ["cors_misconfigured"],
  },
  {
    method: "post",
    path: "/api/workspaces",
    summary: "Uploads a workspace snapshot (tar, tar.gz or zip, by Content-Type or magic bytes).",
    auth: true,
    headers: [IDEMPOTENCY_HEADER],
    body: {
      type: ARCHIVE_TYPES,
      description:
        "the archive: tar, tar.gz or zip, told by its magic bytes, else by its Content-Type (an old v7 tar, without magic, needs a tar type)",
    },
    status: 201,
    answerHeaders: [{ name: "location", description: "the workspace created: /api/workspaces/{wid}", schema: { type: "string" } }],
    answer: json(WorkspaceCreated, "WorkspaceCreated", { workspaceId: WID, files: 12, bytes: 34567, skipped: [] }),
    errors: [
      "archive_invalid",
      "archive_unsupported",
      "archive_too_large",
      "archive_too_many_files",
      "archive_bomb",
      "upload_too_slow",
      "ingest_busy",
      "path_escape",
      ...KEY,
      "quota_exceeded",
    ],
  },
  {
    method: "get",
    path: "/api/workspaces",
    summary: "The caller's workspace snapshots, newest first, a page at a time (those uploaded before the list existed are not in it).",
    auth: true,
    query: WorkspaceListQuery,
    status: 200,
    answer: json(WorkspaceList, "WorkspaceList", {
      items: [{ workspaceId: WID, files: 12, bytes: 34567, createdAt: T }],
      nextCursor: null,
    }),
    errors: ["invalid_query", "invalid_cursor"],
  },
  {
    method: "get",
    path: "/api/workspaces/:wid",
    summary: "Describes a workspace snapshot.",
    auth: true,
    status: 200,
    answer: json(WorkspaceInfo, "WorkspaceInfo", { workspaceId: WID, files: 12, bytes: 34567, createdAt: T }),
    errors: ["invalid_workspace_id", "workspace_not_found"],
  },
  {
    method: "delete",
    path: "/api/workspaces/:wid",
    summary:
      "Deletes a workspace snapshot: its pack, index, search index and meta; then it is 404. Refused while sessions use it. Repeat to finish a deletion that failed half-way.",
    auth: true,
    status: 204,
    answer: null,
    errors: ["invalid_workspace_id", "workspace_not_found", "workspace_in_use"],
  },
  {
    method: "get",
    path: "/api/workspaces/:wid/files/:path{[\\s\\S]+}",
    summary: "A file of the snapshot, as uploaded.",
    auth: true,
    status: 200,
    answer: { type: "application/octet-stream", description: "the file's bytes" },
    answerHeaders: FILE_HEADERS,
    errors: ["invalid_workspace_id", "workspace_not_found", ...FILE],
  },
  {
    method: "get",
    path: "/api/sessions",
    summary: "The caller's sessions, newest first, a page at a time.",
    auth: true,
    query: SessionListQuery,
    status: 200,
    answer: json(SessionList, "SessionList", {
      items: [
        {
          id: SID,
          title: "fix the parser",
          projectId: null,
          workspaceId: WID,
          createdAt: T,
          updatedAt: T,
          status: "idle",
          counts: { messages: 4, events: 11 },
        },
      ],
      nextCursor: null,
    }),
    errors: ["invalid_query", "invalid_cursor"],
  },
  {
    method: "post",
    path: "/api/sessions",
    summary: "Opens a session, optionally on a workspace.",
    auth: true,
    headers: [IDEMPOTENCY_HEADER],
    body: json(CreateSessionBody, "CreateSession", { workspaceId: WID, title: "fix the parser" }),
    status: 201,
    answerHeaders: [sessionLocation],
    answer: json(SessionCreated, "SessionCreated", { sessionId: SID, workspaceId: WID, projectId: null, createdAt: T }),
    errors: [...JSON_BODY, ...KEY, "invalid_workspace_id", "workspace_not_found", "project_not_found", "session_exists", "quota_exceeded"],
  },
  {
    method: "post",
    path: "/api/sessions/import",
    summary:
      "A new session holding an exported conversation (the JSONL of GET /api/sessions/{id}/messages), e.g. to replay it with model replay:<id>.",
    auth: true,
    query: ImportQuery,
    headers: [IDEMPOTENCY_HEADER],
    body: {
      type: JSONL_MEDIA_TYPES,
      description: "one message per line, as exported",
      itemSchema: { schema: AgentMessage, name: "AgentMessage" },
    },
    status: 201,
    answerHeaders: [sessionLocation],
    answer: json(SessionImported, "SessionImported", { sessionId: SID, workspaceId: WID, projectId: null, createdAt: T, messages: 8 }),
    errors: [
      "invalid_query",
      "unsupported_media_type",
      "body_too_large",
      "upload_too_slow",
      "ingest_busy",
      "import_invalid",
      "invalid_text",
      "workspace_not_found",
      "project_not_found",
      ...KEY,
      "session_not_found",
      "invalid_record",
      "record_too_large",
      "session_exists",
      "quota_exceeded",
    ],
  },
  {
    method: "get",
    path: "/api/sessions/:id",
    summary: "Describes a session: status (idle or running), counts, token and cost totals, and the context estimate against its window.",
    auth: true,
    status: 200,
    answer: json(SessionInfo, "SessionInfo", {
      id: SID,
      workspaceId: WID,
      projectId: null,
      title: "fix the parser",
      createdAt: T,
      updatedAt: T,
      status: "idle",
      counts: { messages: 4, events: 11, trace: 9 },
      queue: { steering: [], followUp: [] },
      forkedFrom: null,
      usage: { inputTokens: 5210, outputTokens: 312, cachedInputTokens: 2048, reasoningTokens: 0, totalTokens: 5522, cost: 0.00098 },
      contextTokens: 2730,
      contextWindow: 128000,
    }),
    errors: SESSION,
  },
  {
    method: "patch",
    path: "/api/sessions/:id",
    summary: "Renames a session (null clears the title).",
    auth: true,
    body: json(PatchSessionBody, "PatchSession", { title: "fix the parser, take 2" }),
    status: 200,
    answer: json(SessionMetaAnswer, "SessionMeta", {
      id: SID,
      workspaceId: WID,
      projectId: null,
      title: "fix the parser, take 2",
      createdAt: T,
      updatedAt: T,
    }),
    errors: [...SESSION, ...JSON_BODY],
  },
  {
    method: "delete",
    path: "/api/sessions/:id",
    summary:
      "Deletes a session: aborts its run, removes its log, workspace changes, R2 objects and listing; then every route answers 404. Repeat to finish a deletion that failed half-way.",
    auth: true,
    status: 204,
    answer: null,
    errors: SESSION,
  },
  {
    method: "post",
    path: "/api/sessions/:id/fork",
    summary:
      "A new session with the committed messages up to and including atMessageId (default: the newest) and the workspace exactly as it was at that message; the source is untouched.",
    auth: true,
    headers: [IDEMPOTENCY_HEADER],
    body: json(ForkBody, "Fork", { title: "try another way" }),
    status: 201,
    answerHeaders: [sessionLocation],
    answer: json(ForkCreated, "ForkCreated", {
      sessionId: "s_01jd8x7k2m3n4p5q6r7s8t9v0x",
      workspaceId: WID,
      projectId: null,
      title: "try another way",
      createdAt: T,
      forkedFrom: { sessionId: SID, messageId: "m_01jd8x9a1b2c3d4e5f6g7h8j9k" },
    }),
    errors: [
      ...SESSION,
      ...JSON_BODY,
      ...KEY,
      "project_not_found",
      "message_not_found",
      "history_unreadable",
      "session_exists",
      "record_too_large",
      "fork_source_changed",
      "quota_exceeded",
    ],
  },
  {
    method: "post",
    path: "/api/sessions/:id/compact",
    summary:
      "Compacts the history now: the older messages are summarised by the model into a compaction record; the newest ~20,000 tokens are kept as they are.",
    auth: true,
    body: json(CompactBody, "CompactRequest", { instructions: "keep the list of failing tests" }),
    status: 200,
    answer: json(CompactionResult, "CompactionResult", {
      messageId: "m_01jd8xa1b2c3d4e5f6g7h8j9k0",
      tokensBefore: 118000,
      tokensAfter: 23400,
    }),
    errors: [
      ...SESSION,
      ...JSON_BODY,
      "session_busy",
      "nothing_to_compact",
      "compaction_failed",
      "compaction_aborted",
      "history_unreadable",
    ],
  },
  {
    method: "get",
    path: "/api/sessions/:id/messages",
    summary:
      "The session's messages as JSONL, exactly as stored; with ?after= only those after that seq. x-log-seq is the log's last seq when the read began: pass it as after to read only what came since.",
    query: LogExportQuery,
    auth: true,
    status: 200,
    answerHeaders: [LOG_SEQ],
    answer: { type: JSONL, description: "one message per line", itemSchema: { schema: AgentMessage, name: "AgentMessage" } },
    errors: [...SESSION, "history_unreadable", "too_many_downloads"],
  },
  {
    method: "get",
    path: "/api/sessions/:id/events",
    summary: "The session's events as JSONL, each with its seq first; with ?after= only those after that seq (x-log-seq as for messages).",
    query: LogExportQuery,
    auth: true,
    status: 200,
    answerHeaders: [LOG_SEQ],
    answer: { type: JSONL, description: "one event per line", itemSchema: { schema: SeqAgentEvent, name: "SeqAgentEvent" } },
    errors: [...SESSION, "history_unreadable", "too_many_downloads"],
  },
  {
    method: "post",
    path: "/api/sessions/:id/messages/stream",
    summary:
      "Sends a prompt and streams the run as Server-Sent Events until it ends; x-run-id names the run. While a run is active: 409 session_busy, or with whenBusy steer/followUp the stream of the run that will carry the message.",
    auth: true,
    headers: [IDEMPOTENCY_HEADER],
    body: json(PromptBody, "Prompt", { text: "Where is the HTTP server started?", allowWrite: false, maxTurns: 6 }),
    status: 200,
    answer: sseAnswer(PROMPT_STREAM_END),
    errors: [...SESSION, ...JSON_BODY, ...KEY, "session_busy", "queue_full", "run_not_found", "model_not_allowed"],
  },
  {
    method: "delete",
    path: "/api/sessions/:id/queue/:messageId",
    summary: "Withdraws a queued (steer or followUp) message that has not been delivered yet.",
    auth: true,
    status: 200,
    answer: json(QueueWithdrawn, "QueueWithdrawn", { messageId: "m_01jd8x9a1b2c3d4e5f6g7h8j9k" }),
    errors: [...SESSION, "queued_message_not_found"],
  },
  {
    method: "get",
    path: "/api/sessions/:id/events/stream",
    summary:
      "Replays the events after Last-Event-ID (or ?after=), tails the active run, then ends; 204 when no run is active and nothing is after it; 400 invalid_last_event_id past the newest event id. With ?runId=, that run's stream (a withdrawn follow-up's ends at its queued_message_withdrawn); with &messageId= too, a steer's stream (from its message_queued at the earliest), following its message. Takes ?token= (a stream token) instead of Authorization.",
    auth: true,
    streamToken: true,
    query: EventStreamQuery,
    headers: [{ name: "Last-Event-ID", schema: ResumeSeq }],
    status: 200,
    answer: sseAnswer(EVENT_STREAM_END),
    errors: [
      ...SESSION,
      "invalid_last_event_id",
      "invalid_query",
      "run_not_found",
      "message_not_found",
      "stream_token_invalid",
      "stream_token_expired",
      "history_unreadable",
    ],
  },
  {
    method: "post",
    path: "/api/sessions/:id/stream-token",
    summary: "A short-lived token for ?token= on this session's event stream, for a browser EventSource (which cannot send Authorization).",
    auth: true,
    body: json(StreamTokenBody, "StreamTokenRequest", { ttlSeconds: 300 }),
    status: 200,
    answer: json(StreamToken, "StreamToken", { token: "v1.eyJ0IjoidGVhbS1hIn0.c2lnbmF0dXJl", expiresAt: T }),
    errors: [...SESSION, ...JSON_BODY, "stream_token_unconfigured"],
  },
  {
    method: "post",
    path: "/api/sessions/:id/abort",
    summary:
      "Cancels the active run, or else a manual compaction under way (its POST .../compact answers 409 compaction_aborted, the log gets compaction_failed run_aborted; runId is then null); aborted is false when neither was going on. With runId, only that run: when it is not the active one (it ended, and a queued run may have started), nothing is aborted and the answer is {aborted: false, runId}.",
    auth: true,
    body: json(AbortBody, "AbortBody", { runId: "r_01jd8x9a1b2c3d4e5f6g7h8j9k" }),
    status: 200,
    answer: json(AbortResult, "AbortResult", { aborted: true, runId: "r_01jd8x9a1b2c3d4e5f6g7h8j9k" }),
    errors: [...SESSION, ...JSON_BODY],
  },
  {
    method: "get",
    path: "/api/sessions/:id/files/:path{[\\s\\S]+}",
    summary: "A workspace file as the session sees it (its overlay first), streamed; one the session changed is one of its downloads.",
    auth: true,
    status: 200,
    answer: { type: "application/octet-stream", description: "the file's bytes" },
    answerHeaders: FILE_HEADERS,
    errors: [...SESSION, "no_workspace", "workspace_not_found", ...FILE, "too_many_downloads"],
  },
  {
    method: "get",
    path: "/api/sessions/:id/changes",
    summary:
      "Every change of the session as a unified diff (a/, b/) that git apply accepts on the snapshot, streamed file by file in path order (any size; a file written during the answer is diffed as it is when its turn comes).",
    auth: true,
    status: 200,
    answer: { type: "text/x-diff", description: "the diff; empty when nothing changed" },
    errors: [...SESSION, "no_workspace", "workspace_not_found", "too_many_downloads"],
  },
];

/** The failure-learning loop (issue 9): a session's trace, judgements and attributions; a project's cases and memory. */
const PROJECT: readonly ApiErrorCode[] = ["invalid_project_id", "project_not_found"];
const RID = "r_01jd8x9a1b2c3d4e5f6g7h8j9k";
const LEARNING_ROUTES: readonly RouteDoc[] = [
  {
    method: "get",
    path: "/api/sessions/:id/trace",
    summary:
      "The session's trace records (spans, actions, observations, verdicts, attributions) as JSONL, in writerSeq order; with ?after= only those after that seq (x-log-seq as for messages).",
    query: LogExportQuery,
    auth: true,
    status: 200,
    answerHeaders: [LOG_SEQ],
    answer: { type: JSONL, description: "one trace record per line", itemSchema: { schema: TraceRecord, name: "TraceRecord" } },
    errors: [...SESSION, "history_unreadable", "too_many_downloads"],
  },
  {
    method: "post",
    path: "/api/sessions/:id/judgements",
    summary: "An external judge's verdict on one of the session's runs; a fail is attributed at once.",
    auth: true,
    body: json(JudgementBody, "Judgement", {
      runId: RID,
      judgeName: "ci-tests",
      result: "fail",
      artifactRefs: ["src/server.js"],
      detail: "test/server.test.js failed",
    }),
    headers: [IDEMPOTENCY_HEADER],
    status: 201,
    answer: json(JudgementResult, "JudgementResult"),
    errors: [...SESSION, ...JSON_BODY, ...KEY, "run_not_found", "run_in_progress", "action_not_found", "history_unreadable"],
  },
  {
    method: "get",
    path: "/api/sessions/:id/attributions",
    summary: `The session's attributions, oldest first, a page at a time: at most \`limit\` and ${MAX_ATTRIBUTION_PAGE_BYTES / 1024 / 1024} MiB of JSON (one at least, however large); one recorded meanwhile shows on a later page. One of the session's downloads.`,
    auth: true,
    query: AttributionListQuery,
    status: 200,
    answer: json(AttributionList, "AttributionList", { attributions: [], nextCursor: null }),
    errors: [...SESSION, "invalid_query", "invalid_cursor", "history_unreadable", "too_many_downloads"],
  },
  {
    method: "get",
    path: "/api/projects/:pid/cases",
    summary:
      "The project's failed-turn cases, newest first (by each case's first sighting), a page at a time; a case added meanwhile never shows on a later page. A project serves 4 pages at once.",
    auth: true,
    query: CaseListQuery,
    status: 200,
    answer: json(CaseList, "CaseList", { cases: [], nextCursor: null }),
    errors: [...PROJECT, "invalid_query", "invalid_cursor", "too_many_downloads"],
  },
  {
    method: "get",
    path: "/api/projects/:pid/cases/:caseId",
    summary:
      "One case, its scorecards (the latest replay's and the latest a judge settled) and its approvals (one per name, the latest first).",
    auth: true,
    status: 200,
    answer: json(CaseDetail, "CaseDetail"),
    errors: [...PROJECT, "case_not_found"],
  },
  {
    method: "delete",
    path: "/api/projects/:pid",
    summary:
      "Deletes what the project holds: cases, scorecards, approvals, memory, imported traces and their quarantine, and its R2 mirror. Refused while sessions learn into it (for p_default also those created without a project). Afterwards a named project is 404 until a session names it again; p_default is empty. Repeat to finish a deletion that failed half-way.",
    auth: true,
    status: 204,
    answer: null,
    errors: [...PROJECT, "project_in_use"],
  },
  {
    method: "delete",
    path: "/api/projects/:pid/cases/:caseId",
    summary:
      "Deletes a case with its scorecards and approvals; its rule leaves project memory if it was promoted. Then it is 404, until the same failure happens again in a run. Its replay sessions (titled 'replay of <caseId>') stay: delete them as sessions.",
    auth: true,
    status: 204,
    answer: null,
    errors: [...PROJECT, "case_not_found"],
  },
  {
    method: "post",
    path: "/api/projects/:pid/cases/:caseId/replay",
    summary:
      "Re-runs the case's failing run with the replay model against the current tools, on the workspace and conversation as the failing run found them (a fork of its session at its prompt); answers its scorecard.",
    auth: true,
    body: json(EmptyBody, "Empty", {}),
    status: 201,
    answer: json(ScorecardAnswer, "ScorecardAnswer"),
    errors: [...PROJECT, ...JSON_BODY, "case_not_found", "case_not_replayable", "quota_exceeded"],
  },
  {
    method: "post",
    path: "/api/projects/:pid/cases/:caseId/approve",
    summary: "Records a human approval of the case.",
    auth: true,
    body: json(ApproveBody, "Approve", { approvedBy: "ana@example.com", note: "checked against the CI log" }),
    status: 201,
    answer: json(ApprovalAnswer, "ApprovalAnswer"),
    errors: [...PROJECT, ...JSON_BODY, "case_not_found"],
  },
  {
    method: "post",
    path: "/api/projects/:pid/memory/promote",
    summary: "Promotes a verified case to project memory (needs write: true).",
    auth: true,
    body: json(PromoteBody, "Promote", { caseId: "c_5f2a9e01b3c4d6e7", write: true }),
    status: 201,
    answer: json(PromotionAnswer, "PromotionAnswer"),
    errors: [
      ...PROJECT,
      ...JSON_BODY,
      "case_not_found",
      "promotion_write_flag_required",
      "promotion_not_verified",
      "promotion_imported_only",
      "promotion_class_not_allowed",
    ],
  },
  {
    method: "get",
    path: "/api/projects/:pid/memory",
    summary: "The project's promoted rules.",
    auth: true,
    status: 200,
    answer: json(MemoryList, "MemoryList", { rules: [] }),
    errors: PROJECT,
  },
  {
    method: "post",
    path: "/api/projects/:pid/traces",
    summary:
      "Imports foreign traces (this project's field names or seed 003's snake_case); corrupt lines go to the quarantine. With an Idempotency-Key, a repeat of the same file gets the first import's answer. At the project's case bound an import evicts only earlier imported cases; casesNotKept counts the new cases it could not keep.",
    auth: true,
    headers: [IDEMPOTENCY_HEADER],
    body: { type: JSONL_MEDIA_TYPES, description: "one trace record per line" },
    status: 201,
    answer: json(TraceImportSummary, "TraceImportSummary", {
      importId: "im_1",
      imported: 12,
      quarantined: 1,
      caseIds: [],
      casesNotKept: 0,
      casesEvicted: 0,
    }),
    errors: [...PROJECT, ...KEY, "unsupported_media_type", "body_too_large", "upload_too_slow", "ingest_busy"],
  },
  {
    method: "get",
    path: "/api/projects/:pid/quarantine",
    summary: `Lines of trace imports that were refused, with their line number, SHA-256 and reason, oldest first (by import, then line), a page at a time. An import keeps its first ${MAX_QUARANTINED_LINES_PER_IMPORT.toLocaleString("en-US")} refused lines (its answer's quarantined counts them all); past ${MAX_PROJECT_QUARANTINE_LINES.toLocaleString("en-US")} lines in the project, the oldest imports' lines go.`,
    auth: true,
    query: QuarantineListQuery,
    status: 200,
    answer: json(QuarantineList, "QuarantineList", { quarantine: [], nextCursor: null }),
    errors: [...PROJECT, "invalid_query", "invalid_cursor"],
  },
];

/** Codes any `/api/` route can answer with. */
export const COMMON_API_ERRORS: readonly ApiErrorCode[] = [
  "unauthorized",
  "auth_misconfigured",
  "cors_misconfigured",
  "origin_not_allowed",
  "host_not_allowed",
  "route_not_found",
  "invalid_query",
  "internal_error",
];

/**
 * Codes any route that reads a body can answer with: a body sent with a Content-Encoding is refused
 * before it is read, and one that breaks off before its end is refused as incomplete
 * (request-body.ts), whatever its media type.
 */
export const BODY_API_ERRORS: readonly ApiErrorCode[] = ["unsupported_media_type", "body_incomplete"];

/** Every route of the API: the one table the document is built from. */
export const API_ROUTES: readonly RouteDoc[] = [...CORE_ROUTES, ...LEARNING_ROUTES];

function sseAnswer(end: string): Content {
  return {
    type: "text/event-stream",
    description: `Frames \`id: <seq>\`, \`event: agent_event\`, \`data: <event JSON with its seq>\`; a \`retry:\` field first and a \`: ping\` comment at least every 15 s. Event types: ${EVENT_TYPES.join(", ")}. ${end} A stream cut short (a client that stops reading, a restart) is resumed from the last id read; a session keeps ${MAX_STALLED_EVENT_STREAMS_PER_SESSION} streams whose clients read nothing for ${SSE_STALL_GRACE_MS / 1000} s with 256 KiB waiting (the server ${MAX_STALLED_EVENT_STREAMS_PER_ISOLATE} of all sessions together), ends the one stalled longest when another stalls, and ends any stream whose client has read nothing for ${SSE_STALLED_STREAM_MS / 1000} s.`,
    itemSchema: { schema: SeqAgentEvent, name: "SeqAgentEvent" },
  };
}
