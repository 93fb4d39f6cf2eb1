import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { clipText, isRecord } from "../domain";
import type { ModelErrorCode } from "./model-client";
import { ABORTED_MESSAGE } from "./model-client";
import { type ProviderError, readErrorJson } from "./provider-error-body";

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
  /exceed_context_size_error/i, // llama.cpp error type
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

/** True when the provider's words, code or type say the request does not fit the context window. */
function isOverflow(error: ProviderError): boolean {
  return isContextOverflowText([error.message, error.code, error.type].filter((part) => part !== undefined).join(" "));
}

function clip(text: string): string {
  return clipText(text, MAX_DETAIL_CHARS + 1);
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

/** Classifies an error object sent inside the stream (any shape readErrorJson reads, or a bare `{"object":"error"}`). */
export function classifyErrorBody(body: unknown): ProviderFailure {
  const error = readErrorJson(body);
  const codeText = typeof error.code === "string" ? error.code : "";
  // An HTTP status as a number or as digits (LiteLLM and Azure send "429").
  const status = typeof error.code === "number" ? error.code : /^\d{3}$/.test(codeText) ? Number(codeText) : Number.NaN;
  const type = error.type ?? "";
  // No message member: the object itself is all the provider said.
  const detail = clip(error.message || (typeof body === "object" && body !== null ? JSON.stringify(body) : "") || "(no message)");
  if (isOverflow(error))
    return { code: "context_overflow", message: `the request does not fit the model's context window: ${detail}`, retryable: false };
  if (status === 429 || /rate.?limit/i.test(`${codeText} ${type}`))
    return { code: "rate_limited", message: `rate limited by the provider: ${detail}`, retryable: true };
  const serverSide = status >= 500 || /server_error|overloaded|unavailable/i.test(`${codeText} ${type}`);
  return { code: "provider_error", message: `the provider sent an error inside the stream: ${detail}`, retryable: serverSide };
}

/** The failure a stream chunk reports, if it is an error object rather than a completion chunk. */
export function streamChunkFailure(chunk: unknown): ProviderFailure | undefined {
  // Gemini wraps its error object in a one-element array.
  if (Array.isArray(chunk)) return chunk.length > 0 ? streamChunkFailure(chunk[0]) : undefined;
  if (!isRecord(chunk)) return undefined;
  if (chunk.error !== undefined && chunk.error !== null) return classifyErrorBody(chunk.error);
  const errorList = Array.isArray(chunk.errors) && chunk.errors.length > 0;
  if ((chunk.object === "error" || chunk.type === "error" || errorList) && !Array.isArray(chunk.choices)) return classifyErrorBody(chunk);
  return undefined;
}

/** Classifies anything thrown while requesting or reading a completion stream. */
export function classifyFailure(err: unknown): ProviderFailure {
  if (err instanceof ProviderStreamError) return err.failure;
  if (err instanceof APIUserAbortError) return { code: "aborted", message: ABORTED_MESSAGE, retryable: false };
  if (err instanceof APIConnectionTimeoutError)
    return { code: "network_error", message: "the provider did not answer before the request timeout", retryable: true };
  if (err instanceof APIConnectionError) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
    return { code: "network_error", message: `could not reach the provider${clip(cause)}`, retryable: true };
  }
  if (err instanceof APIError) {
    if (err.status === undefined) return classifyErrorBody(err.error ?? err.message);
    // providerFetch hands the SDK every non-OK body as `{"error": ProviderError}`.
    return classifyHttpError(err.status, readErrorJson(err.error), err.headers);
  }
  if (err instanceof SyntaxError)
    return { code: "provider_error", message: `the provider sent a stream chunk that is not JSON (${err.message})`, retryable: false };
  const reason = err instanceof Error ? err.message : String(err);
  return { code: "network_error", message: `the connection to the provider broke: ${clip(reason)}`, retryable: true };
}

function classifyHttpError(status: number, error: ProviderError, headers: Headers | undefined): ProviderFailure {
  const detail = clip(error.message || "(no body)");
  const what = `the provider answered HTTP ${status}: ${detail}`;
  if (status === 429) return { code: "rate_limited", message: what, retryable: true, retryAfterMs: parseRetryAfterMs(headers) };
  if (status === 413 || (status >= 400 && status < 500 && isOverflow(error))) {
    return {
      code: "context_overflow",
      message: `the request does not fit the model's context window (HTTP ${status}: ${detail})`,
      retryable: false,
    };
  }
  if (status === 401 || status === 403)
    return { code: "auth_failed", message: `${what} (check OPENAI_API_KEY and OPENAI_BASE_URL)`, retryable: false };
  if (status >= 500 || status === 408)
    return { code: "provider_error", message: what, retryable: true, retryAfterMs: parseRetryAfterMs(headers) };
  return { code: "bad_request", message: what, retryable: false };
}

const REDACTED = "[redacted]";

/** A run of this many characters of a secret is redacted wherever it stands (a provider's echo cut short, a parser quoting a line). */
const SECRET_FRAGMENT_CHARS = 8;
/** ...and a shorter start of it (down to this many) where a message was cut (`…`) or ends. */
const SECRET_CUT_CHARS = 4;

/**
 * Removes secrets from a message that may quote a request or a provider's echo of it, also in
 * part: provider texts are clipped to a few hundred characters, and a key cut there leaves a start
 * that no longer matches the whole key.
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret || secret.length < SECRET_CUT_CHARS) continue;
    for (const form of secretForms(secret)) {
      out = out.split(form).join(REDACTED);
      out = withoutFragments(out, form);
    }
  }
  return out.replace(/(Bearer\s+)[^\s"',;]+/gi, `$1${REDACTED}`).replace(/\bsk-[A-Za-z0-9_*-]{6,}/g, `sk-${REDACTED}`);
}

/**
 * The secret as written, and as base64 in each of the three alignments a prefix can give it (as in a
 * `Basic` header a provider echoes), without the characters that depend on its neighbours.
 */
function secretForms(secret: string): string[] {
  const forms = [secret];
  for (let offset = 0; offset < 3; offset++) {
    try {
      const encoded = btoa("\0".repeat(offset) + secret);
      const stable = encoded.slice(offset > 0 ? 4 : 0, -4);
      if (stable.length >= SECRET_FRAGMENT_CHARS) forms.push(stable);
    } catch {
      // Not Latin-1: no base64 form to look for.
    }
  }
  return forms;
}

/** `text` with every run of SECRET_FRAGMENT_CHARS or more characters of `secret`, and a start of it before a cut, redacted. */
function withoutFragments(text: string, secret: string): string {
  // In any case (an echo upper-cased), where lower-casing keeps every position.
  const lowered = text.toLowerCase();
  const hay = lowered.length === text.length ? lowered : text;
  const key = hay === lowered ? secret.toLowerCase() : secret;
  // Marked first, replaced after: overlapping runs become one.
  const marked = new Uint8Array(text.length);
  for (let from = 0; from + SECRET_FRAGMENT_CHARS <= key.length; from++) {
    // A run of lower-case letters and dashes may be a word ("required" of a placeholder key such as
    // sk-no-key-required); a key's runs hold digits or capitals, and its words are covered by their neighbours.
    if (/^[a-z-]+$/.test(secret.slice(from, from + SECRET_FRAGMENT_CHARS))) continue;
    const probe = key.slice(from, from + SECRET_FRAGMENT_CHARS);
    for (let at = hay.indexOf(probe); at >= 0; at = hay.indexOf(probe, at + 1)) marked.fill(1, at, at + SECRET_FRAGMENT_CHARS);
  }
  for (let length = Math.min(key.length - 1, SECRET_FRAGMENT_CHARS - 1); length >= SECRET_CUT_CHARS; length--) {
    const start = key.slice(0, length);
    for (let at = hay.indexOf(start); at >= 0; at = hay.indexOf(start, at + 1)) {
      // Cut by our clip (…) or quoted cut short by a parser ("gsk_ab"... is not valid JSON).
      const rest = text.slice(at + length, at + length + 4);
      if (rest === "" || rest.startsWith("…") || rest.startsWith("...") || rest === '"...') marked.fill(1, at, at + length);
    }
  }
  if (!marked.includes(1)) return text;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    if (!marked[i]) out += text[i];
    else if (!marked[i - 1]) out += REDACTED;
  }
  return out;
}
