import { describe, expect, it } from "vitest";
import { counterIds } from "../../src/domain";
import { ChatChunkAccumulator, ProviderStreamError } from "../../src/model";
import { chunk } from "./helpers";

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
