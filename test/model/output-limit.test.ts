import { describe, expect, it } from "vitest";
import { counterIds } from "../../src/domain";
import { MAX_MODEL_OUTPUT_CHARS, MAX_PROVIDER_EVENT_BYTES } from "../../src/domain/limits";
import { ChatChunkAccumulator, ProviderStreamError } from "../../src/model";
import { chunk, collect, EMPTY_REQUEST, testClient } from "./helpers";

const MiB = 1024 * 1024;

function failureOf(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ProviderStreamError);
    return (err as ProviderStreamError).failure;
  }
  throw new Error("expected a ProviderStreamError");
}

describe("the output limit of one answer", () => {
  it("text, tool-call names and arguments count together; the chunk that would pass the limit is refused", () => {
    const acc = new ChatChunkAccumulator(counterIds(), 14);
    expect(acc.push(chunk({ content: "123456" }))).toEqual([{ type: "text_delta", text: "123456" }]);
    // 6 + "write" (5) + "{}" (2) = 13; "abc" would make 16.
    expect(acc.push(chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "write", arguments: "{}" } }] }))).toEqual([]);
    expect(failureOf(() => acc.push(chunk({ tool_calls: [{ index: 0, function: { arguments: "abc" } }] })))).toEqual({
      code: "output_too_large",
      message: "the model's answer passed 14 characters of text, reasoning and tool calls; it was cut there (6 characters of text kept)",
      retryable: false,
    });
  });

  it("reasoning counts like text (40 MB of it once ended in internal_error)", () => {
    const acc = new ChatChunkAccumulator(counterIds(), 10);
    expect(acc.push(chunk({ reasoning_content: "12345678" }))).toEqual([{ type: "reasoning_delta", text: "12345678" }]);
    expect(failureOf(() => acc.push(chunk({ content: "abc" }))).message).toBe(
      "the model's answer passed 10 characters of text, reasoning and tool calls; it was cut there (0 characters of text kept)",
    );
    expect(failureOf(() => new ChatChunkAccumulator(counterIds(), 10).push(chunk({ reasoning: "x".repeat(11) }))).code).toBe(
      "output_too_large",
    );
  });

  it("a tool-call name counts whole, and one over 128 characters is kept cut to 128 (it names no tool)", () => {
    const name = `tool_${"n".repeat(295)}`;
    const tooLong = new ChatChunkAccumulator(counterIds(), 299);
    expect(failureOf(() => tooLong.push(chunk({ tool_calls: [{ index: 0, id: "c1", function: { name, arguments: "{}" } }] }))).code).toBe(
      "output_too_large",
    );
    const acc = new ChatChunkAccumulator(counterIds(), 302);
    expect(acc.push(chunk({ tool_calls: [{ index: 0, id: "c1", function: { name, arguments: "{}" } }] }))).toEqual([]);
    acc.push(chunk({}, "tool_calls"));
    const [call] = acc.finish();
    expect(call).toEqual({ type: "tool_call", call: { id: "c1", name: `${name.slice(0, 128)}…`, arguments: {} } });
  });

  it("an answer of more tool calls than the limit is cut at the first call past it", () => {
    const acc = new ChatChunkAccumulator(counterIds(), 1000, 3);
    acc.push(chunk({ content: "ok" }));
    const call = (index: number) => chunk({ tool_calls: [{ index, id: `c${index}`, function: { name: "ls", arguments: "{}" } }] });
    for (const index of [0, 1, 2]) expect(acc.push(call(index))).toEqual([]);
    // More fragments of a call already begun are not a new call.
    expect(acc.push(chunk({ tool_calls: [{ index: 2, function: { arguments: "" } }] }))).toEqual([]);
    expect(failureOf(() => acc.push(call(3)))).toEqual({
      code: "output_too_large",
      message: "the model's answer held more than 3 tool calls; it was cut there (2 characters of text kept)",
      retryable: false,
    });
  });

  it("empty fragments at new indexes are not calls and do not count toward the limit", () => {
    const acc = new ChatChunkAccumulator(counterIds(), 1000, 2);
    const call = (index: number) => chunk({ tool_calls: [{ index, id: `c${index}`, function: { name: "ls", arguments: "{}" } }] });
    for (const index of [0, 1]) expect(acc.push(call(index))).toEqual([]);
    for (const index of [2, 3, 4, 5])
      expect(acc.push(chunk({ tool_calls: [{ index, type: "function", function: { arguments: "" } }] }))).toEqual([]);
    expect(failureOf(() => acc.push(call(2))).message).toBe(
      "the model's answer held more than 2 tool calls; it was cut there (0 characters of text kept)",
    );
    acc.push(chunk({}, "tool_calls"));
    expect(acc.finish().map((e) => (e.type === "tool_call" ? e.call.id : e.type))).toEqual(["c0", "c1", "done"]);
  });

  it("exactly at the limit is fine", () => {
    const acc = new ChatChunkAccumulator(counterIds(), 10);
    acc.push(chunk({ content: "12345" }));
    expect(acc.push(chunk({ content: "67890" }))).toEqual([{ type: "text_delta", text: "67890" }]);
    expect(failureOf(() => acc.push(chunk({ content: "!" }))).code).toBe("output_too_large");
  });
});

describe("a provider's event past the bound of any answer within the limit (hunts 105 and 108)", () => {
  /**
   * A body of `head`, then 1 MiB reads of `b` (one buffer, enqueued again and again) with no line end,
   * and how many reads were taken: parsing one 40 MB line held the isolate for 20 s.
   */
  function endlessLine(head: string, contentType: string, piece: Uint8Array = new Uint8Array(MiB).fill(0x62)) {
    let reads = 0;
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(reads++ === 0 ? new TextEncoder().encode(head) : piece);
      },
      cancel: () => {
        cancelled = true;
      },
    });
    return { response: new Response(body, { headers: { "content-type": contentType } }), state: () => ({ reads, cancelled }) };
  }
  const expected = {
    type: "error",
    code: "output_too_large",
    message: `the provider sent an event of its answer longer than ${MAX_PROVIDER_EVENT_BYTES} bytes, more than an answer within the output limit takes; it was cut there`,
  };

  it("an event stream's unfinished event is cut once it passes 24 MiB + 64 KiB, before it is parsed, and the body is cancelled", async () => {
    expect(MAX_PROVIDER_EVENT_BYTES).toBe(6 * MAX_MODEL_OUTPUT_CHARS + 64 * 1024);
    const { response, state } = endlessLine('data: {"choices":[{"index":0,"delta":{"content":"', "text/event-stream");
    const { client, calls } = testClient([response]);
    expect(await collect(client.stream(EMPTY_REQUEST, new AbortController().signal))).toEqual([expected]);
    // Not retried: the same answer would come again. Read: the head, the 25 MiB that pass the bound,
    // and one read ahead by the body's queue.
    expect([calls.length, state()]).toEqual([1, { reads: 27, cancelled: true }]);
  });

  it("so is an event of many short lines, none near the bound (hunt 108: 30 MB held the isolate 82 s)", async () => {
    const line = new TextEncoder().encode(`data: ${"b".repeat(MiB - 7)}\n`);
    const { response, state } = endlessLine("data: {}\n", "text/event-stream", line);
    const { client, calls } = testClient([response]);
    expect(await collect(client.stream(EMPTY_REQUEST, new AbortController().signal))).toEqual([expected]);
    expect([calls.length, state()]).toEqual([1, { reads: 27, cancelled: true }]);
  });

  it("so is a JSON answer, and an event stream labelled JSON", async () => {
    for (const [head, reads] of [
      ['{"choices":[{"index":0,"message":{"content":"', 27],
      ['data: {"choices":[{"index":0,"delta":{"content":"', 27],
    ] as const) {
      const { response, state } = endlessLine(head, "application/json");
      const { client, calls } = testClient([response]);
      expect(await collect(client.stream(EMPTY_REQUEST, new AbortController().signal)), head).toEqual([expected]);
      expect([calls.length, state()], head).toEqual([1, { reads, cancelled: true }]);
    }
  });
});
