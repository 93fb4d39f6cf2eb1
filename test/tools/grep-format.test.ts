import { describe, expect, it } from "vitest";
import { formatFileMatches } from "../../src/tools/grep-format";
import { LineMatcher, lines } from "../../src/tools/grep-matcher";
import { truncateLine } from "../../src/tools/truncate";
import { searchTextOf } from "../../src/workspace/search/search-text";
import { random, randomFile, randomPattern } from "../workspace/search/helpers";

/** The straightforward way: split every line and test each (how grep printed matches before). */
function reference(path: string, text: string, matcher: LineMatcher, context: number, limit: number, separate: boolean) {
  const all = lines(text);
  const out: string[] = [];
  let remaining = limit;
  let lastPrinted = -1;
  for (let i = 0; i < all.length && remaining > 0; i++) {
    if (!matcher.matches(all[i]!)) continue;
    remaining--;
    const from = Math.max(0, i - context, lastPrinted + 1);
    if (context > 0 && (separate || out.length > 0) && (lastPrinted < 0 || from > lastPrinted + 1)) out.push("--");
    let to = Math.min(all.length - 1, i + context);
    for (let j = from; j <= to; j++) {
      // A later match ends the context, unless the limit prints no more matches (then it is context).
      if (j > i && remaining > 0 && matcher.matches(all[j]!)) {
        to = j - 1;
        break;
      }
      const cut = truncateLine(all[j]!);
      out.push(j === i ? `${path}:${j + 1}: ${cut.text}` : `${path}-${j + 1}- ${cut.text}`);
    }
    lastPrinted = to;
  }
  return { lines: out, matches: limit - remaining };
}

describe("formatFileMatches", () => {
  it("gives the limit's last match its trailing context, later matches in it shown as context, as GNU grep -m", () => {
    const text = "a\nb\nx1\nx2\nx3\nc\nd\n";
    const got = formatFileMatches("f.txt", searchTextOf(new TextEncoder().encode(text)), new LineMatcher("x", {}), {
      context: 2,
      limit: 1,
      separate: false,
    });
    expect(got).toEqual({
      lines: ["f.txt-1- a", "f.txt-2- b", "f.txt:3: x1", "f.txt-4- x2", "f.txt-5- x3"],
      matches: 1,
      matchLines: [2],
      linesCut: false,
    });
    const two = formatFileMatches("f.txt", searchTextOf(new TextEncoder().encode(text)), new LineMatcher("x", {}), {
      context: 1,
      limit: 2,
      separate: false,
    });
    expect(two.lines).toEqual(["f.txt-2- b", "f.txt:3: x1", "f.txt:4: x2", "f.txt-5- x3"]);
  });

  it("leaves out the first `skip` matches, and their lines even as context: the page before showed them", () => {
    const text = searchTextOf(new TextEncoder().encode("a\nx1\nb\nx2\nx3\nc\nd\nx4\ne\n"));
    const page = (skip: number, limit: number) =>
      formatFileMatches("f.txt", text, new LineMatcher("x", {}), { context: 1, limit, separate: false, skip });
    expect(page(0, 2)).toEqual({
      lines: ["f.txt-1- a", "f.txt:2: x1", "f.txt-3- b", "f.txt:4: x2", "f.txt-5- x3"],
      matches: 2,
      matchLines: [1, 3],
      linesCut: false,
    });
    expect(page(2, 2)).toEqual({
      lines: ["f.txt:5: x3", "f.txt-6- c", "f.txt-7- d", "f.txt:8: x4", "f.txt-9- e"],
      matches: 2,
      matchLines: [0, 3],
      linesCut: false,
    });
    expect(page(3, 5).lines).toEqual(["f.txt-7- d", "f.txt:8: x4", "f.txt-9- e"]);
  });

  it("prints like splitting and testing every line, for generated patterns, files, contexts and limits", () => {
    const next = random(11);
    let compared = 0;
    for (let p = 0; p < 1500; p++) {
      const source = randomPattern(next);
      let matcher: LineMatcher;
      try {
        matcher = new LineMatcher(source, { ignoreCase: next() < 0.5 });
      } catch {
        continue;
      }
      const bytes = randomFile(next);
      const text = searchTextOf(bytes);
      const whole = text.pieces.join("");
      const context = Math.floor(next() * 3);
      const limit = 1 + Math.floor(next() * 6);
      const separate = next() < 0.5;
      const got = formatFileMatches("f.txt", text, matcher, { context, limit, separate });
      const expected = reference("f.txt", whole, matcher, context, limit, separate);
      expect({ lines: got.lines, matches: got.matches }, `${source} ${JSON.stringify(whole)}`).toEqual(expected);
      compared++;
    }
    expect(compared).toBeGreaterThan(1000);
  });
});
