import { describe, expect, it } from "vitest";
import { TOOL_SUMMARY_MAX_CHARS, toolResultSummary } from "../../src/domain";

describe("toolResultSummary", () => {
  it("is the first line of the result", () => {
    expect(toolResultSummary("first\nsecond")).toBe("first");
    expect(toolResultSummary("first\r\nsecond")).toBe("first");
    expect(toolResultSummary("")).toBe("");
  });

  it("cuts a long first line to TOOL_SUMMARY_MAX_CHARS with an ellipsis", () => {
    expect(toolResultSummary("x".repeat(TOOL_SUMMARY_MAX_CHARS))).toBe("x".repeat(TOOL_SUMMARY_MAX_CHARS));
    const cut = toolResultSummary("y".repeat(500));
    expect(cut).toBe(`${"y".repeat(TOOL_SUMMARY_MAX_CHARS - 1)}…`);
    expect(cut.length).toBe(TOOL_SUMMARY_MAX_CHARS);
  });

  it("never splits a surrogate pair", () => {
    const text = `${"a".repeat(TOOL_SUMMARY_MAX_CHARS - 2)}😀😀😀`;
    const cut = toolResultSummary(text);
    expect(cut).toBe(`${"a".repeat(TOOL_SUMMARY_MAX_CHARS - 2)}…`);
    expect(/\p{Cs}/u.test(cut)).toBe(false);
  });
});
