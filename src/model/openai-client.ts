import OpenAI from "openai";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { randomIds, type IdGenerator } from "../domain";
import { ChatChunkAccumulator } from "./chunk-accumulator";
import { rewriteLegacyErrorLines } from "./legacy-error-lines";
import { ABORTED_MESSAGE, modelError, type ModelClient, type ModelErrorEvent, type ModelEvent, type ModelRequest } from "./model-client";
import { toOpenAIMessages, toOpenAITools } from "./openai-messages";
import { readErrorBody } from "./provider-error-body";
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
      fetch: providerFetch(innerFetch),
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
    const abortRequest = () => controller.abort();
    signal.addEventListener("abort", abortRequest, { once: true });
    if (signal.aborted) controller.abort();
    const waiter = new AbortWaiter(signal);
    let ended = false;
    try {
      const body = this.buildBody(request);
      for (let attempt = 1; ; attempt++) {
        let produced = false;
        let failure: ProviderFailure;
        try {
          const accumulator = new ChatChunkAccumulator(this.ids);
          const stream = await waiter.wait(this.client.chat.completions.create(body, { signal: controller.signal }));
          const chunks = stream[Symbol.asyncIterator]();
          let drained = false;
          try {
            for (let next = await waiter.wait(chunks.next()); !next.done; next = await waiter.wait(chunks.next())) {
              for (const event of accumulator.push(next.value)) {
                produced = true;
                yield event;
              }
            }
            drained = true;
          } finally {
            // Left early (abort, broken stream, consumer stopped): stop the SDK's reader, without waiting.
            if (!drained) chunks.return?.().catch(() => {});
          }
          // The SDK ends its iterator quietly when the request is aborted.
          if (signal.aborted) break;
          ended = true;
          for (const event of accumulator.finish()) yield event.type === "error" ? this.redacted(event) : event;
          return;
        } catch (err) {
          failure = signal.aborted || err === ABORT ? abortedFailure() : classifyFailure(err);
        }

        if (failure.code === "aborted") break;
        if (!failure.retryable || produced || attempt >= this.retry.maxAttempts) {
          ended = true;
          yield this.redacted(modelError(failure.code, attempt > 1 ? `${failure.message} (gave up after ${attempt} attempts)` : failure.message));
          return;
        }
        const delayMs = failure.retryAfterMs ?? Math.min(this.retry.baseDelayMs * 2 ** (attempt - 1), this.retry.maxRetryDelayMs);
        if (delayMs > this.retry.maxRetryDelayMs) {
          const wait = `the provider asked to retry after ${formatSeconds(delayMs)}, longer than the ${formatSeconds(this.retry.maxRetryDelayMs)} this client waits`;
          ended = true;
          yield this.redacted(modelError(failure.code, `${failure.message} (${wait})`));
          return;
        }
        await this.sleep(delayMs, signal);
        if (signal.aborted) break;
      }
      ended = true;
      yield modelError("aborted", ABORTED_MESSAGE);
    } catch (err) {
      // Nothing above should throw (an injected sleep might); keep the contract if it does.
      if (!ended) {
        const failure = signal.aborted ? abortedFailure() : classifyFailure(err);
        yield this.redacted(modelError(failure.code, failure.message));
      }
    } finally {
      waiter.dispose();
      signal.removeEventListener("abort", abortRequest);
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

  private redacted(event: ModelErrorEvent): ModelErrorEvent {
    return { ...event, message: redactSecrets(event.message, [this.options.apiKey]) };
  }
}

/** Rejection value of an AbortWaiter wait, so an abort is never mistaken for a provider failure. */
const ABORT = Symbol("aborted");

/**
 * Awaits one promise at a time, rejecting with ABORT as soon as the signal fires, so a transport that
 * ignores the signal cannot hang the stream. One listener for the whole stream: racing every chunk
 * against a shared abort promise would pile up one reaction per chunk until the stream ends.
 */
class AbortWaiter {
  private rejectPending: ((reason: unknown) => void) | undefined;
  private readonly onAbort = () => this.rejectPending?.(ABORT);

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener("abort", this.onAbort, { once: true });
  }

  wait<T>(promise: Promise<T>): Promise<T> {
    if (this.signal.aborted) {
      promise.catch(() => {});
      return Promise.reject(ABORT);
    }
    return new Promise<T>((resolve, reject) => {
      this.rejectPending = reject;
      promise.then(resolve, reject);
    });
  }

  dispose(): void {
    this.rejectPending = undefined;
    this.signal.removeEventListener("abort", this.onAbort);
  }
}

function abortedFailure(): ProviderFailure {
  return { code: "aborted", message: ABORTED_MESSAGE, retryable: false };
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/**
 * The fetch handed to the SDK: hands it the provider's words of every error body, and the errors
 * older llama.cpp servers put on `error:` lines of an event stream.
 */
function providerFetch(inner: FetchLike): FetchLike {
  return async (input, init) => {
    const response = await inner(input, init);
    if (!response.ok) return normaliseErrorBody(response);
    const eventStream = /text\/event-stream/i.test(response.headers.get("content-type") ?? "");
    return eventStream && response.body !== null ? withBody(response, rewriteLegacyErrorLines(response.body)) : response;
  };
}

/**
 * The SDK reads only the `error` member of a JSON object body; it loses the words of an unwrapped
 * `{"message"}`, a Gemini array, a NestJS `{"error": "Bad Request", "message": ...}` or an HTML page.
 * Read them once here (readErrorBody) and hand the SDK the one shape it reads: `{"error": ProviderError}`.
 */
async function normaliseErrorBody(response: Response): Promise<Response> {
  const text = await response.text().catch(() => "");
  return withBody(response, JSON.stringify({ error: readErrorBody(text, response.headers.get("content-type")) }));
}

/** `response` with another body; the old body's length and encoding no longer describe it. */
function withBody(response: Response, body: BodyInit): Response {
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  headers.delete("content-encoding");
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}
