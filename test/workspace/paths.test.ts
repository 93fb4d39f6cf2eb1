import { describe, expect, it } from "vitest";
import { characterCount } from "../../src/domain/characters";
import { comparePaths, resolveWorkspacePath, writeRefusal } from "../../src/workspace/paths";

describe("characterCount", () => {
  it("counts code points: a surrogate pair is one character, a lone half is one too", () => {
    expect(["", "abc", "\u{1F600}", "a\u{1F600}b", "\uD83D", "\uDE00\uD83D", "\uD83Dx", "é"].map(characterCount)).toEqual([
      0, 3, 1, 3, 1, 2, 2, 1,
    ]);
  });
});

describe("resolveWorkspacePath", () => {
  const codeOf = (path: string) => {
    try {
      return resolveWorkspacePath(path).length;
    } catch (err) {
      return (err as { code: string; message: string }).message;
    }
  };

  it("counts a path's length in characters, as the README's limit does (hunt 104: emoji counted twice)", () => {
    const emoji = "\u{1F600}";
    expect(codeOf(emoji.repeat(4096))).toBe(8192);
    // The message quotes 200 UTF-16 units, never half an emoji.
    expect(codeOf(`a${emoji.repeat(4096)}`)).toBe(`path "a${emoji.repeat(99)}" is 4097 characters long; the limit is 4096`);
    expect(codeOf("x".repeat(4097))).toBe(`path "${"x".repeat(200)}" is 4097 characters long; the limit is 4096`);
  });
});

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
