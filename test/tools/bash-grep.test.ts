import { describe, expect, it } from "vitest";
import { gnuBasicRepeats, grepCall } from "../../src/tools/bash-grep";

const grepArgs = (args: string[], syntax?: "G" | "E" | "F" | "P") => grepCall(args, syntax).args;

describe("grepArgs: grep's arguments as just-bash must get them to answer as GNU grep", () => {
  it("passes every -e and --regexp pattern as one -e, one pattern per line, wherever they stand", () => {
    // Several basic patterns each in a group, so that an anchor in one stays one (hunt 78).
    expect(grepArgs(["-n", "-e", "TODO", "-e", "PORT", "app.ts"])).toEqual(["-e", "\\(TODO\\)\n\\(PORT\\)", "-n", "app.ts"]);
    expect(grepArgs(["--regexp=a$", "-c", "--regexp", "^b", "-eb\\+", "f"])).toEqual([
      "-e",
      "\\(a$\\)\n\\(^b\\)\n\\(b\\{1,\\}\\)",
      "-c",
      "f",
    ]);
    // A back-reference is refused, saying so (just-bash matches in linear time, without them; it said
    // "invalid regular expression", hunt 82); an escaped backslash before a digit is none.
    const refusal =
      "back-references (\\1 to \\9) are not supported by this shell's grep, which matches in linear time; the grep tool takes them";
    expect(grepCall(["-e", "a$", "-e", "\\(x\\)\\1", "f"]).refusal).toBe(refusal);
    expect(grepCall(["-E", "(a)\\1", "f"]).refusal).toBe(refusal);
    expect(grepCall(["-F", "\\1", "f"]).refusal).toBe(undefined);
    expect(grepCall(["a\\\\1", "f"]).refusal).toBe(undefined);
    // Inside a bracket expression a backslash and a digit are two characters, as sed's check reads them.
    expect(grepCall(["[\\1]x", "f"]).refusal).toBe(undefined);
    expect(grepCall(["[a]\\(b\\)\\1", "f"]).refusal).toBe(refusal);
    expect(grepArgs(["-E", "-e", "a$", "-e", "b"])).toEqual(["-e", "a$\nb", "-E"]);
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

  it("passes -y, -NUM, --include GLOB and --context N in forms just-bash takes; -s, -m with -c and -l on stdin are done here (hunt 78)", () => {
    expect(grepCall(["-ys", "x", "f"])).toEqual({ args: ["-i", "x", "f"], noMessages: true, countCap: null });
    expect(grepArgs(["-3", "--context", "2", "--after-context=1", "--include", "*.ts", "--exclude-dir", "node_modules", "x", "."])).toEqual(
      ["-C", "3", "-C", "2", "-A", "1", "--include=*.ts", "--exclude-dir=node_modules", "x", "."],
    );
    expect(grepCall(["-c", "--max-count", "2", "x", "f"])).toEqual({ args: ["-c", "-m", "2", "x", "f"], noMessages: false, countCap: 2 });
    expect(grepCall(["-m1", "x"]).countCap).toBe(null);
    expect(grepArgs(["-l", "x"])).toEqual(["-l", "x", "-"]);
    expect(grepArgs(["-L", "-e", "x"])).toEqual(["-e", "x", "-L", "-"]);
    expect(grepArgs(["-lr", "x"])).toEqual(["-l", "-r", "x"]);
    expect(grepArgs(["-l", "x", "f"])).toEqual(["-l", "x", "f"]);
    // \< is the start of a word (\b here) in basic and extended patterns, left alone in brackets and with -F.
    expect(grepArgs(["\\<one[\\<]"])).toEqual(["\\bone[\\<]"]);
    expect(grepArgs(["-E", "\\<one"])).toEqual(["-E", "\\bone"]);
    expect(grepArgs(["-F", "\\<one"])).toEqual(["-F", "\\<one"]);
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

describe("the grep guard on hostile patterns (hunt 80)", () => {
  it("rewrites a long pattern of unclosed intervals and classes in time linear in it (it was quadratic: past this test's timeout)", () => {
    const intervals = "a\\{".repeat(100_000);
    expect(gnuBasicRepeats(intervals)).toBe(intervals);
    const classes = "[[:".repeat(100_000);
    expect(gnuBasicRepeats(`${classes}\\+`)).toBe(`${classes}\\+`);
    expect(grepArgs([`\\<${"[[=".repeat(100_000)}`])).toEqual([`\\b${"[[=".repeat(100_000)}`]);
  }, 30_000);

  it("refuses a regular expression longer than 16,384 characters, which just-bash reads in quadratic time; a fixed string of any length passes", () => {
    const long = "a\\{".repeat(6_000);
    expect(grepCall([long, "f"]).refusal).toBe(
      "a regular expression of 18000 characters is longer than this shell takes (16384); search for fixed strings with -F, or narrow the pattern",
    );
    expect(grepCall(["-E", "-e", "x".repeat(10_000), "-e", "y".repeat(7_000)]).refusal).toBe(
      "a regular expression of 17000 characters is longer than this shell takes (16384); search for fixed strings with -F, or narrow the pattern",
    );
    expect(grepCall(["-F", long, "f"]).refusal).toBe(undefined);
    expect(grepCall(["x".repeat(16_384), "f"]).refusal).toBe(undefined);
  });
});
