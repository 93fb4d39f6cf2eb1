import { counterIds } from "../../src/domain";
import type { ModelEvent, ModelRequest } from "../../src/model";
import { OpenAIModelClient, type OpenAIModelClientOptions, type RetryPolicy } from "../../src/model";

export const API_KEY = "sk-test-SECRET-0123456789";
export const BASE_URL = "https://llm.example.test/v1";

/** One SSE event per chunk (`data: <json>\n\n`), then `data: [DONE]` unless `done: false`. */
export function sse(chunks: unknown[], { done = true }: { done?: boolean } = {}): string {
  return chunks.map((c) => `data: ${typeof c === "string" ? c : JSON.stringify(c)}\n\n`).join("") + (done ? "data: [DONE]\n\n" : "");
}

/** A chat.completion.chunk with one choice. */
export function chunk(delta: Record<string, unknown> | undefined, finishReason: string | null = null, extra: Record<string, unknown> = {}) {
  const choice: Record<string, unknown> = { index: 0, finish_reason: finishReason };
  if (delta !== undefined) choice.delta = delta;
  return { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m", choices: [choice], ...extra };
}

export function usageChunk(prompt: number, completion: number, total = prompt + completion) {
  return {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total },
  };
}

/** A body delivered as the given byte/string parts (each its own read), optionally failing after them. */
export function bodyOf(parts: (string | Uint8Array)[], opts: { errorAfter?: Error; hang?: boolean } = {}): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < parts.length) {
        const part = parts[i++]!;
        controller.enqueue(typeof part === "string" ? encoder.encode(part) : part);
        return;
      }
      if (opts.errorAfter) return controller.error(opts.errorAfter);
      if (opts.hang) return new Promise(() => {}); // never delivers, never closes
      controller.close();
    },
  });
}

/** A model's answers for a run that calls bash once per command, a turn each, then says "done". */
export function bashTurns(commands: readonly string[]): string[] {
  return [
    ...commands.map((command, i) =>
      sse([
        chunk({
          tool_calls: [{ index: 0, id: `call_${i}`, type: "function", function: { name: "bash", arguments: JSON.stringify({ command }) } }],
        }),
        chunk({}, "tool_calls"),
      ]),
    ),
    sse([chunk({ content: "done" }), chunk({}, "stop")]),
  ];
}

export function sseResponse(body: string | ReadableStream<Uint8Array>, status = 200): Response {
  return new Response(body, { status, headers: { "content-type": "text/event-stream" } });
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(typeof body === "string" ? body : JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

export interface RecordedCall {
  url: string;
  headers: Headers;
  body: Record<string, unknown>;
  signal: AbortSignal | undefined;
}

type Answer = Response | Error | ((init: RequestInit | undefined) => Response | Promise<Response>);

/** A fetch that answers the k-th call with the k-th answer (an Error is thrown) and records each call. */
export function scriptedFetch(answers: Answer[]) {
  const calls: RecordedCall[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = input instanceof Request ? input.url : String(input);
    calls.push({
      url,
      headers: new Headers(init?.headers as HeadersInit | undefined),
      body: typeof init?.body === "string" ? JSON.parse(init.body) : {},
      signal: init?.signal ?? undefined,
    });
    const answer = answers[calls.length - 1];
    if (answer === undefined) throw new Error(`unexpected fetch call ${calls.length}`);
    if (answer instanceof Error) throw answer;
    return typeof answer === "function" ? answer(init) : answer;
  };
  return { fetch, calls };
}

/** An OpenAIModelClient on an injected fetch, deterministic ids and a sleep that only records. */
export function testClient(answers: Answer[], options: Partial<OpenAIModelClientOptions> & { retry?: Partial<RetryPolicy> } = {}) {
  const { fetch, calls } = scriptedFetch(answers);
  const sleeps: number[] = [];
  const client = new OpenAIModelClient({
    apiKey: API_KEY,
    baseURL: BASE_URL,
    model: "test-model",
    fetch,
    ids: counterIds(),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
  return { client, calls, sleeps };
}

export const EMPTY_REQUEST: ModelRequest = { system: "You are terse.", messages: [], tools: [] };

export async function collect(stream: AsyncIterable<ModelEvent>): Promise<ModelEvent[]> {
  const events: ModelEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** Streams one SSE body through a fresh client and returns every event. */
export async function play(body: string | ReadableStream<Uint8Array>): Promise<ModelEvent[]> {
  const { client } = testClient([sseResponse(body)]);
  return collect(client.stream(EMPTY_REQUEST, new AbortController().signal));
}

export function texts(events: ModelEvent[]): string[] {
  return events.flatMap((e) => (e.type === "text_delta" ? [e.text] : []));
}
