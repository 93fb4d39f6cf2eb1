import { describe, expect, it } from "vitest";
import { MIN_CONTEXT_WINDOW_TOKENS } from "../../src/domain/limits";
import { costOf, modelSpec, normaliseUsage } from "../../src/model";
import { contextBudget, estimateMessageTokens } from "../../src/runtime/context-window";
import { fitToolResult } from "../../src/runtime/result-budget";
import { grepTool } from "../../src/tools/grep";
import { readTool } from "../../src/tools/read";
import { MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

describe("context windows and budgets", () => {
  it("the window: the prompt's, else MODEL_CONTEXT_WINDOW, else the known-model table, else 32,000", () => {
    expect(modelSpec("gpt-4o-mini").contextWindow).toBe(128_000);
    expect(modelSpec("openai/gpt-4o-mini").contextWindow).toBe(128_000);
    expect(modelSpec("some-local-model").contextWindow).toBe(32_000);
    expect(modelSpec("some-local-model", { configured: "65536" }).contextWindow).toBe(65_536);
    expect(modelSpec("gpt-4o-mini", { configured: "65536", requested: 8_000 }).contextWindow).toBe(8_000);
    // A malformed or out-of-range MODEL_CONTEXT_WINDOW is ignored.
    expect(modelSpec("some-local-model", { configured: "lots" }).contextWindow).toBe(32_000);
    expect(modelSpec("some-local-model", { configured: "10" }).contextWindow).toBe(32_000);
    expect(modelSpec("some-local-model").price).toBeUndefined();
  });

  it("a large window keeps pi's figures; a small one caps reserve and keep at a quarter, a result at a fifth", () => {
    expect(contextBudget(128_000)).toEqual({
      contextWindow: 128_000,
      reserveTokens: 16_384,
      keepRecentTokens: 20_000,
      maxResultTokens: 12_800,
    });
    expect(contextBudget(8_000)).toEqual({ contextWindow: 8_000, reserveTokens: 2_000, keepRecentTokens: 2_000, maxResultTokens: 1_600 });
  });

  it("cost: uncached input, cached input and output at their prices per million", () => {
    const price = { input: 2.5, cachedInput: 1.25, output: 10 };
    expect(costOf({ inputTokens: 1_000_000, outputTokens: 0, totalTokens: 1_000_000 }, price)).toBe(2.5);
    expect(costOf({ inputTokens: 1_000, outputTokens: 100, totalTokens: 1_100, cachedInputTokens: 600 }, price)).toBe(0.00275);
  });
});

describe("estimateMessageTokens", () => {
  it("counts thinking only where it is sent back, and a call's extra_content (hunt 62)", () => {
    const base = {
      kind: "assistant" as const,
      id: "m_1",
      sessionId: "s_1",
      parentId: null,
      createdAt: "2026-12-04T00:00:00.000Z",
      text: "",
    };
    const thinking = "t".repeat(4_000);
    const call = { id: "c1", name: "read", arguments: {} };
    const plain = estimateMessageTokens({ ...base, stopReason: "TOOL_CALLS", toolCalls: [call], thinking });
    const echoed = estimateMessageTokens({
      ...base,
      stopReason: "TOOL_CALLS",
      toolCalls: [call],
      thinking,
      thinkingField: "reasoning_content",
    });
    const answer = estimateMessageTokens({ ...base, stopReason: "STOP", text: "ok", thinking, thinkingField: "reasoning_content" });
    const signed = estimateMessageTokens({
      ...base,
      stopReason: "TOOL_CALLS",
      toolCalls: [{ ...call, extraContent: { sig: "s".repeat(3_990) } }],
    });
    expect([echoed - plain, answer, signed - plain]).toEqual([1_000, 5, 1_000]);
  });
});

describe("usage variants", () => {
  it("OpenAI details, DeepSeek cache hits, Anthropic-style fields", () => {
    expect(
      normaliseUsage({
        prompt_tokens: 100,
        completion_tokens: 20,
        total_tokens: 120,
        prompt_tokens_details: { cached_tokens: 64 },
        completion_tokens_details: { reasoning_tokens: 12 },
      }),
    ).toEqual({ inputTokens: 100, outputTokens: 20, totalTokens: 120, cachedInputTokens: 64, reasoningTokens: 12 });
    expect(normaliseUsage({ prompt_tokens: 100, completion_tokens: 20, prompt_cache_hit_tokens: 30 })).toEqual({
      inputTokens: 100,
      outputTokens: 20,
      totalTokens: 120,
      cachedInputTokens: 30,
    });
    expect(
      normaliseUsage({ input_tokens: 50, output_tokens: 5, cache_read_input_tokens: 40, output_tokens_details: { reasoning_tokens: 2 } }),
    ).toEqual({
      inputTokens: 50,
      outputTokens: 5,
      totalTokens: 55,
      cachedInputTokens: 40,
      reasoningTokens: 2,
    });
    expect(normaliseUsage({ prompt_tokens: 1, completion_tokens: 1 })).toEqual({ inputTokens: 1, outputTokens: 1, totalTokens: 2 });
  });
});

describe("per-result token budget", () => {
  it("read cuts at the run's budget with its own continuation notice", async () => {
    const fs = new MemoryWorkspaceFs({ "wide.txt": `${"w".repeat(99)}\n`.repeat(1000) });
    const out = await readTool.execute({ path: "wide.txt" }, { ...toolContext(fs), maxOutputBytes: 6_400 });
    // 1 KiB of the budget is left for the notice.
    expect(out.text.split("\n\n")[0]?.split("\n")).toHaveLength(53);
    expect(out.text.endsWith("\n\n[Showing lines 1-53 of 1000 (5.3KB limit). Use offset=54 to continue.]")).toBe(true);
  });

  it("a small window still ends a cut result with the tool's own notice, which fits the budget", async () => {
    const fs = new MemoryWorkspaceFs({ "wide.txt": `${"w".repeat(99)}\n`.repeat(1000) });
    const notices: string[] = [];
    for (const window of [MIN_CONTEXT_WINDOW_TOKENS, 2_000, 2_559, 2_560, 4_000]) {
      const budget = contextBudget(window);
      const ctx = { ...toolContext(fs), maxOutputBytes: budget.maxResultTokens * 4 };
      const read = await readTool.execute({ path: "wide.txt" }, ctx);
      const grep = await grepTool.execute(grepTool.parameters.parse({ pattern: "w+" }), ctx);
      // The last guard leaves both as they are: their notices are what the model sees.
      expect(fitToolResult(read.text, budget.maxResultTokens)).toBe(read.text);
      expect(fitToolResult(grep.text, budget.maxResultTokens)).toBe(grep.text);
      notices.push(read.text.split("\n\n").at(-1)!, grep.text.split("\n\n").at(-1)!);
    }
    expect(notices).toEqual([
      "[Showing lines 1-4 of 1000 (400B limit). Use offset=5 to continue.]",
      "[Showing matches 1-3 of 1000 (400B limit). Use offset=4 to continue, or narrow pattern, path or glob]",
      "[Showing lines 1-8 of 1000 (800B limit). Use offset=9 to continue.]",
      "[Showing matches 1-7 of 1000 (800B limit). Use offset=8 to continue, or narrow pattern, path or glob]",
      "[Showing lines 1-10 of 1000 (1022B limit). Use offset=11 to continue.]",
      "[Showing matches 1-9 of 1000 (1022B limit). Use offset=10 to continue, or narrow pattern, path or glob]",
      "[Showing lines 1-10 of 1000 (1.0KB limit). Use offset=11 to continue.]",
      "[Showing matches 1-9 of 1000 (1.0KB limit). Use offset=10 to continue, or narrow pattern, path or glob]",
      "[Showing lines 1-21 of 1000 (2.1KB limit). Use offset=22 to continue.]",
      "[Showing matches 1-19 of 1000 (2.1KB limit). Use offset=20 to continue, or narrow pattern, path or glob]",
    ]);
  });

  it("anything else over the budget is cut head first, with a notice that says how to see the rest", () => {
    expect(fitToolResult("short", 10)).toBe("short");
    const long = Array.from({ length: 500 }, (_, i) => `line ${i}`).join("\n");
    const cut = fitToolResult(long, 100);
    expect(cut.length).toBeLessThanOrEqual(400 + 300);
    expect(cut.startsWith("line 0\nline 1\n")).toBe(true);
    expect(cut).toMatch(/\n\n\[Result cut to .* of .* \(\d+ of 500 lines\) to fit the context budget\. Ask for less at a time/);
    // One line longer than the budget is cut by characters, never inside an emoji.
    const wide = fitToolResult(`${"a".repeat(199)}${"😀".repeat(200)}`, 100);
    expect(wide.split("\n\n")[0]).toBe("a".repeat(199));
  });
});
