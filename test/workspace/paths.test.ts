import { describe, expect, it } from "vitest";
import { comparePaths } from "../../src/workspace/paths";

describe("comparePaths", () => {
  it("orders by UTF-16 code units, like git and LC_ALL=C sort", () => {
    const paths = ["b", "a/b", "a-b", "B", "a", "\uFFFF", "\u{1F600}", "é"];
    expect([...paths].sort(comparePaths)).toEqual(["B", "a", "a-b", "a/b", "b", "é", "\u{1F600}", "\uFFFF"]);
  });

  it("is 0 only for equal paths", () => {
    expect([comparePaths("x", "x"), comparePaths("x", "X"), comparePaths("X", "x")]).toEqual([0, 1, -1]);
  });
});
