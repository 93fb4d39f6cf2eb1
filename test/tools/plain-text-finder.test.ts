import { describe, expect, it } from "vitest";
import { isRareCharacter, plainTextFinder } from "../../src/tools/plain-text-finder";
import { random } from "../workspace/search/helpers";

/** Every answer of the finder from every position, next to indexOf's. */
function answers(text: string, haystack: string): { finder: number[]; indexOf: number[] } {
  const find = plainTextFinder(text);
  const finder: number[] = [];
  const indexOf: number[] = [];
  for (let from = 0; from <= haystack.length + 1; from++) {
    finder.push(find(haystack, from));
    indexOf.push(haystack.indexOf(text, from));
  }
  return { finder, indexOf };
}

describe("plainTextFinder", () => {
  it("finds the first place at or after `from`, as indexOf does", () => {
    const find = plainTextFinder("return");
    const code = "if (x) return y;\n  return z; // returns\nreturn";
    expect(find(code, 0)).toBe(7);
    expect(find(code, 8)).toBe(19);
    expect(find(code, 20)).toBe(32);
    expect(find(code, 33)).toBe(40);
    expect(find(code, 41)).toBe(-1);
    expect(find(code, 1000)).toBe(-1);
    expect(find("", 0)).toBe(-1);
  });

  it("does not answer with a text that starts before `from`, though its rare part comes after it", () => {
    // "urn" is the anchor of "return": it lies after `from` here, the text's start does not.
    expect(plainTextFinder("return")("xreturn", 2)).toBe(-1);
    expect(plainTextFinder("return")("xreturn return", 2)).toBe(8);
  });

  it("checks the whole text at each place its anchor occurs", () => {
    // "p" is the rarest letter of "deprecated"; the anchor "precat" occurs without the text first.
    expect(plainTextFinder("deprecated")("unprecatedly; deprecated", 0)).toBe(14);
    // Anchors that overlap each other and the text's repeats.
    expect(answers("aab", "aaaab aab ab aaab")).toEqual({
      finder: [2, 2, 2, 6, 6, 6, 6, 14, 14, 14, 14, 14, 14, 14, 14, -1, -1, -1, -1],
      indexOf: [2, 2, 2, 6, 6, 6, 6, 14, 14, 14, 14, 14, 14, 14, 14, -1, -1, -1, -1],
    });
  });

  it("takes texts of any length and characters: one character, non-ASCII, surrogate pairs, control characters", () => {
    for (const [text, haystack] of [
      ["x", "abxcx"],
      ["é", "café, née"],
      ["😀a", "a😀b😀a😀"],
      ["a\tb", "a b\ta\tb"],
      ["~~", "~~~"],
      ["node_modules/x", "./node_modules/y node_modules/x"],
    ]) {
      const { finder, indexOf } = answers(text!, haystack!);
      expect(finder, `${text} in ${haystack}`).toEqual(indexOf);
    }
  });

  it("answers as indexOf does where the anchor comes at nearly every place, before and after it gives way to indexOf (hunt 87)", () => {
    const text = `${"~".repeat(300)}x`;
    for (const haystack of [`${"~".repeat(20_000)}x`, `${"~".repeat(5_000)}x${"~".repeat(400)}x~~x`, "~".repeat(10_000)]) {
      const find = plainTextFinder(text);
      const fromEach = [0, 1, 299, 4_700, 4_701, 5_000, 5_099, 5_100, 19_700, 19_701];
      expect(
        fromEach.map((from) => find(haystack, from)),
        haystack.length.toString(),
      ).toEqual(fromEach.map((from) => haystack.indexOf(text, from)));
    }
    // The anchor inside the text ("x" is more common than "~"): indexOf takes over from the first
    // place not checked, wherever the text starts near the place it gives way.
    const inner = `x${"~".repeat(300)}`;
    const find = plainTextFinder(inner);
    let found = 0;
    for (let place = 0; place < 120; place++) {
      const haystack = `${"~".repeat(place)}${inner}${"~".repeat(1_000)}`;
      for (let from = 0; from < 30; from++) {
        const expected = haystack.indexOf(inner, from);
        expect(plainTextFinder(inner)(haystack, from), `${place} from ${from}`).toBe(expected);
        expect(find(haystack, from)).toBe(expected);
        if (expected >= 0) found++;
      }
    }
    expect(found).toBe(3165);
  });

  it("answers as indexOf does for random texts over a small alphabet (every position)", () => {
    const next = random(7);
    const alphabet = ["r", "e", "u", "~", "é", "😀", " "];
    const pick = (n: number) => Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
    let found = 0;
    for (let i = 0; i < 400; i++) {
      const text = pick(1 + Math.floor(next() * 4));
      const haystack = pick(Math.floor(next() * 60));
      const { finder, indexOf } = answers(text, haystack);
      expect(finder, `${JSON.stringify(text)} in ${JSON.stringify(haystack)}`).toEqual(indexOf);
      found += indexOf.filter((at) => at >= 0).length;
    }
    // Found often enough for the comparison to mean something (the seed makes this exact).
    expect(found).toBe(4290);
  });
});

describe("isRareCharacter", () => {
  it("takes one character as rare as '-' or rarer in code and prose, non-ASCII ones included", () => {
    const chars = ["-", "#", "~", "@", "é", "😀", "e", ":", " ", "_", "(", "ab", ""];
    expect(chars.filter((c) => isRareCharacter(c))).toEqual(["-", "#", "~", "@", "é"]);
  });
});
