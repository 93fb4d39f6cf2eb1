import { describe, expect, it } from "vitest";
import { TOOL_OUTPUT_MAX_BYTES, TOOL_OUTPUT_MAX_LINES } from "../../src/domain/limits";
import { formatSize, linesFrom, occurrences, truncateHead, truncateLine, truncateTail, withNotices } from "../../src/tools/truncate";

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");

describe("truncateHead", () => {
  it("keeps short text whole", () => {
    const r = truncateHead("a\nb");
    expect(r).toMatchObject({ content: "a\nb", truncated: false, truncatedBy: null, totalLines: 2, outputLines: 2 });
  });

  it("stops at 2000 lines", () => {
    expect(TOOL_OUTPUT_MAX_LINES).toBe(2000);
    const r = truncateHead(lines(2001));
    expect(r.truncatedBy).toBe("lines");
    expect(r.outputLines).toBe(2000);
    expect(r.content.endsWith("\nline 2000")).toBe(true);
  });

  it("stops at 50 KB without a partial line", () => {
    expect(TOOL_OUTPUT_MAX_BYTES).toBe(51_200);
    const line = "x".repeat(99); // 100 bytes with its newline
    const r = truncateHead(Array(600).fill(line).join("\n"));
    expect(r.truncatedBy).toBe("bytes");
    expect(r.outputLines).toBe(512); // 512 * 100 - 1 = 51199 bytes fit; the 513th would not
    expect(r.outputBytes).toBe(51_199);
    expect(r.content.split("\n").every((l) => l === line)).toBe(true);
  });

  it("returns nothing when the first line alone is over the byte limit", () => {
    const r = truncateHead(`${"x".repeat(20)}\nshort`, { maxBytes: 10 });
    expect(r).toMatchObject({ content: "", truncated: true, firstLineExceedsLimit: true, outputLines: 0 });
  });

  it("counts bytes of UTF-8, not characters", () => {
    const r = truncateHead("é\né\né", { maxBytes: 5 }); // 2 + 1 + 2 = 5 bytes for two lines
    expect(r.content).toBe("é\né");
  });
});

describe("truncateTail", () => {
  it("keeps the last 2000 lines", () => {
    const r = truncateTail(lines(2500));
    expect(r.outputLines).toBe(2000);
    expect(r.content.startsWith("line 501\n")).toBe(true);
    expect(r.content.endsWith("line 2500")).toBe(true);
  });

  it("cuts a single huge last line to its end", () => {
    const r = truncateTail(`start\n${"a".repeat(10)}${"b".repeat(10)}`, { maxBytes: 10 });
    expect(r).toMatchObject({ content: "b".repeat(10), lastLinePartial: true, truncatedBy: "bytes", outputLines: 1 });
  });

  it("never splits a multi-byte character", () => {
    const r = truncateTail("ééééé", { maxBytes: 5 });
    expect(r.content).toBe("éé");
  });
});

describe("helpers", () => {
  it("truncateLine marks cut lines", () => {
    expect(truncateLine("abcdef", 3)).toEqual({ text: "abc... [truncated]", truncated: true });
    expect(truncateLine("abc", 3)).toEqual({ text: "abc", truncated: false });
    // Never half an emoji (hunt 118: a grep line cut at 500 units ended in a lone surrogate, which the
    // session's own export then failed to import as invalid_text).
    expect(truncateLine("ab😀c", 3)).toEqual({ text: "ab... [truncated]", truncated: true });
    expect(truncateLine("ab😀c", 4)).toEqual({ text: "ab😀... [truncated]", truncated: true });
  });

  it("formatSize uses B, KB and MB", () => {
    expect([formatSize(512), formatSize(51_200), formatSize(1_572_864)]).toEqual(["512B", "50.0KB", "1.5MB"]);
  });

  it("linesFrom does not count a final newline as a line, and cuts out only the lines asked for", () => {
    const all = (text: string) => linesFrom(text, 0, Number.POSITIVE_INFINITY);
    expect(all("a\nb\n")).toEqual({ lines: ["a", "b"], total: 2 });
    expect(all("a\n\n")).toEqual({ lines: ["a", ""], total: 2 });
    expect(all("\n")).toEqual({ lines: [""], total: 1 });
    expect(all("")).toEqual({ lines: [], total: 0 });
    expect(all("a\nb")).toEqual({ lines: ["a", "b"], total: 2 });
    expect(linesFrom("a\nb\nc\nd", 1, 2)).toEqual({ lines: ["b", "c"], total: 4 });
    expect(linesFrom("a\nb\n", 2, 5)).toEqual({ lines: [], total: 2 });
    expect(linesFrom("a\n\n\nd\n", 1, 0)).toEqual({ lines: [], total: 4 });
    // As read shows CRLF: the "\r" of a "\r\n" only; a "\r" that ends the file stays.
    expect(linesFrom("a\r\nb\r\r\n\r\nc\r", 0, 9, { crlfAsLf: true })).toEqual({ lines: ["a", "b\r", "", "c\r"], total: 4 });
    expect(linesFrom("a\r\nb", 0, 9)).toEqual({ lines: ["a\r", "b"], total: 2 });
    expect([occurrences("a\r\n\r\nb\r\n", "\r\n"), occurrences("aaa", "aa"), occurrences("", "\n")]).toEqual([3, 1, 0]);
  });

  it("withNotices joins notices in one bracket after a blank line", () => {
    expect(withNotices("body", ["one", "two"])).toBe("body\n\n[one. two]");
    expect(withNotices("body", [])).toBe("body");
  });
});
