import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import type { ModelErrorCode } from "./model-client";
import { ABORTED_MESSAGE } from "./model-client";

/** A failure of one attempt, classified: what to tell the runtime and whether another attempt may help. */
export interface ProviderFailure {
  code: ModelErrorCode;
  message: string;
  retryable: boolean;
  /** What the provider asked for (`retry-after-ms` / `Retry-After`), when it did. */
  retryAfterMs?: number;
}

/** Thrown by the chunk accumulator when a chunk of an HTTP 200 stream is an error object. */
export class ProviderStreamError extends Error {
  override readonly name = "ProviderStreamError";
  constructor(readonly failure: ProviderFailure) {
    super(failure.message);
  }
}

/** Context-window errors of ~20 providers (after pi-ai's `utils/overflow`). */
const OVERFLOW_PATTERNS: readonly RegExp[] = [
  /prompt is too long/i, // Anthropic
  /prompt too long/i, // Ollama
  /input is too long for requested model/i, // Bedrock
  /exceeds the context window/i, // OpenAI
  /input token count.*exceeds the maximum/i, // Gemini
  /maximum prompt length is \d+/i, // xAI
  /reduce the length of the messages/i, // Groq
  /maximum context length is \d+ tokens/i, // OpenAI legacy, OpenRouter, vLLM
  /exceeds the limit of \d+/i, // GitHub Copilot
  /exceeds the available context size/i, // llama.cpp
  /greater than the context length/i, // LM Studio
  /context window exceeds limit/i, // MiniMax
  /exceeded model token limit/i, // Kimi
  /context[_ ]length[_ ]exceeded/i,
  /too many tokens/i,
  /token limit exceeded/i,
];
/** Rate-limit texts that would otherwise look like overflow ("too many tokens per minute"). */
const NOT_OVERFLOW = /rate.?limit|per minute|per day|throttl|quota/i;

/** True when a provider error text or code says the request does not fit the context window. */
export function isContextOverflowText(text: string): boolean {
  return !NOT_OVERFLOW.test(text) && OVERFLOW_PATTERNS.some((pattern) => pattern.test(text));
}

const MAX_DETAIL_CHARS = 500;

type Loose = Record<string, unknown>;
function isRecord(value: unknown): value is Loose {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The provider's own words from an error body (`{message}`, `{detail}`, or the JSON itself). */
function errorBodyText(body: unknown): string {
  if (typeof body === "string") return body;
  if (!isRecord(body)) return "";
  for (const key of ["message", "detail", "error"]) {
    const value = body[key];
    if (typeof value === "string" && value !== "") return value;
    if (isRecord(value) && typeof value.message === "string") return value.message;
  }
  return JSON.stringify(body);
}

function clip(text: string): string {
  return text.length > MAX_DETAIL_CHARS ? `${text.slice(0, MAX_DETAIL_CHARS)}…` : text;
}

/** `retry-after-ms` (ms), then `Retry-After` (seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfterMs(headers: Headers | undefined, nowMs: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value.trim());
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** Classifies an error object sent inside the stream (body of `{"error": {...}}` or a bare `{"object":"error"}`). */
export function classifyErrorBody(body: unknown): ProviderFailure {
  const text = errorBodyText(body);
  const record = isRecord(body) ? body : {};
  const code = record.code;
  const type = typeof record.type === "string" ? record.type : "";
  const codeText = typeof code === "string" ? code : "";
  const detail = clip(text || "(no message)");
  if (isContextOverflowText(`${text} ${codeText}`)) return { code: "context_overflow", message: `the request does not fit the model's context window: ${detail}`, retryable: false };
  if (code === 429 || /rate.?limit/i.test(`${codeText} ${type}`)) return { code: "rate_limited", message: `rate limited by the provider: ${detail}`, retryable: true };
  const serverSide = (typeof code === "number" && code >= 500) || /server_error|overloaded|unavailable/i.test(`${codeText} ${type}`);
  return { code: "provider_error", message: `the provider sent an error inside the stream: ${detail}`, retryable: serverSide };
}

/** The failure a stream chunk reports, if it is an error object rather than a completion chunk. */
export function streamChunkFailure(chunk: Loose): ProviderFailure | undefined {
  if (chunk.error !== undefined && chunk.error !== null) return classifyErrorBody(chunk.error);
  if ((chunk.object === "error" || chunk.type === "error") && !Array.isArray(chunk.choices)) return classifyErrorBody(chunk);
  return undefined;
}

/** Classifies anything thrown while requesting or reading a completion stream. */
export function classifyFailure(err: unknown): ProviderFailure {
  if (err instanceof ProviderStreamError) return err.failure;
  if (err instanceof APIUserAbortError) return { code: "aborted", message: ABORTED_MESSAGE, retryable: false };
  if (err instanceof APIConnectionTimeoutError) return { code: "network_error", message: "the provider did not answer before the request timeout", retryable: true };
  if (err instanceof APIConnectionError) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
    return { code: "network_error", message: `could not reach the provider${clip(cause)}`, retryable: true };
  }
  if (err instanceof APIError) {
    if (err.status === undefined) return classifyErrorBody(err.error ?? err.message);
    return classifyHttpError(err.status, err.error ?? textOfBodylessError(err.message, err.status), err.headers);
  }
  if (err instanceof SyntaxError) return { code: "provider_error", message: `the provider sent a stream chunk that is not JSON (${err.message})`, retryable: false };
  const reason = err instanceof Error ? err.message : String(err);
  return { code: "network_error", message: `the connection to the provider broke: ${clip(reason)}`, retryable: true };
}

/** The SDK's message for a non-JSON error body is `<status> <text>` or `<status> status code (no body)`. */
function textOfBodylessError(message: string, status: number): string {
  const text = message.startsWith(`${status} `) ? message.slice(`${status} `.length) : message;
  return text === "status code (no body)" ? "" : text;
}

function classifyHttpError(status: number, body: unknown, headers: Headers | undefined): ProviderFailure {
  const text = errorBodyText(body);
  const codeText = isRecord(body) && typeof body.code === "string" ? body.code : "";
  const detail = clip(text || "(no body)");
  const what = `the provider answered HTTP ${status}: ${detail}`;
  if (status === 429) return { code: "rate_limited", message: what, retryable: true, retryAfterMs: parseRetryAfterMs(headers) };
  if (status === 413 || (status >= 400 && status < 500 && isContextOverflowText(`${text} ${codeText}`))) {
    return { code: "context_overflow", message: `the request does not fit the model's context window (HTTP ${status}: ${detail})`, retryable: false };
  }
  if (status === 401 || status === 403) return { code: "auth_failed", message: `${what} (check OPENAI_API_KEY and OPENAI_BASE_URL)`, retryable: false };
  if (status >= 500 || status === 408) return { code: "provider_error", message: what, retryable: true, retryAfterMs: parseRetryAfterMs(headers) };
  return { code: "bad_request", message: what, retryable: false };
}

const REDACTED = "[redacted]";

/** Removes secrets from a message that may quote a request or a provider's echo of it. */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join(REDACTED);
  return out.replace(/(Bearer\s+)[^\s"',;]+/gi, `$1${REDACTED}`).replace(/\bsk-[A-Za-z0-9_*-]{6,}/g, `sk-${REDACTED}`);
}
