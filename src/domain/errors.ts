/**
 * Every error code the harness can hand a client, in one table: the HTTP status it is answered with
 * (null for codes that only appear in `agent_error` events or as tool denial reasons), where it can
 * appear, and what it means. Codes are part of the API: add new ones, never rename or remove one.
 * The README's error table is checked against this table by a test.
 */
interface ErrorSpec {
  status: 400 | 401 | 403 | 404 | 408 | 409 | 413 | 415 | 422 | 429 | 500 | 502 | 503 | null;
  /** `api`: an HTTP error body; `run`: an `agent_error` event; `tool`: a tool denial reason. */
  in: readonly ("api" | "run" | "tool")[];
  meaning: string;
}

export const ERROR_REGISTRY = {
  // Requests
  unauthorized: { status: 401, in: ["api"], meaning: "no bearer token, or not a configured one" },
  auth_misconfigured: {
    status: 500,
    in: ["api"],
    meaning:
      "AUTH_TOKENS is set but malformed (not name:token pairs, a token with whitespace, one token for two tenants); the API fails closed",
  },
  route_not_found: { status: 404, in: ["api"], meaning: "no route for this method and path" },
  unsupported_media_type: {
    status: 415,
    in: ["api"],
    meaning:
      "the body's Content-Type is not what the route takes (application/json in UTF-8 for JSON routes), or it came with a Content-Encoding (bodies are read as sent)",
  },
  invalid_json: { status: 400, in: ["api"], meaning: "the body is not valid UTF-8 JSON" },
  invalid_body: { status: 400, in: ["api"], meaning: "the body does not fit the route's schema; the message names the field" },
  invalid_text: { status: 400, in: ["api"], meaning: "a string holds a lone UTF-16 surrogate, which cannot be stored as UTF-8" },
  body_too_large: { status: 413, in: ["api"], meaning: "the request body is larger than the route's limit" },
  body_incomplete: {
    status: 400,
    in: ["api"],
    meaning: "the request body broke off before its end (the client closed the connection); nothing of it was stored",
  },
  invalid_session_id: { status: 400, in: ["api"], meaning: "not a session id (s_ followed by 1-64 of [A-Za-z0-9_-])" },
  invalid_workspace_id: { status: 400, in: ["api"], meaning: "not a workspace id (w_ followed by 1-64 of [A-Za-z0-9_-])" },
  invalid_last_event_id: {
    status: 400,
    in: ["api"],
    meaning: "Last-Event-ID / after is not a non-negative integer seq, or is past the session's newest event id",
  },
  invalid_query: {
    status: 400,
    in: ["api"],
    meaning: "a query parameter the route does not take, one given twice, or one that does not fit; the message names it",
  },
  invalid_cursor: {
    status: 400,
    in: ["api"],
    meaning: "the cursor cannot be read as a position in a list (pass the nextCursor a page gave)",
  },
  host_not_allowed: {
    status: 403,
    in: ["api"],
    meaning:
      "AUTH_TOKENS is unset and the request names a host that is not localhost, an IP address or in OPEN_HOSTS (a DNS-rebinding page would)",
  },
  origin_not_allowed: {
    status: 403,
    in: ["api"],
    meaning: "a browser page on another origin sent a write that CORS_ORIGINS does not allow (refused before it is done)",
  },
  cors_misconfigured: { status: 500, in: ["api"], meaning: "CORS_ORIGINS is malformed, or is * while auth is on; the API fails closed" },
  stream_token_invalid: {
    status: 401,
    in: ["api"],
    meaning:
      "the stream token is malformed, not signed by this server, for another session, or its tenant or the bearer token it was issued under is no longer configured",
  },
  stream_token_expired: { status: 401, in: ["api"], meaning: "the stream token has expired; ask for a new one" },
  stream_token_unconfigured: {
    status: 500,
    in: ["api"],
    meaning:
      "STREAM_TOKEN_SECRET is unset or shorter than 32 characters, so stream tokens cannot be issued (with auth on, a token sent to such a server is 401 `stream_token_invalid`)",
  },
  // Sessions and their logs
  session_not_found: { status: 404, in: ["api"], meaning: "no such session, or it belongs to another tenant" },
  session_exists: { status: 409, in: ["api"], meaning: "a session with this id already exists" },
  session_busy: {
    status: 409,
    in: ["api"],
    meaning: "a run is active in this session; wait for it, abort it, or send with whenBusy steer / followUp",
  },
  queue_full: { status: 409, in: ["api"], meaning: "the session already holds the maximum number of queued messages" },
  too_many_downloads: {
    status: 429,
    in: ["api"],
    meaning:
      "the session is already serving its maximum of downloads (of its logs, changes and attribution pages) at once, or the project its maximum of pages of cases; retry after Retry-After, once one has ended",
  },
  queued_message_not_found: { status: 404, in: ["api"], meaning: "no undelivered queued message with this id in the session" },
  idempotency_key_reused: {
    status: 422,
    in: ["api"],
    meaning: "this Idempotency-Key (or requestId) was used within 24 h for a different request",
  },
  invalid_idempotency_key: {
    status: 400,
    in: ["api"],
    meaning:
      "an Idempotency-Key header must be 1-200 printable ASCII characters without spaces (a `requestId` in a body that breaks this is `invalid_body`)",
  },
  invalid_record: { status: 400, in: ["api"], meaning: "a record does not fit its schema or belongs to another session" },
  record_too_large: { status: 413, in: ["api"], meaning: "one record is larger than the per-record limit" },
  import_invalid: {
    status: 400,
    in: ["api"],
    meaning: "the imported JSONL is not one well-formed conversation (strict records, one parent chain); the message names the line",
  },
  flush_failed: {
    status: 503,
    in: ["api"],
    meaning:
      "writing the log to R2 failed; nothing is lost and it is retried (an answer of the session object's own flush call; no route answers it)",
  },
  history_unreadable: { status: 500, in: ["api", "run"], meaning: "the session's stored log could not be read back" },
  run_not_found: { status: 404, in: ["api"], meaning: "no run with this id in the session" },
  run_in_progress: {
    status: 409,
    in: ["api"],
    meaning: "the run is still going: a verdict would be attributed to part of what it does; post it once the run has ended",
  },
  nothing_to_compact: {
    status: 409,
    in: ["api"],
    meaning: "the history is too short to compact: everything in it is among the most recent messages kept",
  },
  compaction_failed: {
    status: 502,
    in: ["api"],
    meaning: "the model could not summarise the history (the event's code says why); the session is unchanged",
  },
  compaction_aborted: {
    status: 409,
    in: ["api"],
    meaning: "the compaction was aborted (POST .../abort) before it finished; the session is unchanged",
  },
  message_not_found: { status: 404, in: ["api"], meaning: "no message with this id in the session (fork atMessageId)" },
  fork_source_changed: {
    status: 409,
    in: ["api"],
    meaning: "the source session's workspace changed while a fork copied it (a run rewrote a file); fork again",
  },
  action_not_found: { status: 404, in: ["api"], meaning: "a judgement named a sourceActionId that the run's trace does not have" },
  // Projects and the failure-learning loop
  invalid_project_id: { status: 400, in: ["api"], meaning: "not a project id (p_ followed by 1-64 of [A-Za-z0-9_-])" },
  project_not_found: {
    status: 404,
    in: ["api"],
    meaning:
      "no such project for this tenant (a project exists once a session names it; p_default always does), or it is being deleted (an import begun before the deletion is refused too)",
  },
  case_not_found: { status: 404, in: ["api"], meaning: "no such failed-turn case in the project" },
  case_not_replayable: { status: 409, in: ["api"], meaning: "the case comes from imported traces: there is no recording to replay" },
  promotion_write_flag_required: { status: 400, in: ["api"], meaning: "promotion writes project memory: it needs write: true" },
  promotion_not_verified: { status: 409, in: ["api"], meaning: "a case needs a passed replay or a human approval before promotion" },
  promotion_imported_only: { status: 409, in: ["api"], meaning: "cases from imported or trace-only material are never promoted" },
  promotion_class_not_allowed: { status: 409, in: ["api"], meaning: "environment, flaky and harness failures are never promoted" },
  // Workspaces and files
  workspace_not_found: { status: 404, in: ["api", "run"], meaning: "no such workspace, or it belongs to another tenant" },
  workspace_in_use: { status: 409, in: ["api"], meaning: "sessions still use this workspace; delete them before the workspace" },
  model_not_allowed: {
    status: 400,
    in: ["api"],
    meaning: "the prompt names a model this deployment does not offer (ALLOWED_MODELS); name one of them, or none for MODEL",
  },
  quota_exceeded: {
    status: 403,
    in: ["api"],
    meaning:
      "the tenant already keeps as many sessions or workspaces, or as many workspace bytes, as one tenant may; delete some to make room",
  },
  project_in_use: {
    status: 409,
    in: ["api"],
    meaning: "sessions still learn into this project (for p_default: also those created without one); delete them before the project",
  },
  no_workspace: { status: 404, in: ["api"], meaning: "the session was opened without a workspace" },
  not_found: { status: 404, in: ["api"], meaning: "no file at this path" },
  is_directory: { status: 400, in: ["api"], meaning: "the path is a directory, not a file" },
  // In tool results only (a write under a file, `ls` of a file); a route reading a path under a file answers not_found.
  not_a_directory: { status: 400, in: [], meaning: "a parent of the path is a file" },
  file_too_large: { status: 413, in: ["api"], meaning: "the file is larger than the limit" },
  // In tool results only (write, edit, bash): no route writes files.
  workspace_full: {
    status: null,
    in: [],
    meaning: "the session's workspace changes, replaced versions included, would pass their limit; the write is refused",
  },
  path_escape: { status: 400, in: ["api", "tool"], meaning: "the path leaves the workspace root (.., absolute, drive letter, NUL)" },
  path_too_long: { status: 400, in: ["api", "tool"], meaning: "the path is longer than the limit" },
  archive_invalid: { status: 400, in: ["api"], meaning: "the archive is corrupt, truncated, an empty body, or fails its checksums" },
  archive_unsupported: {
    status: 415,
    in: ["api"],
    meaning: "not a tar, tar.gz or zip archive, or a zip whose every file is encrypted (encrypted files are otherwise skipped)",
  },
  archive_too_large: { status: 413, in: ["api"], meaning: "the upload, its expansion or its files are over the size limits" },
  archive_too_many_files: {
    status: 413,
    in: ["api"],
    meaning: "the archive has more entries than allowed, or their names add up to more characters than allowed",
  },
  ingest_busy: {
    status: 503,
    in: ["api"],
    meaning:
      "the server is taking its maximum of uploads at once (archives, conversation and trace imports) and the line is full or the wait ran out; retry after Retry-After",
  },
  archive_bomb: { status: 422, in: ["api"], meaning: "the compression ratio marks a decompression bomb" },
  upload_too_slow: {
    status: 408,
    in: ["api"],
    meaning:
      "the upload (an archive, a conversation or trace import) sent too few bytes while it held one of the server's upload slots; nothing was stored",
  },
  // Runs (agent_error codes)
  run_timeout: {
    status: null,
    in: ["run"],
    meaning:
      "the run did not finish within its timeoutMs (the message adds when the provider had sent nothing of its answer by then: for the learning loop that is the provider's failure, not the agent's)",
  },
  max_turns_reached: { status: null, in: ["run"], meaning: "the run used all of its model turns" },
  run_interrupted: { status: null, in: ["run"], meaning: "the server restarted during the run; its unanswered tool calls were closed" },
  run_aborted: {
    status: null,
    in: ["run"],
    meaning:
      "the run was aborted during a compaction, or a manual compaction was aborted (in compaction_failed; a run itself ends with agent_completed ABORTED)",
  },
  output_too_large: { status: null, in: ["run"], meaning: "the model's answer passed the output limit; what came before it is kept" },
  rate_limited: { status: null, in: ["run"], meaning: "the provider kept answering 429, or asked to wait longer than allowed" },
  provider_error: {
    status: null,
    in: ["run"],
    meaning: "the provider failed (5xx after retries, an error inside the stream, a broken chunk)",
  },
  context_overflow: { status: null, in: ["run"], meaning: "the request does not fit the model's context window" },
  content_filtered: { status: null, in: ["run"], meaning: "the provider stopped the answer with its content filter" },
  stream_incomplete: { status: null, in: ["run"], meaning: "the provider's stream ended without a finish reason" },
  auth_failed: { status: null, in: ["run"], meaning: "the provider refused the key (401/403): check OPENAI_API_KEY and OPENAI_BASE_URL" },
  bad_request: { status: null, in: ["run"], meaning: "the provider refused the request (another 4xx)" },
  network_error: { status: null, in: ["run"], meaning: "the provider could not be reached, or the connection dropped" },
  model_not_configured: { status: null, in: ["run"], meaning: "no model API key or model name is configured" },
  replay_exhausted: { status: null, in: ["run"], meaning: "the replayed recording has no more assistant turns" },
  replay_load_failed: { status: null, in: ["run"], meaning: "the recording to replay could not be loaded" },
  replay_recorded_error: { status: null, in: ["run"], meaning: "the replayed turn ended with an error when it was recorded" },
  script_exhausted: { status: null, in: ["run"], meaning: "the scripted test model ran out of turns" },
  internal_error: { status: 500, in: ["api", "run"], meaning: "a bug or an unexpected failure of the harness itself" },
  // Tool denials (tool_call_denied.reason)
  write_not_allowed: { status: null, in: ["tool"], meaning: "write and edit need allowWrite" },
  bash_not_allowed: { status: null, in: ["tool"], meaning: "bash needs allowBash" },
  tool_budget_exhausted: { status: null, in: ["tool"], meaning: "the run used all of its maxToolCalls" },
  unknown_tool: { status: null, in: ["tool"], meaning: "no such tool in this session" },
  invalid_arguments: { status: null, in: ["tool"], meaning: "the arguments do not fit the tool's schema; the text names the field" },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_REGISTRY;
type CodesIn<K extends "api" | "run" | "tool"> = {
  [C in ErrorCode]: K extends (typeof ERROR_REGISTRY)[C]["in"][number] ? C : never;
}[ErrorCode];
/** Codes an HTTP error body can carry. */
export type ApiErrorCode = CodesIn<"api">;
/** Codes an `agent_error` event can carry. */
export type RunErrorCode = CodesIn<"run">;
/** Reasons a `tool_call_denied` event can carry. */
export type DenialCode = CodesIn<"tool">;

const codesIn = <K extends "api" | "run" | "tool">(kind: K) =>
  (Object.keys(ERROR_REGISTRY) as ErrorCode[]).filter((code) =>
    (ERROR_REGISTRY[code].in as readonly string[]).includes(kind),
  ) as CodesIn<K>[];

export const ERROR_CODES = Object.keys(ERROR_REGISTRY) as [ErrorCode, ...ErrorCode[]];
export const API_ERROR_CODES = codesIn("api");
export const RUN_ERROR_CODES = codesIn("run");
export const DENIAL_CODES = codesIn("tool");

/** The HTTP status of an API error code. */
export function httpStatus(code: ApiErrorCode): NonNullable<ErrorSpec["status"]> {
  return ERROR_REGISTRY[code].status ?? 500;
}

/**
 * The one base error of the harness: a stable code from the registry and a sentence a user can act
 * on. Layers throw it (or a subclass that narrows the code); the API maps it to
 * `{"error":{"code","message","requestId"}}` with the registry's status in one place.
 */
export class HarnessError<C extends ErrorCode = ErrorCode> extends Error {
  override readonly name: string = "HarnessError";
  constructor(
    readonly code: C,
    message: string,
    /** For a refusal to come back later (429, 503): the `Retry-After` its answer carries, when known better than the default. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** Expected failures cross RPC boundaries as values, so the code survives serialisation. */
export type Result<T, C extends ErrorCode = ErrorCode> =
  | { ok: true; value: T }
  | { ok: false; code: C; message: string; retryAfterSeconds?: number };

export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

export function failure<C extends ErrorCode>(
  code: C,
  message: string,
  retryAfterSeconds?: number,
): { ok: false; code: C; message: string; retryAfterSeconds?: number } {
  return retryAfterSeconds === undefined ? { ok: false, code, message } : { ok: false, code, message, retryAfterSeconds };
}

/** The value of a Result, or its failure thrown as a HarnessError. */
export function unwrapResult<T, C extends ErrorCode>(result: Result<T, C>): T {
  if (result.ok) return result.value;
  throw new HarnessError(result.code, result.message, result.retryAfterSeconds);
}
