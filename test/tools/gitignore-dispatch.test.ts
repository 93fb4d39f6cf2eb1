import ignore from "ignore";
import { describe, expect, it } from "vitest";
import { type LibraryRule, RuleDispatch } from "../../src/tools/gitignore-dispatch";
import { boundRuleMatching, ruleList } from "../../src/tools/gitignore-rules";
import { random } from "../workspace/search/helpers";
import { generatedPaths, generatedRules } from "./gitignore-generators";

type Verdict = { ignored: boolean; unignored: boolean };

/** The library's own verdict on one path (every rule, last match wins). */
function libraryVerdict(text: string): (path: string) => Verdict {
  const rules = (ignore({ ignorecase: false }).add(text) as unknown as { _rules: { test(path: string, mode: string): Verdict } })._rules;
  return (path) => {
    const { ignored, unignored } = rules.test(path, "regex");
    return { ignored, unignored };
  };
}

function dispatchOf(text: string): RuleDispatch {
  return new RuleDispatch(ruleList(boundRuleMatching(ignore({ ignorecase: false }).add(text))));
}

/** Rules of the kinds a real .gitignore holds, and paths that meet them. */
const REAL_RULES = [
  "node_modules/",
  "*.log",
  "npm-debug.log*",
  "dist",
  "/build",
  "build/Release",
  ".env",
  ".env.*",
  "!.env.example",
  "*.py[cod]",
  "__pycache__/",
  "report.[0-9]*.json",
  "**/generated/**",
  "docs/**/*.md",
  "!docs/keep.md",
  "*~",
  ".pnp.*",
  "out?",
  "\\#notes",
  "a b",
];
const REAL_PATHS = [
  "node_modules",
  "node_modules/",
  "src/node_modules/",
  "app.log",
  "src/app.log/",
  "npm-debug.log.1",
  "dist",
  "src/dist/",
  "build",
  "src/build",
  "build/Release",
  "build/Release/",
  "x/build/Release",
  ".env",
  ".env.local",
  ".env.example",
  "m.pyc",
  "m.pyd",
  "__pycache__/",
  "report.1.json",
  "a/generated/b.ts",
  "generated/",
  "docs/a/b.md",
  "docs/keep.md",
  "x.ts~",
  ".pnp.cjs",
  "out1",
  "out",
  "#notes",
  "a b",
  "src/index.ts",
];

describe("RuleDispatch", () => {
  it("gives the library's verdict for 400 generated .gitignore files (negations included) x 400 paths", () => {
    const next = random(20261205);
    // Half the rules are of the kinds the dispatch files by name (plain, `*` + text, text + glob).
    const keyed = ["ab", "a.b", "x/ab", "/aa", "ab/", "*.b", "*b", "*ab", "x/*.b", "a*", "ab*", ".a*", "a?", "a*b", "a?c/", "**/ba"];
    const pool = generatedRules(300, next);
    const pick = () => (next() < 0.5 ? keyed[Math.floor(next() * keyed.length)] : pool[Math.floor(next() * pool.length)]);
    const paths = generatedPaths(400, next);
    let compared = 0;
    const kinds = { ignored: 0, unignored: 0, neither: 0 };
    const differences: string[] = [];
    for (let f = 0; f < 400; f++) {
      const count = 1 + Math.floor(next() * 30);
      const lines = Array.from({ length: count }, () => `${next() < 0.25 ? "!" : ""}${pick()}`);
      const text = lines.join("\n");
      const ours = dispatchOf(text);
      const theirs = libraryVerdict(text);
      for (const path of paths) {
        const expected = theirs(path);
        const actual = ours.verdict(path);
        compared++;
        kinds[expected.ignored ? "ignored" : expected.unignored ? "unignored" : "neither"]++;
        if (actual.ignored !== expected.ignored || actual.unignored !== expected.unignored)
          differences.push(`${JSON.stringify(lines)} on ${JSON.stringify(path)}: ${JSON.stringify(actual)}`);
      }
    }
    expect(differences.slice(0, 10)).toEqual([]);
    expect(compared).toBe(160_000);
    // Every verdict occurs often: the comparison covers all three.
    expect(Math.min(kinds.ignored, kinds.unignored, kinds.neither)).toBeGreaterThan(10_000);
  });

  it("gives the library's verdict for rules of the kinds a real .gitignore holds", () => {
    const text = REAL_RULES.join("\n");
    const ours = dispatchOf(text);
    const theirs = libraryVerdict(text);
    const verdicts = REAL_PATHS.map((path) => [path, ours.verdict(path)] as const);
    expect(verdicts).toEqual(REAL_PATHS.map((path) => [path, theirs(path)]));
    expect(verdicts.filter(([, v]) => v.ignored).map(([path]) => path)).toEqual([
      "node_modules/",
      "src/node_modules/",
      "app.log",
      "src/app.log/",
      "npm-debug.log.1",
      "dist",
      "src/dist/",
      "build",
      "build/Release",
      "build/Release/",
      ".env",
      ".env.local",
      "m.pyc",
      "m.pyd",
      "__pycache__/",
      "report.1.json",
      "a/generated/b.ts",
      "docs/a/b.md",
      "x.ts~",
      ".pnp.cjs",
      "out1",
      "#notes",
      "a b",
    ]);
    expect(verdicts.filter(([, v]) => v.unignored).map(([path]) => path)).toEqual([".env.example", "docs/keep.md"]);
  });

  it("tests only the rules that can match a path's name, and the rules that can match any", () => {
    const tested: string[] = [];
    const rules: LibraryRule[] = ruleList(ignore({ ignorecase: false }).add(REAL_RULES.join("\n"))).map((rule) => ({
      body: rule.body,
      negative: rule.negative,
      regex: {
        test: (path: string) => {
          tested.push(rule.body);
          return rule.regex.test(path);
        },
      },
    }));
    const dispatch = new RuleDispatch(rules);
    const testedFor = (path: string) => {
      tested.length = 0;
      dispatch.verdict(path);
      return [...tested];
    };
    // Classes and `**` in the last segment are tested on every path, the last rule first.
    const everyPath = ["**/generated/**", "report.[0-9]*.json", "*.py[cod]"];
    expect(testedFor("src/index.ts")).toEqual(everyPath);
    // `*.log` matches; only rules after it can still decide.
    expect(testedFor("app.log")).toEqual(["*.log", ...everyPath]);
    // Named `.env.example`, then starting with "." (`.env.*` comes before the match: not tested).
    expect(testedFor(".env.example")).toEqual([".env.example", ".pnp.*", ...everyPath]);
    expect(testedFor("x/build/Release/")).toEqual(["build/Release", ...everyPath]);
    // A match after every rule tested on every path decides alone.
    expect(testedFor("docs/a/b.md")).toEqual(["docs/**/*.md"]);
  });
});
