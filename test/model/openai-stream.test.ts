import { describe, expect, it } from "vitest";
import { MAX_IMPORTED_ID_CHARS, MAX_IMPORTED_TOKENS } from "../../src/domain";
import { bodyOf, chunk, play, sse, texts, usageChunk } from "./helpers";

const tc = (fragment: Record<string, unknown>) => chunk({ tool_calls: [fragment] });

describe("OpenAIModelClient stream assembly", () => {
  it("streams text deltas in order and ends with STOP and the usage of the final no-choices chunk", async () => {
    const events = await play(
      sse([
        chunk({ role: "assistant", content: "" }),
        chunk({ content: "Hel" }),
        chunk({ content: "lo" }),
        chunk({}, "stop"),
        usageChunk(12, 2),
      ]),
    );
    expect(events).toEqual([
      { type: "text_delta", text: "Hel" },
      { type: "text_delta", text: "lo" },
      { type: "done", stopReason: "STOP", usage: { inputTokens: 12, outputTokens: 2, totalTokens: 14 } },
    ]);
  });

  it("assembles one tool call whose argument JSON arrives in many fragments, keeping the provider id", async () => {
    const pieces = ['{"pa', 'th":', ' "src/', "a.ts", '", "li', 'mit": 5', "}"];
    const events = await play(
      sse([
        tc({ index: 0, id: "call_abc", type: "function", function: { name: "read", arguments: "" } }),
        ...pieces.map((p) => tc({ index: 0, function: { arguments: p } })),
        chunk({}, "tool_calls"),
      ]),
    );
    expect(events).toEqual([
      { type: "tool_call", call: { id: "call_abc", name: "read", arguments: { path: "src/a.ts", limit: 5 } } },
      { type: "done", stopReason: "TOOL_CALLS" },
    ]);
  });

  it("separates several calls interleaved by index and emits them in index order", async () => {
    const events = await play(
      sse([
        tc({ index: 1, id: "call_B", function: { name: "ls", arguments: '{"pa' } }),
        tc({ index: 0, id: "call_A", function: { name: "read", arguments: '{"path"' } }),
        tc({ index: 1, function: { arguments: 'th":"src"}' } }),
        tc({ index: 0, function: { arguments: ':"x.md"}' } }),
        chunk({}, "tool_calls"),
      ]),
    );
    expect(events).toEqual([
      { type: "tool_call", call: { id: "call_A", name: "read", arguments: { path: "x.md" } } },
      { type: "tool_call", call: { id: "call_B", name: "ls", arguments: { path: "src" } } },
      { type: "done", stopReason: "TOOL_CALLS" },
    ]);
  });

  it("keeps calls without an index apart when each arrives whole (one per chunk and several in one chunk)", async () => {
    const events = await play(
      sse([
        tc({ id: "call_1", function: { name: "read", arguments: '{"path":"a"}' } }),
        chunk({
          tool_calls: [
            { id: "call_2", function: { name: "read", arguments: '{"path":"b"}' } },
            { id: "call_3", function: { name: "grep", arguments: '{"pattern":"x"}' } },
          ],
        }),
        chunk({}, "tool_calls"),
      ]),
    );
    expect(events).toEqual([
      { type: "tool_call", call: { id: "call_1", name: "read", arguments: { path: "a" } } },
      { type: "tool_call", call: { id: "call_2", name: "read", arguments: { path: "b" } } },
      { type: "tool_call", call: { id: "call_3", name: "grep", arguments: { pattern: "x" } } },
      { type: "done", stopReason: "TOOL_CALLS" },
    ]);
  });

  it("keeps calls apart when every call reuses index 0 but has its own id", async () => {
    const events = await play(
      sse([
        tc({ index: 0, id: "call_1", function: { name: "read", arguments: '{"path":"a"}' } }),
        tc({ index: 0, id: "call_2", function: { name: "read", arguments: '{"path":"b"}' } }),
        tc({ index: 0, id: "call_3", function: { name: "ls", arguments: "" } }),
        chunk({}, "tool_calls"),
      ]),
    );
    expect(events).toEqual([
      { type: "tool_call", call: { id: "call_1", name: "read", arguments: { path: "a" } } },
      { type: "tool_call", call: { id: "call_2", name: "read", arguments: { path: "b" } } },
      { type: "tool_call", call: { id: "call_3", name: "ls", arguments: {} } },
      { type: "done", stopReason: "TOOL_CALLS" },
    ]);
  });

  it("keeps whole calls apart under one index with no ids at all, generating tc_ ids", async () => {
    const events = await play(
      sse([
        tc({ index: 0, function: { name: "read", arguments: '{"path":"a"}' } }),
        tc({ index: 0, function: { name: "read", arguments: '{"path":"b"}' } }),
        chunk({}, "tool_calls"),
      ]),
    );
    expect(events).toEqual([
      { type: "tool_call", call: { id: "tc_1", name: "read", arguments: { path: "a" } } },
      { type: "tool_call", call: { id: "tc_2", name: "read", arguments: { path: "b" } } },
      { type: "done", stopReason: "TOOL_CALLS" },
    ]);
  });

  it("does not append or overwrite when id and name are repeated (or empty) in later fragments", async () => {
    const events = await play(
      sse([
        tc({ index: 0, id: "", function: { name: "edit", arguments: "" } }),
        tc({ index: 0, id: "call_late", function: { name: "edit", arguments: '{"path":' } }),
        tc({ index: 0, id: "call_late", function: { name: "edit", arguments: '"a.ts"}' } }),
        tc({ index: 0, id: "", function: { name: "", arguments: "" } }),
        chunk({}, "tool_calls"),
      ]),
    );
    expect(events).toEqual([
      { type: "tool_call", call: { id: "call_late", name: "edit", arguments: { path: "a.ts" } } },
      { type: "done", stopReason: "TOOL_CALLS" },
    ]);
  });

  it("reads arguments that are an empty string or never sent as {}", async () => {
    const events = await play(
      sse([
        tc({ index: 0, id: "call_empty", function: { name: "ls", arguments: "" } }),
        tc({ index: 1, id: "call_absent", function: { name: "find" } }),
        chunk({}, "tool_calls"),
      ]),
    );
    expect(events).toEqual([
      { type: "tool_call", call: { id: "call_empty", name: "ls", arguments: {} } },
      { type: "tool_call", call: { id: "call_absent", name: "find", arguments: {} } },
      { type: "done", stopReason: "TOOL_CALLS" },
    ]);
  });

  it("accepts arguments sent as an already-parsed object", async () => {
    const events = await play(
      sse([tc({ index: 0, id: "call_obj", function: { name: "read", arguments: { path: "a" } } }), chunk({}, "tool_calls")]),
    );
    expect(events).toEqual([
      { type: "tool_call", call: { id: "call_obj", name: "read", arguments: { path: "a" } } },
      { type: "done", stopReason: "TOOL_CALLS" },
    ]);
  });

  it("ignores chunks with empty choices, without a delta, or with content null", async () => {
    const events = await play(
      sse([
        { id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [] },
        chunk(undefined),
        chunk({ content: null }),
        chunk({ content: "ok" }),
        chunk({ content: null }, "stop"),
      ]),
    );
    expect(events).toEqual([
      { type: "text_delta", text: "ok" },
      { type: "done", stopReason: "STOP" },
    ]);
  });

  it("skips SSE comment and keepalive lines", async () => {
    const body = `: OPENROUTER PROCESSING\n\n${sse([chunk({ content: "a" })], { done: false })}:keepalive\n\n: ping\n\n${sse([chunk({ content: "b" }, "stop")])}`;
    const events = await play(body);
    expect(events).toEqual([
      { type: "text_delta", text: "a" },
      { type: "text_delta", text: "b" },
      { type: "done", stopReason: "STOP" },
    ]);
  });

  it("takes usage sent inside the finish chunk", async () => {
    const events = await play(
      sse([chunk({ content: "x" }), chunk({}, "stop", { usage: { prompt_tokens: 7, completion_tokens: 1, total_tokens: 8 } })]),
    );
    expect(events.at(-1)).toEqual({ type: "done", stopReason: "STOP", usage: { inputTokens: 7, outputTokens: 1, totalTokens: 8 } });
  });

  it("takes usage sent inside the choice, and computes a missing total", async () => {
    const finish = chunk({}, "stop");
    (finish.choices[0] as Record<string, unknown>).usage = { prompt_tokens: 5, completion_tokens: 3 };
    const events = await play(sse([chunk({ content: "x" }), finish]));
    expect(events.at(-1)).toEqual({ type: "done", stopReason: "STOP", usage: { inputTokens: 5, outputTokens: 3, totalTokens: 8 } });
  });

  it("keeps reasoning text (reasoning_content / reasoning / reasoning_text) out of the answer text", async () => {
    const events = await play(
      sse([
        chunk({ reasoning_content: "think 1. " }),
        chunk({ reasoning: "think 2. " }),
        chunk({ reasoning_text: "think 3." }),
        chunk({ content: "Answer." }),
        chunk({}, "stop"),
      ]),
    );
    expect(events).toEqual([
      { type: "reasoning_delta", text: "think 1. " },
      { type: "reasoning_delta", text: "think 2. " },
      { type: "reasoning_delta", text: "think 3." },
      { type: "text_delta", text: "Answer." },
      { type: "done", stopReason: "STOP", thinkingField: "reasoning_content" },
    ]);
  });

  it("reports TOOL_CALLS when tools were called although finish_reason says stop", async () => {
    const events = await play(
      sse([
        chunk({ content: "Let me look." }),
        tc({ index: 0, id: "call_1", function: { name: "ls", arguments: "{}" } }),
        chunk({}, "stop"),
      ]),
    );
    expect(events).toEqual([
      { type: "text_delta", text: "Let me look." },
      { type: "tool_call", call: { id: "call_1", name: "ls", arguments: {} } },
      { type: "done", stopReason: "TOOL_CALLS" },
    ]);
  });

  it("reads unusual normal finish reasons such as eos as STOP", async () => {
    expect((await play(sse([chunk({ content: "x" }), chunk({}, "eos")]))).at(-1)).toEqual({ type: "done", stopReason: "STOP" });
  });

  it("reports STOP when finish_reason says tool_calls but no call arrived", async () => {
    expect((await play(sse([chunk({ content: "x" }), chunk({}, "tool_calls")]))).at(-1)).toEqual({ type: "done", stopReason: "STOP" });
  });

  it("maps finish_reason length to LENGTH", async () => {
    expect((await play(sse([chunk({ content: "x" }), chunk({}, "length")]))).at(-1)).toEqual({ type: "done", stopReason: "LENGTH" });
  });

  it("maps finish_reason content_filter to a content_filtered error", async () => {
    expect((await play(sse([chunk({ content: "x" }), chunk({}, "content_filter")]))).at(-1)).toEqual({
      type: "error",
      code: "content_filtered",
      message: "the provider stopped the answer with finish_reason 'content_filter'",
    });
  });

  it("decodes multi-byte UTF-8 characters split across network chunks", async () => {
    const bytes = new TextEncoder().encode(sse([chunk({ content: "한글 🙂 ok" }), chunk({}, "stop")]));
    const hangul = bytes.indexOf(0xed); // first byte of '한' (ED 95 9C)
    const emoji = bytes.indexOf(0xf0); // first byte of the 4-byte emoji
    const parts = [
      bytes.slice(0, hangul + 1),
      bytes.slice(hangul + 1, emoji + 2),
      bytes.slice(emoji + 2, emoji + 3),
      bytes.slice(emoji + 3),
    ];
    const events = await play(bodyOf(parts));
    expect(texts(events)).toEqual(["한글 🙂 ok"]);
    expect(events.at(-1)).toEqual({ type: "done", stopReason: "STOP" });
  });

  it("accepts CRLF line endings", async () => {
    const body = sse([chunk({ content: "a" }), chunk({}, "stop")]).replaceAll("\n", "\r\n");
    expect(await play(body)).toEqual([
      { type: "text_delta", text: "a" },
      { type: "done", stopReason: "STOP" },
    ]);
  });

  it("ends with provider_error when an error object arrives inside an HTTP 200 stream, after the text so far", async () => {
    const events = await play(
      sse([
        chunk({ content: "par" }),
        { error: { message: "upstream model crashed", type: "server_error", code: null } },
        chunk({ content: "never" }, "stop"),
      ]),
    );
    expect(events).toEqual([
      { type: "text_delta", text: "par" },
      { type: "error", code: "provider_error", message: "the provider sent an error inside the stream: upstream model crashed" },
    ]);
  });

  it("recognises a bare vLLM-style error object mid-stream", async () => {
    const events = await play(
      sse([chunk({ content: "a" }), { object: "error", message: "bad things", type: "BadRequestError", code: 400 }]),
    );
    expect(events).toEqual([
      { type: "text_delta", text: "a" },
      { type: "error", code: "provider_error", message: "the provider sent an error inside the stream: bad things" },
    ]);
  });

  it("fails with stream_incomplete when the stream ends without a finish reason", async () => {
    const events = await play(sse([chunk({ content: "half an ans" })], { done: false }));
    expect(events).toEqual([
      { type: "text_delta", text: "half an ans" },
      {
        type: "error",
        code: "stream_incomplete",
        message: "the provider's stream ended without a finish reason (after 11 characters of text and 0 tool call(s))",
      },
    ]);
  });

  it("fails with stream_incomplete on [DONE] without a finish reason, and does not deliver half-built calls", async () => {
    const events = await play(sse([tc({ index: 0, id: "call_1", function: { name: "read", arguments: '{"pa' } })]));
    expect(events).toEqual([
      {
        type: "error",
        code: "stream_incomplete",
        message: "the provider's stream ended without a finish reason (after 0 characters of text and 1 tool call(s))",
      },
    ]);
  });

  it("delivers a call with unparseable arguments as {} plus an invalid_arguments flag and the raw text", async () => {
    const events = await play(
      sse([tc({ index: 0, id: "call_bad", function: { name: "read", arguments: '{"path": "a"' } }), chunk({}, "length")]),
    );
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({
      type: "tool_call",
      call: { id: "call_bad", name: "read", arguments: {} },
      invalid: { code: "invalid_arguments", rawArguments: '{"path": "a"' },
    });
    // The model sees its call again with {} for arguments: the error quotes what it sent.
    expect(events[0]!.type === "tool_call" && events[0]!.invalid?.message).toBe(
      `tool call arguments are not valid JSON. The parser said: ${jsonError('{"path": "a"')}; they were "{\\"path\\": \\"a\\""`,
    );
    expect(events[1]).toEqual({ type: "done", stopReason: "TOOL_CALLS" });
  });

  it("delivers a call whose arguments nest deeper than 64 levels as {} plus invalid_arguments (hunt 70: 20,000 levels overflowed the log's writer)", async () => {
    const raw = `{"path":"a.txt","x":${"[".repeat(20_000)}${"]".repeat(20_000)}}`;
    const events = await play(
      sse([tc({ index: 0, id: "call_deep", function: { name: "read", arguments: raw } }), chunk({}, "tool_calls")]),
    );
    expect(events[0]).toEqual({
      type: "tool_call",
      call: { id: "call_deep", name: "read", arguments: {} },
      invalid: {
        code: "invalid_arguments",
        message: `tool call arguments nest arrays and objects deeper than 64 levels; they were ${JSON.stringify(raw.slice(0, 200))} (first 200 of ${raw.length} characters)`,
        rawArguments: raw,
      },
    });
    // 64 levels still parse.
    const ok = `{"x":${"[".repeat(63)}${"]".repeat(63)}}`;
    const fine = await play(sse([tc({ index: 0, id: "call_ok", function: { name: "read", arguments: ok } }), chunk({}, "tool_calls")]));
    expect(fine[0]).toEqual({ type: "tool_call", call: { id: "call_ok", name: "read", arguments: JSON.parse(ok) } });
  });

  it("quotes only the first 200 characters of long unparseable arguments", async () => {
    const raw = `{"content": "${"x".repeat(300)}`;
    const events = await play(sse([tc({ index: 0, id: "call_long", function: { name: "write", arguments: raw } }), chunk({}, "length")]));
    expect(events[0]!.type === "tool_call" && events[0]!.invalid?.message).toBe(
      `tool call arguments are not valid JSON. The parser said: ${jsonError(raw)}; they were ${JSON.stringify(raw.slice(0, 200))} (first 200 of 313 characters)`,
    );
  });

  it("delivers a call whose arguments are JSON but not an object as {} plus invalid_arguments", async () => {
    const events = await play(
      sse([tc({ index: 0, id: "call_arr", function: { name: "read", arguments: '["a"]' } }), chunk({}, "tool_calls")]),
    );
    expect(events[0]).toEqual({
      type: "tool_call",
      call: { id: "call_arr", name: "read", arguments: {} },
      invalid: { code: "invalid_arguments", message: "tool call arguments must be a JSON object, got an array", rawArguments: '["a"]' },
    });
  });

  it("generates tc_ ids for calls without one and for a repeated provider id", async () => {
    const events = await play(
      sse([
        tc({ index: 0, function: { name: "ls", arguments: "{}" } }),
        tc({ index: 1, id: "call_same", function: { name: "ls", arguments: "{}" } }),
        tc({ index: 2, id: "call_same", function: { name: "ls", arguments: "{}" } }),
        chunk({}, "tool_calls"),
      ]),
    );
    expect(events.flatMap((e) => (e.type === "tool_call" ? [e.call.id] : []))).toEqual(["tc_1", "call_same", "tc_2"]);
  });

  it("treats an id or a name of only spaces as missing (a tc_ id; missing_tool_name), never as the call's own", async () => {
    const events = await play(
      sse([
        tc({ index: 0, id: "  ", function: { name: "ls", arguments: "{}" } }),
        tc({ index: 1, id: "call_b", function: { name: " ", arguments: '{"path":"a"}' } }),
        chunk({}, "tool_calls"),
      ]),
    );
    expect(events).toEqual([
      { type: "tool_call", call: { id: "tc_1", name: "ls", arguments: {} } },
      {
        type: "tool_call",
        call: { id: "call_b", name: "unknown_tool", arguments: { path: "a" } },
        invalid: { code: "missing_tool_name", message: "the model sent a tool call without a function name", rawArguments: '{"path":"a"}' },
      },
      { type: "done", stopReason: "TOOL_CALLS" },
    ]);
  });

  it("gives a call whose id is longer than an import takes (MAX_IMPORTED_ID_CHARS) a tc_ id, and caps token counts", async () => {
    const long = `call_${"x".repeat(MAX_IMPORTED_ID_CHARS - 4)}`;
    const fits = `call_${"y".repeat(MAX_IMPORTED_ID_CHARS - 5)}`;
    const events = await play(
      sse([
        tc({ index: 0, id: long, function: { name: "ls", arguments: "{}" } }),
        tc({ index: 1, id: fits, function: { name: "ls", arguments: "{}" } }),
        chunk({}, "tool_calls"),
        usageChunk(5e9, 7),
      ]),
    );
    expect(fits.length).toBe(MAX_IMPORTED_ID_CHARS);
    expect(events).toEqual([
      { type: "tool_call", call: { id: "tc_1", name: "ls", arguments: {} } },
      { type: "tool_call", call: { id: fits, name: "ls", arguments: {} } },
      {
        type: "done",
        stopReason: "TOOL_CALLS",
        usage: { inputTokens: MAX_IMPORTED_TOKENS, outputTokens: 7, totalTokens: MAX_IMPORTED_TOKENS },
      },
    ]);
  });

  it("takes a whole call sent again without its id once, and a name streamed in pieces as one call", async () => {
    const events = await play(
      sse([
        tc({ index: 0, id: "call_r", function: { name: "read", arguments: '{"path":"a"}' } }),
        tc({ index: 0, function: { name: "read", arguments: '{"path":"a"}' } }),
        tc({ index: 1, id: "call_l", function: { name: "l" } }),
        tc({ index: 1, function: { name: "s", arguments: "{}" } }),
        chunk({}, "tool_calls"),
        chunk(undefined, null, { usage: { prompt_tokens: 5e9, completion_tokens: 7 } }),
      ]),
    );
    expect(events).toEqual([
      { type: "tool_call", call: { id: "call_r", name: "read", arguments: { path: "a" } } },
      // A name in pieces is put together (hunt 62), and it stays one call.
      { type: "tool_call", call: { id: "call_l", name: "ls", arguments: {} } },
      {
        type: "done",
        stopReason: "TOOL_CALLS",
        usage: { inputTokens: MAX_IMPORTED_TOKENS, outputTokens: 7, totalTokens: MAX_IMPORTED_TOKENS },
      },
    ]);
  });

  it("puts a name streamed in pieces together, or takes the whole name a server resends so far (hunt 62)", async () => {
    const events = await play(
      sse([
        tc({ index: 0, id: "call_split", function: { name: "re" } }),
        tc({ index: 0, function: { name: "ad" } }),
        tc({ index: 0, function: { arguments: '{"path":' } }),
        tc({ index: 0, function: { name: "read", arguments: '"a"}' } }),
        tc({ index: 1, id: "call_grow", function: { name: "fi" } }),
        tc({ index: 1, function: { name: "find", arguments: '{"pattern":"*.ts"}' } }),
        chunk({}, "tool_calls"),
      ]),
    );
    expect(events).toEqual([
      { type: "tool_call", call: { id: "call_split", name: "read", arguments: { path: "a" } } },
      { type: "tool_call", call: { id: "call_grow", name: "find", arguments: { pattern: "*.ts" } } },
      { type: "done", stopReason: "TOOL_CALLS" },
    ]);
  });

  it("keeps a call's extra_content (Gemini's thought signature) and notes reasoning sent in reasoning_content (hunt 62)", async () => {
    const signature = { google: { thought_signature: "c2lnbmF0dXJl" } };
    const events = await play(
      sse([
        chunk({ role: "assistant", content: null, reasoning_content: "Look at the config." }),
        chunk({ content: null, reasoning_content: null }),
        tc({
          index: 0,
          id: "function-call-1",
          type: "function",
          function: { name: "read", arguments: '{"path":"a"}' },
          extra_content: signature,
        }),
        tc({ index: 0, extra_content: { google: { thought_signature: "other" } } }),
        chunk({}, "tool_calls"),
      ]),
    );
    expect(events).toEqual([
      { type: "reasoning_delta", text: "Look at the config." },
      { type: "tool_call", call: { id: "function-call-1", name: "read", arguments: { path: "a" }, extraContent: signature } },
      { type: "done", stopReason: "TOOL_CALLS", thinkingField: "reasoning_content" },
    ]);
    // `reasoning` (OpenRouter, Groq) is kept as thinking, but is not sent back: no thinkingField.
    const other = await play(sse([chunk({ reasoning: "hmm" }), chunk({ content: "ok" }), chunk({}, "stop")]));
    expect(other.at(-1)).toEqual({ type: "done", stopReason: "STOP" });
  });

  it("streams OpenAI's refusal as the answer's text", async () => {
    const events = await play(
      sse([chunk({ role: "assistant", refusal: "I can't " }), chunk({ refusal: "help with that." }), chunk({}, "stop")]),
    );
    expect(events).toEqual([
      { type: "text_delta", text: "I can't " },
      { type: "text_delta", text: "help with that." },
      { type: "done", stopReason: "STOP" },
    ]);
  });

  it("starts a new call under one index for another name without arguments, and drops a whole call sent again", async () => {
    const events = await play(
      sse([
        tc({ index: 0, function: { name: "read", arguments: '{"path":"a.txt"}' } }),
        tc({ index: 0, function: { name: "ls" } }),
        tc({ index: 1, id: "call_f", function: { name: "find", arguments: '{"pattern":"*.ts"}' } }),
        // The same call once more, whole (an aggregate chunk at the end).
        tc({ index: 1, id: "call_f", function: { name: "find", arguments: '{"pattern":"*.ts"}' } }),
        chunk({}, "tool_calls"),
      ]),
    );
    expect(events).toEqual([
      { type: "tool_call", call: { id: "tc_1", name: "read", arguments: { path: "a.txt" } } },
      { type: "tool_call", call: { id: "tc_2", name: "ls", arguments: {} } },
      { type: "tool_call", call: { id: "call_f", name: "find", arguments: { pattern: "*.ts" } } },
      { type: "done", stopReason: "TOOL_CALLS" },
    ]);
  });

  it("reads only choice 0 when a server sends several choices", async () => {
    const twoChoices = {
      ...chunk({ content: "zero" }),
      choices: [
        { index: 1, delta: { content: "one" }, finish_reason: null },
        { index: 0, delta: { content: "zero" }, finish_reason: null },
      ],
    };
    expect(texts(await play(sse([twoChoices, chunk({}, "stop")])))).toEqual(["zero"]);
  });
});

/** V8's own message for `raw`, so the tests do not depend on its wording. */
function jsonError(raw: string): string {
  try {
    JSON.parse(raw);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`${raw} parsed`);
}
