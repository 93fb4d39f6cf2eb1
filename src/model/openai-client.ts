import OpenAI from "openai";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { type IdGenerator, isRecord, randomIds } from "../domain";
import { MAX_PROVIDER_EVENT_BYTES } from "../domain/limits";
import { ChatChunkAccumulator } from "./chunk-accumulator";
import { eventTooLong, firstContentByte, type PeekedBody, rewriteLegacyErrorLines } from "./legacy-error-lines";
import { ABORTED_MESSAGE, type ModelClient, type ModelErrorEvent, type ModelEvent, type ModelRequest, modelError } from "./model-client";
import { toOpenAIMessages, toOpenAITools } from "./openai-messages";
import { readErrorBody } from "./provider-error-body";
import { classifyFailure, ProviderStreamError, redactSecrets } from "./provider-errors";
import { abortableSleep, DEFAULT_RETRY_POLICY, type FailedAttempt, type RetryPolicy, retryDecision, type Sleep } from "./retry-policy";
import { ABORT, cancelledOnAbort, StreamCancellation } from "./stream-cancellation";

/** The fetch the client calls; tests pass one that answers with recorded-shape SSE bodies. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * Time allowed until the provider's response headers arrive (the stream itself may run longer), for a
 * request without a deadline; a run's requests may wait as long as the run has left (a server that
 * loads a large model first, as Ollama does, sends nothing for minutes).
 */
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
    const cancellation = new StreamCancellation(signal);
    try {
      const end = yield* this.attempts(request, cancellation);
      if (end) yield end;
    } finally {
      cancellation.close();
    }
  }

  /**
   * Runs attempts until one ends the stream, a failure is final or the caller aborts, waiting
   * between them as `retryDecision` says. Returns the terminal event still to send (null when the
   * last attempt sent its own).
   */
  private async *attempts(request: ModelRequest, cancellation: StreamCancellation): AsyncGenerator<ModelEvent, ModelErrorEvent | null> {
    const begun = { calls: 0 };
    try {
      const body = this.buildBody(request);
      for (let attempt = 1; ; attempt++) {
        const timeout = request.deadlineAt === undefined ? undefined : Math.max(1, request.deadlineAt - Date.now());
        const end = yield* this.attempt(body, cancellation, timeout, begun);
        if (end === "finished") return null;
        if (end === "aborted") break;
        const timeLeftMs = request.deadlineAt === undefined ? undefined : request.deadlineAt - Date.now();
        const decision = retryDecision(end, attempt, this.retry, timeLeftMs);
        if ("giveUp" in decision) return this.redacted(modelError(end.failure.code, decision.giveUp));
        // Said before the wait, so a client can show "retrying in N s" instead of a silent stream.
        yield {
          type: "retry",
          retry: { attempt, maxAttempts: this.retry.maxAttempts, delayMs: decision.retryAfterMs, code: end.failure.code },
        };
        await this.sleep(decision.retryAfterMs, cancellation.signal);
        if (cancellation.aborted) break;
      }
      return begun.calls > 0
        ? { ...modelError("aborted", ABORTED_MESSAGE), begunCalls: begun.calls }
        : modelError("aborted", ABORTED_MESSAGE);
    } catch (err) {
      // Nothing above should throw (an injected sleep might); keep the contract if it does.
      if (cancellation.aborted) return modelError("aborted", ABORTED_MESSAGE);
      const failure = classifyFailure(err);
      return this.redacted(modelError(failure.code, failure.message));
    }
  }

  /**
   * One HTTP attempt: yields its events as they are assembled and returns how it ended: "finished"
   * (its terminal event was sent), "aborted", or its failure and whether it had produced events.
   */
  private async *attempt(
    body: ChatCompletionCreateParamsStreaming,
    cancellation: StreamCancellation,
    /** How long to wait for the response headers (the client's default when undefined). */
    timeout: number | undefined,
    /** Set to the tool calls begun when the attempt is aborted. */
    begun: { calls: number },
  ): AsyncGenerator<ModelEvent, AttemptEnd> {
    let produced = false;
    const accumulator = new ChatChunkAccumulator(this.ids);
    try {
      const options = { signal: cancellation.requestSignal, ...(timeout === undefined ? {} : { timeout }) };
      const stream = await cancellation.wait(this.client.chat.completions.create(body, options));
      const chunks = stream[Symbol.asyncIterator]();
      let drained = false;
      try {
        for (let next = await cancellation.wait(chunks.next()); !next.done; next = await cancellation.wait(chunks.next())) {
          for (const event of accumulator.push(next.value)) {
            produced = true;
            yield event;
          }
        }
        drained = true;
      } catch (err) {
        // The answer was whole (its finish reason came) when the connection broke: a proxy that cuts
        // a finished stream before its [DONE] or the body's end costs nothing of it.
        if (!accumulator.finished || cancellation.aborted || err === ABORT || err instanceof ProviderStreamError) throw err;
      } finally {
        // Left early (abort, broken stream, consumer stopped): stop the SDK's reader, without waiting.
        if (!drained) chunks.return?.().catch(() => {});
      }
      // The SDK ends its iterator quietly when the request is aborted.
      if (cancellation.aborted) {
        begun.calls = accumulator.begunCalls;
        return "aborted";
      }
      for (const event of accumulator.finish()) yield event.type === "error" ? this.redacted(event) : event;
      return "finished";
    } catch (err) {
      const failure = cancellation.aborted || err === ABORT ? null : classifyFailure(err);
      if (failure === null || failure.code === "aborted") {
        begun.calls = accumulator.begunCalls;
        return "aborted";
      }
      return { failure, produced };
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
    if (request.tools.length > 0) {
      body.tools = toOpenAITools(request.tools);
      if (request.toolChoice) body.tool_choice = request.toolChoice;
    }
    return body;
  }

  private redacted(event: ModelErrorEvent): ModelErrorEvent {
    return { ...event, message: redactSecrets(event.message, [this.options.apiKey]) };
  }
}

/** How one attempt ended: its terminal event was sent, the caller aborted, or it failed. */
type AttemptEnd = "finished" | "aborted" | FailedAttempt;

/**
 * The fetch handed to the SDK: hands it the provider's words of every error body, the errors
 * older llama.cpp servers put on `error:` lines of an event stream, and a JSON answer to a
 * streaming request as the stream it stands for.
 */
function providerFetch(inner: FetchLike): FetchLike {
  return async (input, init) => {
    const response = await inner(input, init);
    if (!response.ok) return normaliseErrorBody(response);
    const type = response.headers.get("content-type") ?? "";
    if (/\bjson\b/i.test(type) && response.body !== null) {
      // Some servers label their event stream JSON: only a body that starts like JSON is read whole.
      // (An event stream is handed on at its headers, not at its first byte: waiting for that inside
      // the SDK's wait for headers made a provider that sends nothing end as stream_incomplete, not
      // as the run's timeout. So a JSON body labelled an event stream is not read as JSON.)
      const { first, peeked } = await firstByte(response.body, init?.signal);
      if (first === 0x7b || first === 0x5b) {
        const text = await boundedText(rejoined(peeked), MAX_PROVIDER_EVENT_BYTES);
        return text === null ? failedStream(response, eventTooLong(MAX_PROVIDER_EVENT_BYTES)) : jsonAnswer(response, text);
      }
      return withBody(response, rewriteLegacyErrorLines(peeked, init?.signal));
    }
    const eventStream = /text\/event-stream/i.test(type);
    return eventStream && response.body !== null ? withBody(response, rewriteLegacyErrorLines(response.body, init?.signal)) : response;
  };
}

/**
 * A 200 JSON body where a stream was asked for: a proxy that ignores `stream: true` sends the whole
 * completion, which becomes one chunk of a stream; a gateway that answers errors with 200 sends
 * `{"error": ...}`, which is handed on as the error it is (the status its code names, else 502).
 * Anything else is passed on as it came (the stream then has no finish reason).
 */
async function jsonAnswer(response: Response, text: string): Promise<Response> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return withBody(response, eventsOf(text));
  }
  if (isRecord(json) && json.error !== undefined && json.error !== null) {
    const code = isRecord(json.error) ? Number(json.error.code) : Number.NaN;
    const status = Number.isInteger(code) && code >= 400 && code <= 599 ? code : 502;
    return normaliseErrorBody(new Response(text, { status, headers: response.headers }));
  }
  const choice = isRecord(json) && Array.isArray(json.choices) && isRecord(json.choices[0]) ? json.choices[0] : null;
  if (!isRecord(json) || !choice || !isRecord(choice.message)) return withBody(response, eventsOf(text));
  const { content, refusal, reasoning_content, reasoning, tool_calls } = choice.message;
  const delta = {
    content,
    refusal,
    reasoning_content,
    reasoning,
    // A message's calls carry no index; a stream's fragments do.
    tool_calls: Array.isArray(tool_calls) ? tool_calls.map((call, index) => (isRecord(call) ? { index, ...call } : call)) : undefined,
  };
  const chunk = {
    id: json.id,
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: choice.finish_reason }],
    usage: json.usage,
  };
  const headers = new Headers(response.headers);
  headers.set("content-type", "text/event-stream");
  return withBody(
    new Response(null, { status: response.status, statusText: response.statusText, headers }),
    eventsOf(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`),
  );
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

/**
 * `body` as text, or null once it passes `maxBytes` (the rest is not read). A read that fails (the
 * connection dropped) fails the attempt, as it would mid-stream: retried.
 */
async function boundedText(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<string | null> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let total = 0;
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    total += next.value.length;
    if (total > maxBytes) {
      reader.cancel().catch(() => {});
      return null;
    }
    parts.push(decoder.decode(next.value, { stream: true }));
  }
  parts.push(decoder.decode());
  return parts.join("");
}

/**
 * `text` as a body the SDK reads an event at a time: a string body is read in small pieces, and the
 * SDK joins an unfinished event again on every piece (hunt 108: a whole 25 MB answer as one event
 * held the isolate for two minutes).
 */
function eventsOf(text: string): ReadableStream<Uint8Array> {
  return rewriteLegacyErrorLines(new Response(text).body!);
}

/** An event stream that fails with `error` when read: the failure of an answer found before the SDK reads it. */
function failedStream(response: Response, error: Error): Response {
  const headers = new Headers(response.headers);
  headers.set("content-type", "text/event-stream");
  const body = new ReadableStream<Uint8Array>({ start: (controller) => controller.error(error) });
  return withBody(new Response(null, { status: response.status, statusText: response.statusText, headers }), body);
}

/**
 * The body's first byte that is not whitespace or a byte order mark, read without losing what was read
 * (`peeked` hands it on first); null for a body without one.
 */
async function firstByte(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal | null | undefined,
): Promise<{ first: number | null; peeked: PeekedBody }> {
  const { reader, release } = cancelledOnAbort(body, signal);
  const held: Uint8Array[] = [];
  let first: number | null = null;
  for (let done = false; first === null && !done; ) {
    const next = await reader.read();
    if (next.done) done = true;
    else {
      held.push(next.value);
      first = firstContentByte(next.value);
    }
  }
  return { first, peeked: { reader, release, held } };
}

/** A peeked body as one stream again. */
function rejoined({ reader, release, held }: PeekedBody): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = held.shift();
      if (chunk) return controller.enqueue(chunk);
      const next = await reader.read();
      if (!next.done) return controller.enqueue(next.value);
      release();
      controller.close();
    },
    cancel: (reason) => {
      release();
      return reader.cancel(reason);
    },
  });
}

/** `response` with another body; the old body's length and encoding no longer describe it. */
function withBody(response: Response, body: BodyInit): Response {
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  headers.delete("content-encoding");
  return new Response(body, { status: response.status, statusText: response.statusText, headers });
}
