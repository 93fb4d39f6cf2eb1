import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { lines } from "../../../src/tools/grep-matcher";
import { NON_ASCII_KIN } from "../../../src/workspace/search/regex-parser";
import { regexQuery } from "../../../src/workspace/search/regex-query";
import { decodeText } from "../../../src/workspace/text";
import { fileKeys, holds, random, randomFile, randomPattern, show, trigramsOf } from "./helpers";

const q = (source: string, ignoreCase = false) => show(regexQuery(source, { ignoreCase }));
const allOf = (text: string) => {
  const trigrams = trigramsOf(text);
  return trigrams.length === 1 ? trigrams[0]! : `(${trigrams.join(" & ")})`;
};

describe("regexQuery: the trigrams a file must contain", () => {
  it("requires every trigram of a literal, folded to lower case", () => {
    expect(q("deprecated")).toBe(allOf("deprecated"));
    expect(q("DEPRECATED")).toBe(allOf("deprecated"));
    expect(q("Deprecated", true)).toBe(allOf("deprecated"));
    expect(q("a\\.b\\(c")).toBe(allOf("a.b(c"));
  });

  it("keeps the literal part of a regex and drops what varies", () => {
    expect(q("function [a-zA-Z]+\\(")).toBe(allOf("function "));
    expect(q("^import .* from 'zod'$")).toBe(`(${[...trigramsOf("import "), ...trigramsOf(" from 'zod'")].join(" & ")})`);
    expect(q("foo\\d+bar")).toBe(`(${[...trigramsOf("foo"), ...trigramsOf("bar")].join(" & ")})`);
  });

  it("turns alternations and small classes into alternatives", () => {
    expect(q("todo|fixme", true)).toBe(`(${allOf("todo")} | ${allOf("fixme")})`);
    expect(q("colou?r")).toBe(`(${allOf("colour")} | ${allOf("color")})`);
    expect(q("[cb]at")).toBe(`(${trigramsOf("cat")[0]} | ${trigramsOf("bat")[0]})`);
    expect(q("(get|set)Value")).toBe(`(${allOf("getvalue")} | ${allOf("setvalue")})`);
  });

  it("needs no trigram for short patterns or ones without a literal of 3 bytes: every file is searched", () => {
    for (const source of ["ab", "a", "a.c", "\\w+", ".*", "[a-z]{3}", "x*y*z*", "(ab)?", "a|bc"]) expect(q(source)).toBe("ALL");
  });

  it("keeps what repetitions guarantee", () => {
    expect(q("(abc)+")).toBe(allOf("abc"));
    expect(q("(abc){2,}")).toBe(allOf("abc"));
    expect(q("(abc)*")).toBe("ALL");
    expect(q("(abc){0,3}")).toBe("ALL");
    // "xy" is one of the strings it matches, and has no trigram.
    expect(q("x(abc)?y")).toBe("ALL");
  });

  it("treats assertions and lookarounds as consuming nothing", () => {
    expect(q("\\bfoo\\b")).toBe(allOf("foo"));
    expect(q("foo(?=bar)")).toBe(allOf("foo"));
    expect(q("(?<!x)foo")).toBe(allOf("foo"));
  });

  it("gives up on what it does not model: back-references and flag modifiers", () => {
    expect(q("(ab)\\1cd")).toBe("ALL");
    expect(q("(a)\\1xyz")).toBe(allOf("xyz"));
    expect(q("(?i:abc)")).toBe("ALL");
    expect(q("(?<n>a)\\k<n>abc")).toBe(allOf("abc"));
  });

  it("keeps at most 256 parts in a condition: an and drops the rest, an or becomes ALL", () => {
    // Words whose trigrams are all different, joined by optional characters: a trigram each to require.
    const letters = "abcdefghijklmnopqrstuvwxyz";
    const words = Array.from({ length: 400 }, (_, i) => `${letters[i % 26]}${letters[Math.floor(i / 26) % 26]}${i % 10}`);
    const query = regexQuery(words.join(".?"));
    expect([query.op, query.op === "and" ? query.of.map(show) : []]).toEqual(["and", words.slice(0, 256).flatMap(trigramsOf)]);
    expect(q(`(?:${words.join("|")})`)).toBe("ALL");
    expect(q(`(?:${words.slice(0, 256).join("|")})`)).toBe(`(${words.slice(0, 256).flatMap(trigramsOf).join(" | ")})`);
    // 2,048 branches of a class and three digits, 16 Ki characters (hunt 100: 16 s to build, joined pair by pair).
    expect(q(Array.from({ length: 2048 }, (_, i) => `[ab]${String(i).padStart(3, "0")}`).join("|"))).toBe("ALL");
  });

  it("gives up on groups nested deeper than the stack holds: every file is searched, nothing thrown", () => {
    // A grep pattern may hold 16,384 characters. Nested 1,700 to 2,000 deep, the parser held and the
    // analysis ran out of stack (RangeError); deeper, the parser does (caught). "a" has no trigram.
    const depths = [1000, 1700, 1900, 2000, 3000];
    expect(depths.map((depth) => q(`${"(?:a|".repeat(depth)}abc${")".repeat(depth)}`))).toEqual(depths.map(() => "ALL"));
  });

  it("reads \\k as the letter k where no group is named, and \\p as p: what follows alternates (hunt 94)", () => {
    expect(q("\\k<n>abc")).toBe(allOf("k<n>abc"));
    expect(q("\\p{L}abc")).toBe(allOf("p{L}abc"));
    // `abcdef\k<x` or `y>`; `abcdef\p{x` or `y}`: a file holding only "y>" or "y}" matches.
    expect(q("abcdef\\k<x|y>")).toBe("ALL");
    expect(q("abcdef\\p{x|y}")).toBe("ALL");
    expect(q("(?<x>a)bcdef\\k<x>")).toBe(allOf("abcdef"));
  });

  it("reads Annex B oddities as JavaScript does", () => {
    expect(q("a{x}bc")).toBe(allOf("a{x}bc"));
    expect(q("ab]c")).toBe(allOf("ab]c"));
    expect(q("\\cJab")).toBe(allOf("\nab"));
    expect(q("\\c1ab")).toBe(allOf("\\c1ab"));
    expect(q("\\x41bc\\u0044")).toBe(allOf("abcd"));
    expect(q("\\u{41}bc")).toBe(allOf("ubc")); // without the u flag: "u" 41 times, then "bc"
  });

  it("encodes non-ASCII literals as UTF-8 and gives up on characters no byte sequence stands for", () => {
    expect(regexQuery("héllo")).toEqual(regexQuery("h\\u00e9llo"));
    expect(q("ab\uFFFDcd")).toBe("ALL");
    expect(q("😀ab")).not.toBe("ALL");
    expect(q("[😀]ab")).toBe("ALL"); // without the u flag, a class of two lone surrogates
  });

  it("with ignoreCase, lets a non-ASCII letter be any of its case forms", () => {
    const lower = regexQuery("файл");
    const either = regexQuery("файл", { ignoreCase: true });
    expect(either).not.toEqual(lower);
    expect(holds(either, fileKeys(new TextEncoder().encode("ФАЙЛ")))).toBe(true);
    expect(holds(lower, fileKeys(new TextEncoder().encode("ФАЙЛ")))).toBe(false);
  });

  it("with RE2's Unicode folding, lets k be the Kelvin sign and s the long s, and a non-ASCII letter be anything", () => {
    const keys = (text: string) => fileKeys(new TextEncoder().encode(text));
    const re2 = (source: string) => regexQuery(source, { ignoreCase: true, unicodeFolding: true });
    expect(holds(re2("kelvin"), keys("300 \u212Aelvin"))).toBe(true);
    expect(holds(regexQuery("kelvin", { ignoreCase: true }), keys("300 \u212Aelvin"))).toBe(false);
    expect(holds(re2("congress"), keys("congre\u017F\u017F"))).toBe(true);
    expect(holds(re2("straße"), keys("STRA\u1E9EE"))).toBe(true);
    expect(holds(re2("straße"), keys("elsewhere"))).toBe(false);
    // Without ignoreCase nothing folds.
    expect(regexQuery("kelvin", { unicodeFolding: true })).toEqual(regexQuery("kelvin"));
  });

  it("knows every non-ASCII code unit RE2's ignoreCase matches for an ASCII character", () => {
    const found = new Map<string, Set<string>>();
    for (let ascii = 0x20; ascii < 0x7f; ascii++) {
      const c = String.fromCharCode(ascii);
      const re2 = RE2JS.compile(RE2JS.quote(c), RE2JS.CASE_INSENSITIVE);
      for (let unit = 0x80; unit <= 0xffff; unit++) {
        if ((unit >= 0xd800 && unit <= 0xdfff) || !re2.matches(String.fromCharCode(unit))) continue;
        found.set(c.toLowerCase(), (found.get(c.toLowerCase()) ?? new Set()).add(String.fromCharCode(unit)));
      }
    }
    expect(Object.fromEntries([...found].map(([c, kin]) => [c, [...kin]]))).toEqual(NON_ASCII_KIN);
  });
});

describe("regexQuery never excludes a file that matches", () => {
  it("holds for 3000 generated patterns, each against 60 generated files (both cases)", () => {
    const next = random(13);
    const files = Array.from({ length: 60 }, () => randomFile(next));
    const decoded = files.map((bytes) => ({ keys: fileKeys(bytes), lines: lines(decodeText(bytes)) }));
    let checked = 0;
    let excluded = 0;
    for (let p = 0; p < 3000; p++) {
      const source = randomPattern(next);
      for (const ignoreCase of [false, true]) {
        let regex: RegExp;
        try {
          regex = new RegExp(source, ignoreCase ? "i" : "");
        } catch {
          continue;
        }
        const query = regexQuery(source, { ignoreCase });
        for (const file of decoded) {
          if (!file.lines.some((line) => regex.test(line))) {
            if (!holds(query, file.keys)) excluded++;
            continue;
          }
          checked++;
          if (!holds(query, file.keys))
            expect.fail(`${source} (${ignoreCase ? "i" : ""}) matches a file its query ${show(query)} excludes`);
        }
      }
    }
    // Enough matches to mean something, and queries that do narrow.
    expect(checked).toBeGreaterThan(10_000);
    expect(excluded).toBeGreaterThan(10_000);
  });
});
