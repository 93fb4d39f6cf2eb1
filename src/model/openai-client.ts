import OpenAI from "openai";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { randomIds, type IdGenerator } from "../domain";
import { ChatChunkAccumulator } from "./chunk-accumulator";
import { ABORTED_MESSAGE, modelError, type ModelClient, type ModelEvent, type ModelRequest } from "./model-client";
import { toOpenAIMessages, toOpenAITools } from "./openai-messages";
import { classifyFailure, redactSecrets, type ProviderFailure } from "./provider-errors";

/** The fetch the client calls; tests pass one that answers with recorded-shape SSE bodies. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Waits `ms`, or less if `signal` aborts first; never rejects. Injected by tests to record delays. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

/** How failed attempts (429, 5xx, connection errors before any output) are retried. */
export interface RetryPolicy {
  /** Attempts in total, the first included. */
  maxAttempts: number;
  /** Delay before retry n (1-based) is `baseDelayMs * 2^(n-1)` when the provider gives no Retry-After. */
  baseDelayMs: number;
  /** Longest wait this client accepts; a provider asking for more fails at once. */
  maxRetryDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1_000, maxRetryDelayMs: 60_000 };
/** Time allowed until the provider's response headers arrive (the stream itself may run longer). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

export interface OpenAIModelClientOptions {
  apiKey: string;
  /** Any OpenAI-compatible endpoint; the SDK's default (api.openai.com) when omitted. */
  baseURL?: string;
  /** Model used when a request does not name one. */
  model: string;
  fetch?: FetchLike;
  /** Makes `tc_` ids for tool calls the provider sent without one. */
  ids?: IdGenerator;
  retry?: Partial<RetryPolicy>;
  sleep?: Sleep;
  requestTimeoutMs?: number;
}

export const abortableSleep: Sleep = (ms, signal) =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const finish = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      resolve();
    };
    const timer = setTimeout(finish, ms);
    signal.addEventListener("abort", finish, { once: true });
  });

/** Marks the rejection of the abort race, so it is never mistaken for a provider failure. */
const ABORT = Symbol("aborted");

/**
 * The production ModelClient: chat.completions with `stream: true` through the `openai` SDK (which only
 * parses SSE here; the SDK's own retries are off and its `.stream()` helper is not used), assembled by
 * ChatChunkAccumulator.
 *
 * Retries: an attempt that fails with a retryable failure (429, 5xx, 408, connection error, retryable
 * in-stream error) *before it produced any event* is retried up to `maxAttempts`, waiting Retry-After
 * when given, else exponential backoff. A Retry-After above `maxRetryDelayMs` fails at once. Once a
 * delta was delivered an attempt is never repeated (the runtime would see duplicated text).
 * Error messages never contain the API key or an Authorization header value.
 */
export class OpenAIModelClient implements ModelClient {
  private readonly client: OpenAI;
  private readonly retry: RetryPolicy;
  private readonly sleep: Sleep;
  private readonly ids: IdGenerator;

  constructor(private readonly options: OpenAIModelClientOptions) {
    const innerFetch: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
    this.client = new OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseURL,
      fetch: wrapErrorBodies(innerFetch),
      maxRetries: 0,
      // The SDK would log unparseable provider chunks verbatim; failures reach the runtime as events instead.
      logLevel: "off",
      timeout: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    });
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.sleep = options.sleep ?? abortableSleep;
    this.ids = options.ids ?? randomIds;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    // Our own controller, so the HTTP request is cancelled whenever this stream stops early.
    const controller = new AbortController();
    const forwardAbort = () => controller.abort();
    signal.addEventListener("abort", forwardAbort, { once: true });
    if (signal.aborted) controller.abort();
    let ended = false;
    try {
      for await (const event of this.attempts(request, signal, controller.signal)) {
        if (event.type === "error" || event.type === "done") ended = true;
        yield event.type === "error" ? { ...event, message: redactSecrets(event.message, [this.options.apiKey]) } : event;
      }
    } catch (err) {
      // attempts() is written not to throw; this keeps the contract if it ever does.
      if (!ended) {
        const failure = signal.aborted ? abortedFailure() : classifyFailure(err);
        yield modelError(failure.code, redactSecrets(failure.message, [this.options.apiKey]));
      }
    } finally {
      signal.removeEventListener("abort", forwardAbort);
      controller.abort();
    }
  }

  /** The request body as sent to `chat.completions.create`. */
  buildBody(request: ModelRequest): ChatCompletionCreateParamsStreaming {
    const body: ChatCompletionCreateParamsStreaming = {
      model: request.model?.trim() || this.options.model,
      messages: toOpenAIMessages(request.system, request.messages),
      stream: true,
      stream_options: { include_usage: true },
    };
    // Some servers reject an empty `tools` array.
    if (request.tools.length > 0) body.tools = toOpenAITools(request.tools);
    return body;
  }

  private async *attempts(request: ModelRequest, signal: AbortSignal, requestSignal: AbortSignal): AsyncGenerator<ModelEvent> {
    const body = this.buildBody(request);
    // Rejects when the caller aborts, so a transport that ignores the signal cannot hang the stream.
    let removeAbortListener = () => {};
    const aborted = new Promise<never>((_, reject) => {
      const onAbort = () => reject(ABORT);
      if (signal.aborted) onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      removeAbortListener = () => signal.removeEventListener("abort", onAbort);
    });
    aborted.catch(() => {});

    try {
      for (let attempt = 1; ; attempt++) {
        let produced = false;
        let failure: ProviderFailure;
        try {
          const accumulator = new ChatChunkAccumulator(this.ids);
          const stream = await Promise.race([this.client.chat.completions.create(body, { signal: requestSignal }), aborted]);
          const chunks = stream[Symbol.asyncIterator]();
          try {
            for (;;) {
              const next = await Promise.race([chunks.next(), aborted]);
              if (next.done) break;
              for (const event of accumulator.push(next.value)) {
                produced = true;
                yield event;
              }
            }
          } finally {
            // Stops the SDK's reader when we leave early (abort, error, consumer break).
            chunks.return?.().catch(() => {});
          }
          // The SDK ends its iterator quietly when the request is aborted.
          if (signal.aborted) {
            yield modelError("aborted", ABORTED_MESSAGE);
            return;
          }
          yield* accumulator.finish();
          return;
        } catch (err) {
          failure = signal.aborted || err === ABORT ? abortedFailure() : classifyFailure(err);
        }

        if (failure.code === "aborted") {
          yield modelError("aborted", ABORTED_MESSAGE);
          return;
        }
        if (!failure.retryable || produced || attempt >= this.retry.maxAttempts) {
          yield modelError(failure.code, attempt > 1 ? `${failure.message} (gave up after ${attempt} attempts)` : failure.message);
          return;
        }
        const delayMs = failure.retryAfterMs ?? Math.min(this.retry.baseDelayMs * 2 ** (attempt - 1), this.retry.maxRetryDelayMs);
        if (delayMs > this.retry.maxRetryDelayMs) {
          yield modelError(
            failure.code,
            `${failure.message} (the provider asked to retry after ${formatSeconds(delayMs)}, longer than the ${formatSeconds(this.retry.maxRetryDelayMs)} this client waits)`,
          );
          return;
        }
        await this.sleep(delayMs, signal);
        if (signal.aborted) {
          yield modelError("aborted", ABORTED_MESSAGE);
          return;
        }
      }
    } finally {
      removeAbortListener();
    }
  }
}

function abortedFailure(): ProviderFailure {
  return { code: "aborted", message: ABORTED_MESSAGE, retryable: false };
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/**
 * The SDK keeps only the `error` member of a JSON error body; servers such as vLLM or FastAPI send
 * `{"message": ...}` or `{"detail": ...}` unwrapped, which the SDK would lose. Wrap those bodies so the
 * provider's words reach the error classification (overflow detection depends on them).
 */
function wrapErrorBodies(inner: FetchLike): FetchLike {
  return async (input, init) => {
    const response = await inner(input, init);
    if (response.ok) return response;
    const text = await response.text().catch(() => "");
    let body = text;
    try {
      const json: unknown = JSON.parse(text);
      if (typeof json === "object" && json !== null && !Array.isArray(json) && !("error" in json)) body = JSON.stringify({ error: json });
    } catch {
      // Not JSON: the SDK reports the text itself.
    }
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
