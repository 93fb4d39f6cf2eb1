import { describe, expect, it } from "vitest";
import { comparePaths, writeRefusal } from "../../src/workspace/paths";

describe("comparePaths", () => {
  it("orders by UTF-16 code units, like git and LC_ALL=C sort", () => {
    const paths = ["b", "a/b", "a-b", "B", "a", "\uFFFF", "\u{1F600}", "é"];
    expect([...paths].sort(comparePaths)).toEqual(["B", "a", "a-b", "a/b", "b", "é", "\u{1F600}", "\uFFFF"]);
  });

  it("is 0 only for equal paths", () => {
    expect([comparePaths("x", "x"), comparePaths("x", "X"), comparePaths("X", "x")]).toEqual([0, 1, -1]);
  });
});

describe("writeRefusal", () => {
  // A tree with the file `a/b.txt` (so `a` is a directory).
  const kindOf = (path: string) => (path === "a/b.txt" ? "file" : path === "" || path === "a" ? "dir" : null);
  const refusal = (path: string) => {
    const err = writeRefusal(path, kindOf);
    return err && { code: err.code, message: err.message };
  };

  it("allows new and existing files whose parents are directories or absent", () => {
    expect([refusal("a/b.txt"), refusal("a/new.txt"), refusal("new/deep/file")]).toEqual([null, null, null]);
  });

  it("refuses the root and directories with is_directory", () => {
    expect(refusal("")).toEqual({ code: "is_directory", message: "'' is a directory" });
    expect(refusal("a")).toEqual({ code: "is_directory", message: "'a' is a directory" });
  });

  it("refuses a path under a file with not_a_directory, naming the file", () => {
    expect(refusal("a/b.txt/c/d")).toEqual({ code: "not_a_directory", message: "'a/b.txt' is a file, so 'a/b.txt/c/d' cannot be created" });
  });
});
