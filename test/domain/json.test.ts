import { describe, expect, it } from "vitest";
import { isRecord } from "../../src/domain";

describe("isRecord", () => {
  it("accepts plain objects only", () => {
    const values: unknown[] = [{}, { a: 1 }, JSON.parse('{"error":null}'), null, [], [1], "x", 1, true, undefined];
    expect(values.map(isRecord)).toEqual([true, true, true, false, false, false, false, false, false, false]);
  });
});
