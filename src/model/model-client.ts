import type { AgentMessage, RunErrorCode, ToolCall, ToolDefinition, Usage } from "../domain";

/** One model turn as the runtime asks for it: the whole conversation so far plus the tools on offer. */
export interface ModelRequest {
  /** Overrides the client's configured model name for this request. */
  model?: string;
  system: string;
  messages: AgentMessage[];
  tools: ToolDefinition[];
  /**
   * `none`: the tools are described but may not be called this turn (the run's last turn, or its
   * tool calls are used up). They stay in the request because the history may hold tool calls,
   * which some providers refuse without tool definitions.
   */
  toolChoice?: "none";
  /**
   * `compaction`: a request to summarise the history, not an agent turn (a replay answers it from the
   * recording's compaction records and does not count it as a turn).
   */
  purpose?: "turn" | "compaction";
  /**
   * Assistant turns in the whole session so far, when `messages` is a compacted view that holds
   * fewer (a replay counts turns with it).
   */
  assistantTurns?: number;
  /** When the run must be over (epoch ms, `Date.now()` clock): a client does not start a wait that ends after it. */
  deadlineAt?: number;
}

/** A failed attempt that will be tried again after `delayMs`. */
export interface ModelRetryNotice {
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  code: string;
}

/** How a successful model turn ended. TOOL_CALLS whenever calls were produced, whatever the provider said. */
export type ModelStopReason = "STOP" | "TOOL_CALLS" | "LENGTH";

/**
 * Stable codes of the terminal `error` event. The runtime copies them into its `agent_error` event.
 * - rate_limited: HTTP 429 (after retries, or when the provider asks to wait longer than the cap).
 * - provider_error: HTTP 5xx after retries, an error object inside the stream, an unparseable chunk,
 *   or finish_reason `error`.
 * - context_overflow: the request does not fit the model's context window.
 * - content_filtered: the provider stopped the answer with finish_reason `content_filter`.
 * - stream_incomplete: the stream ended without a finish reason.
 * - auth_failed: HTTP 401/403. bad_request: any other 4xx.
 * - network_error: the connection failed or dropped (before or during the stream), or timed out.
 * - model_not_configured: no API key or no model name.
 * - replay_exhausted / replay_load_failed / replay_recorded_error: see ReplayModelClient.
 * - script_exhausted: the test helper ScriptedModelClient (test/helpers/scripted-model.ts) ran out of turns.
 * - output_too_large: the answer passed MAX_MODEL_OUTPUT_CHARS; the text before it was delivered.
 * - aborted: the caller's AbortSignal fired.
 */
export const MODEL_ERROR_CODES = [
  "rate_limited",
  "provider_error",
  "context_overflow",
  "content_filtered",
  "stream_incomplete",
  "auth_failed",
  "bad_request",
  "network_error",
  "model_not_configured",
  "replay_exhausted",
  "replay_load_failed",
  "replay_recorded_error",
  "script_exhausted",
  "output_too_large",
  "aborted",
] as const satisfies readonly (RunErrorCode | "aborted")[];
export type ModelErrorCode = (typeof MODEL_ERROR_CODES)[number];

/**
 * Why a delivered tool call cannot be executed as sent. The runtime must not run such a call; it
 * answers it with an error tool result carrying `code` and `message`, so the model can correct itself.
 * - invalid_arguments: the argument text is not JSON, or is JSON but not an object (`call.arguments` is `{}`).
 * - missing_tool_name: the provider sent arguments but never a function name (`call.name` is "unknown_tool").
 */
export interface InvalidToolCall {
  code: "invalid_arguments" | "missing_tool_name";
  message: string;
  /** The argument text exactly as the provider sent it. */
  rawArguments: string;
}

/** What a ModelClient streams. Every stream ends with exactly one `done` or `error`, and nothing after it. */
export type ModelEvent =
  | { type: "text_delta"; text: string }
  /** Reasoning/thinking text; never part of the answer text. */
  | { type: "reasoning_delta"; text: string }
  /** One complete call, emitted after all text, in index order, before `done`. */
  | { type: "tool_call"; call: ToolCall; invalid?: InvalidToolCall }
  /** `thinkingField`: the answer's reasoning came in `reasoning_content` (see AssistantMessage). */
  | { type: "done"; stopReason: ModelStopReason; usage?: Usage; thinkingField?: "reasoning_content" }
  /** Sent before the client waits to retry a failed attempt (nothing of that attempt was delivered). */
  | { type: "retry"; retry: ModelRetryNotice }
  /**
   * `begunCalls`: on `aborted`, the tool calls the provider had begun sending when the stream stopped
   * (dropped: a call is emitted whole or not at all).
   */
  | { type: "error"; code: ModelErrorCode; message: string; begunCalls?: number };

export type ModelErrorEvent = Extract<ModelEvent, { type: "error" }>;

/** Streams one model turn. The iterator never throws: failures and aborts arrive as an `error` event. */
export interface ModelClient {
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
}

export function modelError(code: ModelErrorCode, message: string): ModelErrorEvent {
  return { type: "error", code, message };
}

export const ABORTED_MESSAGE = "the model request was aborted";

/** A client that answers every request with the same error; the factory uses it instead of throwing. */
export class FailingModelClient implements ModelClient {
  constructor(
    readonly code: ModelErrorCode,
    readonly message: string,
  ) {}

  async *stream(_request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    yield signal.aborted ? modelError("aborted", ABORTED_MESSAGE) : modelError(this.code, this.message);
  }
}
