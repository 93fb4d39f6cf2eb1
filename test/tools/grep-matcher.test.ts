import { describe, expect, it } from "vitest";
import { LineMatcher, lines } from "../../src/tools/grep-matcher";
import { decodeText } from "../../src/workspace/text";
import { random, randomFile, randomPattern } from "../workspace/search/helpers";

const count = (pattern: string, text: string, options: { ignoreCase?: boolean; literal?: boolean } = {}) =>
  new LineMatcher(pattern, options).countMatchingLines(text);

describe("LineMatcher.countMatchingLines", () => {
  it("counts lines, not matches", () => {
    expect(count("a", "aaa\nbab\nccc\n")).toBe(2);
    expect(count("x", "")).toBe(0);
    expect(count("x", "x")).toBe(1);
  });

  it("counts a line only when the pattern matches inside it, not across a line break", () => {
    expect(count("a\\s+b", "a\nb\n")).toBe(0);
    expect(count("x[^y]*z", "x\nxz\n")).toBe(1);
    expect(count("c$", "abc\r\nabd\r\n")).toBe(1);
    expect(count("c\\s", "abc\r\nabd\r\n")).toBe(0);
  });

  it("matches ^ and $ at line ends only, whatever else the text holds", () => {
    expect(count("^b", "a\u2028b\nb\n")).toBe(1);
    expect(count("a$", "a\u2028b\na\n")).toBe(1);
    expect(count("^$", "a\n\n\nb\n")).toBe(2);
    expect(count("^", "a\nb\n")).toBe(2);
  });

  it("has no line after a final newline, and sees a last line without one", () => {
    expect(count(".*", "a\nb\n")).toBe(2);
    expect(count(".*", "a\nb")).toBe(2);
    expect(count("$", "\n")).toBe(1);
  });

  it("keeps lookarounds to the line", () => {
    expect(count("b(?!\\n)", "ab\nb\n")).toBe(2);
    expect(count("(?<=a)b", "a\nb\n")).toBe(0);
  });

  it("agrees with testing every line, for 3000 generated patterns over 60 generated files", () => {
    const next = random(7);
    const texts = Array.from({ length: 60 }, () => decodeText(randomFile(next)));
    let compared = 0;
    for (let p = 0; p < 3000; p++) {
      const source = randomPattern(next);
      for (const ignoreCase of [false, true]) {
        let line: RegExp;
        try {
          line = new RegExp(source, ignoreCase ? "i" : "");
        } catch {
          continue;
        }
        const matcher = new LineMatcher(source, { ignoreCase });
        for (const text of texts) {
          const expected = lines(text).filter((l) => line.test(l)).length;
          if (matcher.countMatchingLines(text) !== expected) expect.fail(`${source} (${ignoreCase ? "i" : ""}) on ${JSON.stringify(text)}`);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(300_000);
  });
});
