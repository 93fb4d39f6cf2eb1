import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/domain";
import type { ModelEvent } from "../../src/model";
import { OpenAIModelClient } from "../../src/model";
import {
  API_KEY,
  BASE_URL,
  bodyOf,
  chunk,
  collect,
  EMPTY_REQUEST,
  jsonResponse,
  sse,
  sseResponse,
  testClient,
  usageChunk,
} from "./helpers";

const okBody = () => sse([chunk({ content: "ok" }), chunk({}, "stop")]);
const OK_EVENTS: ModelEvent[] = [
  { type: "text_delta", text: "ok" },
  { type: "done", stopReason: "STOP" },
];
/** The events without the retry notices (their own tests below check those). */
const run = async (client: OpenAIModelClient, signal = new AbortController().signal) =>
  (await collect(client.stream(EMPTY_REQUEST, signal))).filter((e) => e.type !== "retry");
const rateLimited = (headers: Record<string, string> = {}) =>
  jsonResponse(429, { error: { message: "Rate limit reached for requests", type: "requests", code: "rate_limit_exceeded" } }, headers);

describe("OpenAIModelClient retries", () => {
  it("waits what Retry-After asks on 429 and then succeeds", async () => {
    const { client, calls, sleeps } = testClient([
      rateLimited({ "retry-after": "2" }),
      rateLimited({ "retry-after": "0.5" }),
      sseResponse(okBody()),
    ]);
    expect(await run(client)).toEqual(OK_EVENTS);
    expect(sleeps).toEqual([2000, 500]);
    expect(calls).toHaveLength(3);
  });

  it("announces every retry before it waits: attempt, maxAttempts, delayMs and code", async () => {
    const { client, sleeps } = testClient([
      rateLimited({ "retry-after": "2" }),
      jsonResponse(503, { error: { message: "busy" } }),
      sseResponse(okBody()),
    ]);
    const events = await collect(client.stream(EMPTY_REQUEST, new AbortController().signal));
    expect(events).toEqual([
      { type: "retry", retry: { attempt: 1, maxAttempts: 3, delayMs: 2000, code: "rate_limited" } },
      { type: "retry", retry: { attempt: 2, maxAttempts: 3, delayMs: 2000, code: "provider_error" } },
      ...OK_EVENTS,
    ]);
    expect(sleeps).toEqual([2000, 2000]);
  });

  it("fails at once with rate_limited when Retry-After is longer than the run has left", async () => {
    const { client, calls, sleeps } = testClient([rateLimited({ "retry-after": "30" })]);
    const events = await collect(client.stream({ ...EMPTY_REQUEST, deadlineAt: Date.now() + 5_000 }, new AbortController().signal));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: "error", code: "rate_limited" });
    expect((events[0] as { message: string }).message).toMatch(/asked to retry after 30 s, longer than the [45](\.\d)? s left in this run/);
    expect(sleeps).toEqual([]);
    expect(calls).toHaveLength(1);
  });

  it("prefers retry-after-ms over Retry-After", async () => {
    const { client, sleeps } = testClient([rateLimited({ "retry-after-ms": "250", "retry-after": "9" }), sseResponse(okBody())]);
    expect(await run(client)).toEqual(OK_EVENTS);
    expect(sleeps).toEqual([250]);
  });

  it("backs off exponentially without Retry-After and fails with rate_limited after the last attempt", async () => {
    const { client, calls, sleeps } = testClient([rateLimited(), rateLimited(), rateLimited()]);
    expect(await run(client)).toEqual([
      {
        type: "error",
        code: "rate_limited",
        message: "the provider answered HTTP 429: Rate limit reached for requests (gave up after 3 attempts)",
      },
    ]);
    expect(sleeps).toEqual([1000, 2000]);
    expect(calls).toHaveLength(3);
  });

  it("fails at once with rate_limited when Retry-After exceeds the cap, without sleeping", async () => {
    const { client, calls, sleeps } = testClient([rateLimited({ "retry-after": "120" })]);
    expect(await run(client)).toEqual([
      {
        type: "error",
        code: "rate_limited",
        message:
          "the provider answered HTTP 429: Rate limit reached for requests (the provider asked to retry after 120 s, longer than the 60 s this client waits)",
      },
    ]);
    expect(sleeps).toEqual([]);
    expect(calls).toHaveLength(1);
  });

  it("honours a custom retry policy", async () => {
    const { client, calls, sleeps } = testClient([rateLimited(), rateLimited()], { retry: { maxAttempts: 2, baseDelayMs: 10 } });
    expect((await run(client)).map((e) => e.type === "error" && e.code)).toEqual(["rate_limited"]);
    expect(sleeps).toEqual([10]);
    expect(calls).toHaveLength(2);
  });

  it("retries a 500 and then streams the answer", async () => {
    const { client, calls, sleeps } = testClient([jsonResponse(500, { error: { message: "internal" } }), sseResponse(okBody())]);
    expect(await run(client)).toEqual(OK_EVENTS);
    expect(sleeps).toEqual([1000]);
    expect(calls).toHaveLength(2);
  });

  it("fails with provider_error after three 503s", async () => {
    const { client, calls } = testClient([
      jsonResponse(503, "overloaded"),
      jsonResponse(503, "overloaded"),
      jsonResponse(503, "overloaded"),
    ]);
    expect(await run(client)).toEqual([
      { type: "error", code: "provider_error", message: "the provider answered HTTP 503: overloaded (gave up after 3 attempts)" },
    ]);
    expect(calls).toHaveLength(3);
  });

  it("retries a connection failure before any output, then fails with network_error", async () => {
    const { client, calls, sleeps } = testClient([
      new TypeError("connect ECONNREFUSED"),
      new TypeError("connect ECONNREFUSED"),
      new TypeError("connect ECONNREFUSED"),
    ]);
    expect(await run(client)).toEqual([
      { type: "error", code: "network_error", message: "could not reach the provider: connect ECONNREFUSED (gave up after 3 attempts)" },
    ]);
    expect(sleeps).toEqual([1000, 2000]);
    expect(calls).toHaveLength(3);
  });

  it("retries a stream that breaks before its first event", async () => {
    const { client, calls } = testClient([sseResponse(bodyOf([], { errorAfter: new Error("socket reset") })), sseResponse(okBody())]);
    expect(await run(client)).toEqual(OK_EVENTS);
    expect(calls).toHaveLength(2);
  });

  it("retries an in-stream server error that arrives before any output", async () => {
    const { client, calls } = testClient([
      sseResponse(sse([{ error: { message: "overloaded", type: "server_error" } }])),
      sseResponse(okBody()),
    ]);
    expect(await run(client)).toEqual(OK_EVENTS);
    expect(calls).toHaveLength(2);
  });
});

describe("OpenAIModelClient errors", () => {
  it("maps a 400 context-length error to context_overflow without retrying", async () => {
    const { client, calls, sleeps } = testClient([
      jsonResponse(400, {
        error: {
          message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130511 tokens.",
          type: "invalid_request_error",
          code: "context_length_exceeded",
        },
      }),
    ]);
    expect(await run(client)).toEqual([
      {
        type: "error",
        code: "context_overflow",
        message:
          "the request does not fit the model's context window (HTTP 400: This model's maximum context length is 128000 tokens. However, your messages resulted in 130511 tokens.)",
      },
    ]);
    expect(calls).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it("detects context overflow in an unwrapped vLLM-style error body", async () => {
    const { client } = testClient([
      jsonResponse(400, {
        object: "error",
        message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
        type: "BadRequestError",
        code: 400,
      }),
    ]);
    expect((await run(client))[0]).toMatchObject({ type: "error", code: "context_overflow" });
  });

  it("maps a 413 without body to context_overflow", async () => {
    const { client } = testClient([new Response(null, { status: 413 })]);
    expect(await run(client)).toEqual([
      { type: "error", code: "context_overflow", message: "the request does not fit the model's context window (HTTP 413: (no body))" },
    ]);
  });

  it("does not mistake a tokens-per-minute rate limit text for context overflow", async () => {
    const { client } = testClient([jsonResponse(400, { error: { message: "Too many tokens per minute, rate limit exceeded" } })]);
    expect((await run(client))[0]).toMatchObject({ type: "error", code: "bad_request" });
  });

  it("detects context overflow sent inside an HTTP 200 stream", async () => {
    const { client } = testClient([sseResponse(sse([{ error: { message: "prompt is too long: 213462 tokens > 200000 maximum" } }]))]);
    expect(await run(client)).toEqual([
      {
        type: "error",
        code: "context_overflow",
        message: "the request does not fit the model's context window: prompt is too long: 213462 tokens > 200000 maximum",
      },
    ]);
  });

  it("maps 401 to auth_failed and never repeats the API key the provider echoed", async () => {
    const { client, calls } = testClient([
      jsonResponse(401, {
        error: {
          message: `Incorrect API key provided: ${API_KEY}. You can find your API key at https://platform.openai.com.`,
          code: "invalid_api_key",
        },
      }),
    ]);
    const events = await run(client);
    expect(events).toEqual([
      {
        type: "error",
        code: "auth_failed",
        message:
          "the provider answered HTTP 401: Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com. (check OPENAI_API_KEY and OPENAI_BASE_URL)",
      },
    ]);
    expect(JSON.stringify(events)).not.toContain("0123456789");
    expect(calls).toHaveLength(1);
  });

  it("never puts the key or an Authorization header in a network error message", async () => {
    const leak = new TypeError(`proxy refused request with headers {"Authorization":"Bearer ${API_KEY}"} and sk-otherKEYabcdefgh`);
    const { client } = testClient([leak], { retry: { maxAttempts: 1 } });
    const events = await run(client);
    expect(events).toEqual([
      {
        type: "error",
        code: "network_error",
        message: 'could not reach the provider: proxy refused request with headers {"Authorization":"Bearer [redacted]"} and sk-[redacted]',
      },
    ]);
    expect(JSON.stringify(events)).not.toContain("SECRET");
  });

  it("maps 404 to bad_request with the provider's message", async () => {
    const { client } = testClient([jsonResponse(404, { error: { message: "The model `nope` does not exist" } })]);
    expect(await run(client)).toEqual([
      { type: "error", code: "bad_request", message: "the provider answered HTTP 404: The model `nope` does not exist" },
    ]);
  });

  it("ends with network_error, not retried, when the connection drops mid-stream after output", async () => {
    const partial = sse([chunk({ content: "Hello" }), chunk({ content: " wor" })], { done: false });
    const { client, calls } = testClient([sseResponse(bodyOf([partial], { errorAfter: new Error("Network connection lost.") }))]);
    expect(await run(client)).toEqual([
      { type: "text_delta", text: "Hello" },
      { type: "text_delta", text: " wor" },
      { type: "error", code: "network_error", message: "the connection to the provider broke: Network connection lost." },
    ]);
    expect(calls).toHaveLength(1);
  });

  it("keeps an answer whose finish reason came before the connection broke (a proxy cutting a finished stream, hunt 62)", async () => {
    const whole = sse([chunk({ content: "Hello" }), chunk({}, "stop"), usageChunk(3, 1)]);
    const { client, calls } = testClient([sseResponse(bodyOf([whole], { errorAfter: new Error("Network connection lost.") }))]);
    expect(await run(client)).toEqual([
      { type: "text_delta", text: "Hello" },
      { type: "done", stopReason: "STOP", usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 } },
    ]);
    expect(calls).toHaveLength(1);
  });

  it("ends with provider_error when DeepSeek cuts the answer short (finish_reason insufficient_system_resource, hunt 62)", async () => {
    const { client } = testClient([
      sseResponse(sse([chunk({ content: "The server listens on port" }), chunk({}, "insufficient_system_resource")])),
    ]);
    expect(await run(client)).toEqual([
      { type: "text_delta", text: "The server listens on port" },
      {
        type: "error",
        code: "provider_error",
        message: "the provider cut the answer short: finish_reason 'insufficient_system_resource' (it ran out of capacity)",
      },
    ]);
  });

  it("waits for a provider's response headers as long as the run has left, not a fixed 120 s (hunt 62)", async () => {
    // A server that sends nothing until the request is given up (Ollama loading a model): the wait ends with the run's deadline.
    const silent = (init: RequestInit | undefined) =>
      new Promise<Response>((_resolve, reject) =>
        init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))),
      );
    const { client, calls } = testClient([silent, silent, silent]);
    const request = { ...EMPTY_REQUEST, deadlineAt: Date.now() + 300 };
    const events = await collect(client.stream(request, new AbortController().signal));
    expect(events.at(-1)).toMatchObject({ type: "error", code: "network_error" });
    expect(calls).toHaveLength(1);
  });

  it("ends with provider_error when a chunk is not JSON", async () => {
    const { client } = testClient([sseResponse(`${sse([chunk({ content: "a" })], { done: false })}data: {not json\n\n`)]);
    const events = await run(client);
    expect(events.map((e) => e.type)).toEqual(["text_delta", "error"]);
    expect(events[1]).toMatchObject({
      code: "provider_error",
      message: expect.stringMatching(/^the provider sent a stream chunk that is not JSON/),
    });
  });
});

describe("OpenAIModelClient abort", () => {
  it("ends with aborted when aborted mid-stream, even if the transport ignores the signal", async () => {
    const controller = new AbortController();
    const { client, calls } = testClient([sseResponse(bodyOf([sse([chunk({ content: "first" })], { done: false })], { hang: true }))]);
    const events: ModelEvent[] = [];
    for await (const event of client.stream(EMPTY_REQUEST, controller.signal)) {
      events.push(event);
      if (event.type === "text_delta") controller.abort();
    }
    expect(events).toEqual([
      { type: "text_delta", text: "first" },
      { type: "error", code: "aborted", message: "the model request was aborted" },
    ]);
    expect(calls[0]!.signal?.aborted).toBe(true);
  });

  it("ends with aborted when the fetch honours the signal and the body errors with AbortError", async () => {
    const controller = new AbortController();
    const answer = (init: RequestInit | undefined) => {
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode(sse([chunk({ content: "x" })], { done: false })));
          init?.signal?.addEventListener("abort", () => c.error(new DOMException("The operation was aborted", "AbortError")));
        },
      });
      return sseResponse(body);
    };
    const { client } = testClient([answer]);
    const events: ModelEvent[] = [];
    for await (const event of client.stream(EMPTY_REQUEST, controller.signal)) {
      events.push(event);
      if (event.type === "text_delta") controller.abort();
    }
    expect(events.map((e) => (e.type === "error" ? e.code : e.type))).toEqual(["text_delta", "aborted"]);
  });

  it("ends with aborted when aborted while waiting for a response that never comes", async () => {
    const controller = new AbortController();
    const { client, calls } = testClient([() => new Promise<Response>(() => {})]);
    const pending = run(client, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect(await pending).toEqual([{ type: "error", code: "aborted", message: "the model request was aborted" }]);
    expect(calls).toHaveLength(1);
  });

  it("ends with aborted when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const { client } = testClient([sseResponse(okBody())]);
    expect(await run(client, controller.signal)).toEqual([{ type: "error", code: "aborted", message: "the model request was aborted" }]);
  });

  it("ends with aborted when aborted while waiting to retry", async () => {
    const controller = new AbortController();
    const { fetch } = { fetch: async () => rateLimited({ "retry-after": "5" }) };
    const slept: number[] = [];
    const client = new OpenAIModelClient({
      apiKey: API_KEY,
      baseURL: BASE_URL,
      model: "m",
      fetch,
      sleep: async (ms) => {
        slept.push(ms);
        controller.abort();
      },
    });
    expect(await run(client, controller.signal)).toEqual([{ type: "error", code: "aborted", message: "the model request was aborted" }]);
    expect(slept).toEqual([5000]);
  });

  it("cancels the HTTP request when the consumer stops reading early", async () => {
    const { client, calls } = testClient([sseResponse(bodyOf([sse([chunk({ content: "a" })], { done: false })], { hang: true }))]);
    for await (const event of client.stream(EMPTY_REQUEST, new AbortController().signal)) {
      expect(event).toEqual({ type: "text_delta", text: "a" });
      break;
    }
    expect(calls[0]!.signal?.aborted).toBe(true);
  });
});

describe("OpenAIModelClient request", () => {
  const history: AgentMessage[] = [
    { kind: "user", id: "m_1", sessionId: "s_1", parentId: null, createdAt: "2026-11-30T00:00:00.000Z", text: "list src" },
    {
      kind: "assistant",
      id: "m_2",
      sessionId: "s_1",
      parentId: "m_1",
      createdAt: "2026-11-30T00:00:01.000Z",
      text: "",
      stopReason: "TOOL_CALLS",
      toolCalls: [{ id: "call_xyz", name: "ls", arguments: { path: "src" } }],
    },
    {
      kind: "tool_result",
      id: "m_3",
      sessionId: "s_1",
      parentId: "m_2",
      createdAt: "2026-11-30T00:00:02.000Z",
      toolCallId: "call_xyz",
      toolName: "ls",
      resultText: "a.ts",
      error: false,
    },
  ];
  const tools = [
    { name: "ls", description: "List a directory.", parameters: { type: "object", properties: { path: { type: "string" } } } },
  ];

  it("posts the converted history, tools, model override and include_usage to <baseURL>/chat/completions with the key", async () => {
    const { client, calls } = testClient([sseResponse(sse([chunk({ content: "done" }, "stop"), usageChunk(3, 1)]))]);
    const events = await collect(
      client.stream({ model: "override-model", system: "Be brief.", messages: history, tools }, new AbortController().signal),
    );
    expect(events.at(-1)).toEqual({ type: "done", stopReason: "STOP", usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 } });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe(`${BASE_URL}/chat/completions`);
    expect(calls[0]!.headers.get("authorization")).toBe(`Bearer ${API_KEY}`);
    expect(calls[0]!.body).toEqual({
      model: "override-model",
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "list src" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_xyz", type: "function", function: { name: "ls", arguments: '{"path":"src"}' } }],
        },
        { role: "tool", tool_call_id: "call_xyz", content: "a.ts" },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "ls",
            description: "List a directory.",
            parameters: { type: "object", properties: { path: { type: "string" } } },
          },
        },
      ],
    });
  });

  it("sends tool_choice none with the tools on a turn that may not call them, and never without tools", async () => {
    const { client, calls } = testClient([sseResponse(okBody()), sseResponse(okBody())]);
    await collect(client.stream({ system: "Answer now.", messages: history, tools, toolChoice: "none" }, new AbortController().signal));
    expect(calls[0]!.body.tool_choice).toBe("none");
    expect(calls[0]!.body.tools).toEqual([
      { type: "function", function: { name: "ls", description: "List a directory.", parameters: tools[0]!.parameters } },
    ]);
    await collect(client.stream({ system: "s", messages: [], tools: [], toolChoice: "none" }, new AbortController().signal));
    expect(["tools" in calls[1]!.body, "tool_choice" in calls[1]!.body]).toEqual([false, false]);
  });

  it("uses the configured model and omits tools when none are offered", async () => {
    const { client, calls } = testClient([sseResponse(okBody())]);
    await run(client);
    expect(calls[0]!.body.model).toBe("test-model");
    expect("tools" in calls[0]!.body).toBe(false);
  });
});

describe("OpenAIModelClient: keys cut short, and JSON where a stream was asked for", () => {
  it("redacts the start of a key that the provider's text was clipped inside, and a parser's quote of a key", async () => {
    // A key without the sk- prefix, echoed where the 500-character clip cuts it.
    const key = "gsk_hunt9SECRETabcdef0123456789XYZ";
    const echo = `${"x".repeat(470)} invalid api key: ${key}`;
    const { client } = testClient([jsonResponse(401, { error: { message: echo } })], { apiKey: key });
    const [event] = await run(client);
    expect(event).toMatchObject({ type: "error", code: "auth_failed" });
    const message = (event as { message: string }).message;
    expect(message).toBe(
      `the provider answered HTTP 401: ${"x".repeat(470)} invalid api key: [redacted]… (check OPENAI_API_KEY and OPENAI_BASE_URL)`,
    );
    // A line that is the key: V8's SyntaxError quotes its first characters.
    const second = testClient([sseResponse(`data: ${key}\n\n`)], { apiKey: key, retry: { maxAttempts: 1 } });
    const [error] = await run(second.client);
    expect(error).toMatchObject({ type: "error", code: "provider_error" });
    expect((error as { message: string }).message).not.toMatch(/gsk_h|hunt9|SECRET/);
    expect((error as { message: string }).message).toContain("[redacted]");
  });

  it("redacts a key echoed upper-cased or in base64 (a Basic header), whatever its alignment", async () => {
    const key = "gsk_hunt10SECRETabcdef0123456789";
    for (const [echo, left] of [
      [`bad key ${key.toUpperCase()}`, "bad key [redacted]"],
      [`Authorization: Basic ${btoa(`user:${key}`)}`, "Authorization: Basic "],
      [`got ${btoa(`ab:${key}`)} and ${btoa(`x:${key}`)}`, "got "],
    ] as const) {
      const { client } = testClient([jsonResponse(400, { error: { message: echo } })], { apiKey: key });
      const [event] = await run(client);
      const message = (event as { message: string }).message;
      expect(message.startsWith(`the provider answered HTTP 400: ${left}`), message).toBe(true);
      for (const form of [
        key,
        key.toUpperCase(),
        btoa(`user:${key}`).slice(8, -4),
        btoa(`ab:${key}`).slice(4, -4),
        btoa(`x:${key}`).slice(4, -4),
      ])
        expect(message, form).not.toContain(form.slice(4, 12));
    }
  });

  it("takes a whole completion sent as JSON to a streaming request as its one chunk", async () => {
    const completion = {
      id: "chatcmpl-9",
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "the full answer",
            tool_calls: [
              { id: "call_a", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' } },
              { id: "call_b", type: "function", function: { name: "ls", arguments: "{}" } },
            ],
          },
          finish_reason: "tool_calls",
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
    };
    const { client } = testClient([jsonResponse(200, completion)]);
    expect(await run(client)).toEqual([
      { type: "text_delta", text: "the full answer" },
      { type: "tool_call", call: { id: "call_a", name: "read", arguments: { path: "a.txt" } } },
      { type: "tool_call", call: { id: "call_b", name: "ls", arguments: {} } },
      { type: "done", stopReason: "TOOL_CALLS", usage: { inputTokens: 12, outputTokens: 7, totalTokens: 19 } },
    ]);
  });

  it("hands on a 200 JSON error as the error it is: the status its code names, else 502 (retried)", async () => {
    const noEndpoints = { error: { message: "No endpoints found that support tool use", code: 404 } };
    const first = testClient([jsonResponse(200, noEndpoints)]);
    expect(await run(first.client)).toEqual([
      { type: "error", code: "bad_request", message: "the provider answered HTTP 404: No endpoints found that support tool use" },
    ]);
    expect(first.calls).toHaveLength(1);
    const second = testClient([jsonResponse(200, { error: { message: "upstream overloaded" } }), sseResponse(okBody())]);
    expect(await run(second.client)).toEqual(OK_EVENTS);
    expect(second.calls).toHaveLength(2);
  });

  it("reads a JSON completion after a byte order mark (hunt 109)", async () => {
    const completion = { choices: [{ index: 0, message: { role: "assistant", content: "after a BOM" }, finish_reason: "stop" }] };
    const body = bodyOf([new Uint8Array([0xef, 0xbb, 0xbf]), JSON.stringify(completion)]);
    const { client } = testClient([new Response(body, { headers: { "content-type": "application/json" } })]);
    expect(await run(client)).toEqual([
      { type: "text_delta", text: "after a BOM" },
      { type: "done", stopReason: "STOP" },
    ]);
  });

  it("reads a JSON completion whose first bytes are whitespace, sent apart", async () => {
    const completion = { choices: [{ index: 0, message: { role: "assistant", content: "late" }, finish_reason: "stop" }] };
    const body = bodyOf(["", " \n", JSON.stringify(completion)]);
    const { client } = testClient([new Response(body, { headers: { "content-type": "application/json; charset=utf-8" } })]);
    expect(await run(client)).toEqual([
      { type: "text_delta", text: "late" },
      { type: "done", stopReason: "STOP" },
    ]);
  });

  it("retries an attempt whose JSON body broke off (a dropped connection), as one whose stream did", async () => {
    const broken = new Response(bodyOf(['{"choices":[{"index":0,"mess'], { errorAfter: new TypeError("terminated") }), {
      headers: { "content-type": "application/json" },
    });
    const { client, calls } = testClient([broken, sseResponse(okBody())]);
    expect(await run(client)).toEqual(OK_EVENTS);
    expect(calls).toHaveLength(2);
  });

  it("leaves the words of a placeholder key alone, and redacts a key start a parser quoted cut short", async () => {
    const placeholder = testClient([jsonResponse(422, { error: { message: "Field required: messages" } })], {
      apiKey: "sk-no-key-required",
    });
    expect(await run(placeholder.client)).toEqual([
      { type: "error", code: "bad_request", message: "the provider answered HTTP 422: Field required: messages" },
    ]);
    const key = "gsk_ab12CD34ef56GH78ij90";
    const quoted = testClient([jsonResponse(400, { error: { message: 'Unexpected token, "gsk_ab"... is not valid JSON' } })], {
      apiKey: key,
    });
    expect(await run(quoted.client)).toEqual([
      {
        type: "error",
        code: "bad_request",
        message: 'the provider answered HTTP 400: Unexpected token, "[redacted]"... is not valid JSON',
      },
    ]);
  });

  it("reads a 200 JSON error sent under the event stream's label as the error it says, once the body ends (stop 52's note)", async () => {
    const sent = (...parts: string[]) => new Response(bodyOf(parts), { headers: { "content-type": "text/event-stream" } });
    // A rate limit: retried, then the answer.
    const limited = testClient([sent('{"error": {"message": "Rate limit reached", ', '"code": 429}}'), sseResponse(okBody())]);
    expect(await run(limited.client)).toEqual(OK_EVENTS);
    expect(limited.calls).toHaveLength(2);
    // Anything else ends the run with the provider's words (a byte order mark and a line end around it).
    const missing = testClient([sent("\ufeff", '{"error":{"message":"model foo not found","code":"model_not_found"}}\n')]);
    expect(await run(missing.client)).toEqual([
      { type: "error", code: "provider_error", message: "the provider sent an error inside the stream: model foo not found" },
    ]);
    expect(missing.calls).toHaveLength(1);
    // Blank lines before or after it, and a code written as digits (LiteLLM, Azure): hunt 116.
    const spaced = testClient([sent("\n\n", '{"error": {"message": "slow down", "code": "429"}}\n\n'), sseResponse(okBody())]);
    expect(await run(spaced.client)).toEqual(OK_EVENTS);
    expect(spaced.calls).toHaveLength(2);
    const busy = testClient([sent('{"error": {"message": "overloaded", "code": "503"}}', "\n\n"), sseResponse(okBody())]);
    expect(await run(busy.client)).toEqual(OK_EVENTS);
    expect(busy.calls).toHaveLength(2);
    // JSON that is no error, or an error object after an event, is not taken for one.
    const other = testClient([sent('{"status": "ok"}')]);
    expect((await run(other.client)).map((e) => e.type === "error" && e.code)).toEqual(["stream_incomplete"]);
    const after = testClient([sent(sse([chunk({ content: "a" })], { done: false }), '{"error": {"message": "late"}}')]);
    expect((await run(after.client)).map((e) => (e.type === "error" ? e.code : e.type))).toEqual(["text_delta", "stream_incomplete"]);
  });

  it("streams an event stream labelled JSON as it comes", async () => {
    const body = bodyOf([sse([chunk({ content: "a" })], { done: false }), sse([chunk({ content: "b" }), chunk({}, "stop")])]);
    const { client } = testClient([new Response(body, { headers: { "content-type": "application/json" } })]);
    expect(await run(client)).toEqual([
      { type: "text_delta", text: "a" },
      { type: "text_delta", text: "b" },
      { type: "done", stopReason: "STOP" },
    ]);
  });
});
