import { describe, expect, it } from "vitest";
import { gnuBasicRepeats, grepArgs } from "../../src/tools/bash-grep";

describe("grepArgs: grep's arguments as just-bash must get them to answer as GNU grep", () => {
  it("passes every -e and --regexp pattern as one -e, one pattern per line, wherever they stand", () => {
    expect(grepArgs(["-n", "-e", "TODO", "-e", "PORT", "app.ts"])).toEqual(["-e", "TODO\nPORT", "-n", "app.ts"]);
    expect(grepArgs(["--regexp=a", "-c", "--regexp", "b", "-eb\\+", "f"])).toEqual(["-e", "a\nb\nb\\{1,\\}", "-c", "f"]);
    // With -e given, the first operand is a file, never a pattern.
    expect(grepArgs(["-e", "x", "a\\+.txt"])).toEqual(["-e", "x", "a\\+.txt"]);
  });

  it("splits option clusters just-bash refuses, a value-taking option ending its cluster", () => {
    expect(grepArgs(["-ie", "todo", "app.ts"])).toEqual(["-e", "todo", "-i", "app.ts"]);
    expect(grepArgs(["-nA2", "x", "f"])).toEqual(["-n", "-A", "2", "x", "f"]);
    expect(grepArgs(["-rnC", "1", "x", "."])).toEqual(["-r", "-n", "-C", "1", "x", "."]);
    expect(grepArgs(["-m1e", "x"])).toEqual(["-m", "1e", "x"]);
    expect(grepArgs(["-vf", "pats.txt", "f"])).toEqual(["-v", "-f", "pats.txt", "f"]);
  });

  it("drops -G, --basic-regexp and --color, and leaves a missing value for just-bash to refuse", () => {
    expect(grepArgs(["-G", "--color=never", "--colour", "--basic-regexp", "a\\?", "f"])).toEqual(["a\\{0,1\\}", "f"]);
    expect(grepArgs(["-e"])).toEqual(["-e"]);
    expect(grepArgs(["-nA"])).toEqual(["-n", "-A"]);
  });

  it("rewrites \\+ and \\? only in a basic pattern: not with -E, -F, -P, egrep or fgrep, nor in a -f file's operand", () => {
    expect(grepArgs(["https\\?://", "README.md"])).toEqual(["https\\{0,1\\}://", "README.md"]);
    expect(grepArgs(["-E", "o\\+", "f"])).toEqual(["-E", "o\\+", "f"]);
    expect(grepArgs(["-cF", "o\\+", "f"])).toEqual(["-c", "-F", "o\\+", "f"]);
    expect(grepArgs(["--perl-regexp", "o\\+", "f"])).toEqual(["--perl-regexp", "o\\+", "f"]);
    expect(grepArgs(["-e", "o\\+", "-e", "p"], "E")).toEqual(["-e", "o\\+\np"]);
    expect(grepArgs(["o\\+"], "F")).toEqual(["o\\+"]);
    expect(grepArgs(["-f", "pats", "o\\+"])).toEqual(["-f", "pats", "o\\+"]);
    // The last syntax option wins, as in GNU grep; after --, every argument is an operand.
    expect(grepArgs(["-E", "-G", "o\\+"])).toEqual(["-E", "o\\{1,\\}"]);
    expect(grepArgs(["--", "-e\\+", "f"])).toEqual(["--", "-e\\{1,\\}", "f"]);
  });
});

describe("gnuBasicRepeats: GNU's \\+ and \\? in a basic pattern as the intervals just-bash reads", () => {
  it.each([
    ["o\\+", "o\\{1,\\}"],
    ["https\\?://", "https\\{0,1\\}://"],
    ["\\(ab\\)\\+c", "\\(ab\\)\\{1,\\}c"],
    ["[[:alpha:]]\\+x", "[[:alpha:]]\\{1,\\}x"],
    // Plain characters where GNU reads them so: at the start of a pattern, group or alternative, and after ^ there.
    ["\\+x", "+x"],
    ["^\\+", "^+"],
    ["\\(\\+x\\)", "\\(+x\\)"],
    ["x\\|\\?y", "x\\|?y"],
    // Inside a bracket expression, after an escaped backslash, and after another repetition: left alone.
    ["[\\+]", "[\\+]"],
    ["[]\\+[:digit:]]\\?", "[]\\+[:digit:]]\\{0,1\\}"],
    ["\\\\+", "\\\\+"],
    ["a*\\+", "a*\\+"],
    ["a\\{2\\}\\+", "a\\{2\\}\\+"],
    ["*\\+", "*\\{1,\\}"],
    ["a\\+\\?", "a\\{1,\\}\\?"],
    ["plain", "plain"],
  ])("%s -> %s", (pattern, expected) => {
    expect(gnuBasicRepeats(pattern)).toBe(expected);
  });
});
