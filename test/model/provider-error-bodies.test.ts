import { describe, expect, it } from "vitest";
import type { ModelEvent } from "../../src/model";
import { bodyOf, chunk, collect, EMPTY_REQUEST, jsonResponse, play, sse, sseResponse, testClient } from "./helpers";

const GEMINI_OVERFLOW = "The input token count (1150112) exceeds the maximum number of tokens allowed (1048576).";
/** Gemini's OpenAI-compatible endpoint wraps its error object in a one-element array. */
const geminiBody = (code: number, message: string, status: string) => [{ error: { code, message, status } }];

/** One request against a provider that answers `response`, without retries. */
async function answeredWith(response: Response): Promise<ModelEvent[]> {
  const { client } = testClient([response], { retry: { maxAttempts: 1 } });
  return collect(client.stream(EMPTY_REQUEST, new AbortController().signal));
}

const textResponse = (status: number, body: string | null, contentType: string) =>
  new Response(body, { status, headers: { "content-type": contentType } });
const AUTH_HINT = "(check OPENAI_API_KEY and OPENAI_BASE_URL)";

describe("error bodies of non-OK HTTP answers", () => {
  it("reads OpenAI's {error: {message, type, code}}", async () => {
    const body = {
      error: { message: "Invalid value for 'temperature': must be at most 2.", type: "invalid_request_error", code: "invalid_value" },
    };
    expect(await answeredWith(jsonResponse(400, body))).toEqual([
      {
        type: "error",
        code: "bad_request",
        message: "the provider answered HTTP 400: Invalid value for 'temperature': must be at most 2.",
      },
    ]);
  });

  it("reads an unwrapped {message}", async () => {
    expect(await answeredWith(jsonResponse(404, { message: "Model 'gpt-9' not found" }))).toEqual([
      { type: "error", code: "bad_request", message: "the provider answered HTTP 404: Model 'gpt-9' not found" },
    ]);
  });

  it("prefers {message} over the HTTP phrase in {error} (NestJS / Fastify)", async () => {
    expect(await answeredWith(jsonResponse(400, { statusCode: 400, error: "Bad Request", message: "model must be a string" }))).toEqual([
      { type: "error", code: "bad_request", message: "the provider answered HTTP 400: model must be a string" },
    ]);
  });

  it("reads a FastAPI {detail: string}", async () => {
    expect(await answeredWith(jsonResponse(401, { detail: "Not authenticated" }))).toEqual([
      { type: "error", code: "auth_failed", message: `the provider answered HTTP 401: Not authenticated ${AUTH_HINT}` },
    ]);
  });

  it("reads a FastAPI validation {detail: [{loc, msg}]} with the field it names", async () => {
    const body = { detail: [{ type: "missing", loc: ["body", "messages", 0, "content"], msg: "Field required", input: {} }] };
    expect(await answeredWith(jsonResponse(422, body))).toEqual([
      { type: "error", code: "bad_request", message: "the provider answered HTTP 422: body.messages.0.content: Field required" },
    ]);
  });

  it("reads Gemini's array [{error}] and maps its token-count message to context_overflow", async () => {
    expect(await answeredWith(jsonResponse(400, geminiBody(400, GEMINI_OVERFLOW, "INVALID_ARGUMENT")))).toEqual([
      {
        type: "error",
        code: "context_overflow",
        message: `the request does not fit the model's context window (HTTP 400: ${GEMINI_OVERFLOW})`,
      },
    ]);
  });

  it("reads Gemini's array [{error}] on a 429", async () => {
    expect(
      await answeredWith(jsonResponse(429, geminiBody(429, "Resource has been exhausted (e.g. check quota).", "RESOURCE_EXHAUSTED"))),
    ).toEqual([
      { type: "error", code: "rate_limited", message: "the provider answered HTTP 429: Resource has been exhausted (e.g. check quota)." },
    ]);
  });

  it("reads {error: 'plain string'} (Ollama)", async () => {
    expect(await answeredWith(jsonResponse(404, { error: 'model "llama9" not found, try pulling it first' }))).toEqual([
      { type: "error", code: "bad_request", message: 'the provider answered HTTP 404: model "llama9" not found, try pulling it first' },
    ]);
  });

  it("reads {errors: [{message}]} (Cloudflare API)", async () => {
    const body = { success: false, errors: [{ code: 10000, message: "Authentication error" }], messages: [], result: null };
    expect(await answeredWith(jsonResponse(403, body))).toEqual([
      { type: "error", code: "auth_failed", message: `the provider answered HTTP 403: Authentication error ${AUTH_HINT}` },
    ]);
  });

  it("keeps a JSON body without any message member verbatim", async () => {
    expect(await answeredWith(jsonResponse(400, { success: false, code: 7 }))).toEqual([
      { type: "error", code: "bad_request", message: 'the provider answered HTTP 400: {"success":false,"code":7}' },
    ]);
  });

  it("reads a plain-text body, whitespace collapsed", async () => {
    const body = "upstream connect error or disconnect/reset before headers.\n  reset reason: connection failure\n";
    expect(await answeredWith(textResponse(503, body, "text/plain"))).toEqual([
      {
        type: "error",
        code: "provider_error",
        message:
          "the provider answered HTTP 503: upstream connect error or disconnect/reset before headers. reset reason: connection failure",
      },
    ]);
  });

  it("reads an nginx HTML error page as its text", async () => {
    const page =
      "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n";
    expect(await answeredWith(textResponse(502, page, "text/html"))).toEqual([
      { type: "error", code: "provider_error", message: "the provider answered HTTP 502: 502 Bad Gateway nginx/1.25.3" },
    ]);
  });

  it("reads a large HTML page as its title and first text, without scripts or styles, clipped", async () => {
    const page = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>llm.example.test | 524: A timeout occurred</title>
      <style>body { font-family: sans-serif }</style><script>window.secretConfig = {"a": 1};</script></head>
      <body><!-- cf error --><h1>A timeout occurred &amp; the origin did not answer</h1>
      <p>Error code 524</p>${"<p>More details about the origin&#39;s timeout.</p>".repeat(40)}</body></html>`;
    const [event] = await answeredWith(textResponse(524, page, "text/html; charset=UTF-8"));
    expect(event).toMatchObject({ type: "error", code: "provider_error" });
    const message = event!.type === "error" ? event!.message : "";
    expect(
      message.startsWith(
        "the provider answered HTTP 524: llm.example.test | 524: A timeout occurred - A timeout occurred & the origin did not answer Error code 524 More details about the origin's timeout.",
      ),
    ).toBe(true);
    expect(message).not.toMatch(/secretConfig|font-family|cf error|<|&amp;/);
    expect(message.length).toBeLessThan(300);
    expect(message.endsWith("…")).toBe(true);
  });

  it("reports an empty or blank body as (no body)", async () => {
    for (const body of [null, " \n\t"]) {
      expect(await answeredWith(textResponse(400, body, "text/plain"))).toEqual([
        { type: "error", code: "bad_request", message: "the provider answered HTTP 400: (no body)" },
      ]);
    }
  });
});

describe("error objects inside an HTTP 200 stream", () => {
  it("reads Gemini's array [{error}] and maps its token-count message to context_overflow", async () => {
    expect(await play(sse([geminiBody(400, GEMINI_OVERFLOW, "INVALID_ARGUMENT")]))).toEqual([
      { type: "error", code: "context_overflow", message: `the request does not fit the model's context window: ${GEMINI_OVERFLOW}` },
    ]);
  });

  it("reads {error: 'plain string'}", async () => {
    expect(await play(sse([chunk({ content: "a" }), { error: "backend went away" }]))).toEqual([
      { type: "text_delta", text: "a" },
      { type: "error", code: "provider_error", message: "the provider sent an error inside the stream: backend went away" },
    ]);
  });

  it("reads {errors: [{message}]}", async () => {
    expect(await play(sse([chunk({ content: "a" }), { errors: [{ code: 3040, message: "Capacity temporarily exceeded" }] }]))).toEqual([
      { type: "text_delta", text: "a" },
      { type: "error", code: "provider_error", message: "the provider sent an error inside the stream: Capacity temporarily exceeded" },
    ]);
  });

  it("counts llama.cpp's error type exceed_context_size_error as context_overflow whatever the message says", async () => {
    expect(
      await play(
        sse([{ error: { code: 400, message: "request (5000 tokens) is too large for slot 0", type: "exceed_context_size_error" } }]),
      ),
    ).toEqual([
      {
        type: "error",
        code: "context_overflow",
        message: "the request does not fit the model's context window: request (5000 tokens) is too large for slot 0",
      },
    ]);
  });
});

describe("llama.cpp's legacy `error:` stream line", () => {
  const LLAMA_OVERFLOW = "the request exceeds the available context size, try increasing it";
  const legacyLine = `error: ${JSON.stringify({ code: 400, message: LLAMA_OVERFLOW, type: "exceed_context_size_error", n_prompt_tokens: 5000, n_ctx: 4096 })}\n\n`;
  const overflow: ModelEvent[] = [
    { type: "error", code: "context_overflow", message: `the request does not fit the model's context window: ${LLAMA_OVERFLOW}` },
  ];

  it("maps an overflow reported on an `error:` line to context_overflow", async () => {
    expect(await play(legacyLine)).toEqual(overflow);
  });

  it("reads the line wherever the network splits it", async () => {
    for (let cut = 1; cut < legacyLine.length; cut++) {
      expect(await play(bodyOf([legacyLine.slice(0, cut), legacyLine.slice(cut)])), `split at ${cut}`).toEqual(overflow);
    }
  });

  it("reports any other `error:` line as a provider_error after the text so far", async () => {
    const body = `${sse([chunk({ content: "par" })], { done: false })}error: {"code":500,"message":"slot 0 crashed","type":"server_error"}\r\n\r\n`;
    const { client, calls } = testClient([sseResponse(body)]);
    expect(await collect(client.stream(EMPTY_REQUEST, new AbortController().signal))).toEqual([
      { type: "text_delta", text: "par" },
      { type: "error", code: "provider_error", message: "the provider sent an error inside the stream: slot 0 crashed" },
    ]);
    expect(calls).toHaveLength(1);
  });

  it("leaves `data:` lines alone, including ones whose text says error:", async () => {
    const body = sse([
      chunk({ content: "error: not a field\n" }),
      chunk({ content: "x\nerror: {}" }),
      { error: { message: "upstream model crashed", type: "server_error" } },
    ]);
    expect(await play(body)).toEqual([
      { type: "text_delta", text: "error: not a field\n" },
      { type: "text_delta", text: "x\nerror: {}" },
      { type: "error", code: "provider_error", message: "the provider sent an error inside the stream: upstream model crashed" },
    ]);
  });
});
