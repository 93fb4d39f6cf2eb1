import { describe, expect, it } from "vitest";
import { jsonTextProblem } from "../../src/api/body";
import { clipText, isRecord, MAX_JSON_DEPTH, nestsDeeperThan, sliceWhole, sliceWholeFrom } from "../../src/domain";

describe("isRecord", () => {
  it("accepts plain objects only", () => {
    const values: unknown[] = [{}, { a: 1 }, JSON.parse('{"error":null}'), null, [], [1], "x", 1, true, undefined];
    expect(values.map(isRecord)).toEqual([true, true, true, false, false, false, false, false, false, false]);
  });
});

describe("nestsDeeperThan", () => {
  it("counts array and object levels outside strings, escapes included, as jsonTextProblem does after parsing", () => {
    const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;
    expect([nestsDeeperThan(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH), nestsDeeperThan(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)]).toEqual([
      false,
      true,
    ]);
    // The same boundary as the check of a parsed value.
    expect([jsonTextProblem(JSON.parse(nested(MAX_JSON_DEPTH))), jsonTextProblem(JSON.parse(nested(MAX_JSON_DEPTH + 1)))]).toEqual([
      null,
      { kind: "too_deep" },
    ]);
    expect(
      [
        '{"a":"[[[[["}',
        '{"a":"\\"[[[["}',
        '{"a":"\\\\"}',
        '["\\\\\\"[[[[["]',
        '{"a":{"b":[{}]}}',
        '{"a":"\\\\",  "b":[[[1]]]}',
        '"unterminated [[[[[',
      ].map((text) => nestsDeeperThan(text, 3)),
    ).toEqual([false, false, false, false, true, true, false]);
  });
});

describe("cuts between characters", () => {
  it("sliceWhole, sliceWholeFrom and clipText never keep half a surrogate pair", () => {
    const text = "ab😀cd";
    expect([0, 1, 2, 3, 4, 5, 6].map((end) => sliceWhole(text, end))).toEqual(["", "a", "ab", "ab", "ab😀", "ab😀c", "ab😀cd"]);
    expect([0, 1, 2, 3, 4, 5, 6].map((start) => sliceWholeFrom(text, start))).toEqual(["ab😀cd", "b😀cd", "😀cd", "cd", "cd", "d", ""]);
    expect([clipText(text, 4), clipText(text, 5), clipText(text, 6)]).toEqual(["ab…", "ab😀…", "ab😀cd"]);
  });
});
