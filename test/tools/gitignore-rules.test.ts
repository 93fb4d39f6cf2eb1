import ignore from "ignore";
import { describe, expect, it } from "vitest";
import { MAX_GITIGNORE_RULES } from "../../src/domain/limits";
import { findTool } from "../../src/tools/find";
import { boundRuleMatching, gitignoreRuleToRe2, re2RuleTester, wildcardRuns } from "../../src/tools/gitignore-rules";
import { grepTool } from "../../src/tools/grep";
import { MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";
import { random } from "../workspace/search/helpers";
import { generatedPaths, generatedRules } from "./gitignore-generators";

type LibraryRule = { body: string; negative: boolean; regex: { test(path: string): boolean } };

/** The library's rules of a .gitignore text (what `boundRuleMatching` works on). */
function libraryRules(text: string): LibraryRule[] {
  return (ignore({ ignorecase: false }).add(text) as unknown as { _rules: { _rules: LibraryRule[] } })._rules._rules;
}

describe(".gitignore rules on RE2", () => {
  it("judge every path as the library's regex does, for 600 generated rules x 400 paths (full paths, and names for rules without a /)", () => {
    const next = random(20261204);
    const bodies = generatedRules(600, next);
    const inputs = generatedPaths(200, next);
    let compared = 0;
    const differences: string[] = [];
    for (const text of bodies) {
      for (const rule of libraryRules(text)) {
        const ours = re2RuleTester(rule.body);
        const basenameOnly = !rule.body.slice(0, -1).includes("/");
        for (const path of inputs) {
          const tested = basenameOnly ? [path, path.replace(/^.*\/(?=[^/]+\/?$)/, "")] : [path];
          for (const input of tested) {
            compared++;
            if (ours.test(input) !== rule.regex.test(input)) differences.push(`${JSON.stringify(rule.body)} on ${JSON.stringify(input)}`);
          }
        }
      }
    }
    expect(differences.slice(0, 20)).toEqual([]);
    expect(compared).toBe(180_800);
  });

  it("translates the forms gitignore(5) names", () => {
    expect(gitignoreRuleToRe2("*.log")).toEqual({ pattern: "(?:.*/)?[^/]*\\.log", directoryOnly: false, required: [".log"] });
    expect(gitignoreRuleToRe2("/build/")).toEqual({ pattern: "build", directoryOnly: true, required: ["build"] });
    expect(gitignoreRuleToRe2("**/a/**/b")).toEqual({ pattern: "(?:.*/)?a/(?:.*/)?b", directoryOnly: false, required: [] });
    expect(gitignoreRuleToRe2("doc/**")).toEqual({ pattern: "doc/.+", directoryOnly: false, required: ["doc"] });
    expect(gitignoreRuleToRe2("a**b?[!x]\\*")).toEqual({ pattern: "(?:.*/)?a[^/]*b[^/][^/x]\\*", directoryOnly: false, required: [] });
  });

  it("counts runs of * outside classes and escapes", () => {
    expect([
      wildcardRuns("*.log"),
      wildcardRuns("**/a/**/b"),
      wildcardRuns("a*b*c*"),
      wildcardRuns("[*]\\*a"),
      wildcardRuns("***"),
    ]).toEqual([1, 2, 3, 0, 1]);
  });

  it("moves rules with more than two runs of * to RE2 and leaves the rest on the library's regex", () => {
    const matcher = boundRuleMatching(ignore({ ignorecase: false }).add("*.log\n**/a/**/b\n**/a/**/a/**/z\n!keep/*/*/*.txt\n"));
    const kinds = (matcher as unknown as { _rules: { _rules: LibraryRule[] } })._rules._rules.map((rule) => [
      rule.body,
      rule.regex instanceof RegExp ? "v8" : "re2",
    ]);
    expect(kinds).toEqual([
      ["*.log", "v8"],
      ["**/a/**/b", "v8"],
      ["**/a/**/a/**/z", "re2"],
      ["keep/*/*/*.txt", "re2"],
    ]);
  });

  it("applies the first 1,000 rules of the workspace, shallower files first, and says so when there are more", async () => {
    expect(MAX_GITIGNORE_RULES).toBe(1000);
    const filler = Array.from({ length: 998 }, (_, i) => `never-${i}`).join("\n");
    const fs = new MemoryWorkspaceFs({
      // Sorted by name, "+deep/.gitignore" comes before ".gitignore"; by depth it comes after.
      "+deep/.gitignore": "*.tmp\n*.bak\n",
      "+deep/x.tmp": "needle\n",
      "+deep/y.bak": "needle\n",
      ".gitignore": `# comments and blank lines are no rules\n\n${filler}\n*.log\n`,
      "a.log": "needle\n",
    });
    const ctx = toolContext(fs);
    const notice =
      "Only the first 1,000 of the workspace's 1,001 .gitignore rules are applied (shallower .gitignore files first): paths the others would leave out are included";
    expect(await findTool.execute(findTool.parameters.parse({ pattern: "*" }), ctx)).toEqual({
      error: false,
      text: `+deep/\n+deep/.gitignore\n+deep/y.bak\n.gitignore\n\n[${notice}]`,
    });
    expect(await grepTool.execute(grepTool.parameters.parse({ pattern: "needle" }), ctx)).toEqual({
      error: false,
      text: `+deep/y.bak:1: needle\n\n[${notice}]`,
    });
    expect(await findTool.execute(findTool.parameters.parse({ pattern: "*.none" }), ctx)).toEqual({
      error: false,
      text: `No files found matching pattern\n\n[${notice}]`,
    });
  });

  it("lets find and grep walk a tree 44 directories deep under a rule with seven **/a/ (about a minute on the library's regex)", async () => {
    const deep = Array.from({ length: 44 }, () => "a").join("/");
    const fs = new MemoryWorkspaceFs({
      ".gitignore": `${"**/a/".repeat(7)}**/z\n`,
      [`${deep}/f.txt`]: "needle\n",
      [`${deep}/z`]: "needle\n",
    });
    const ctx = toolContext(fs);
    expect(await findTool.execute(findTool.parameters.parse({ pattern: "f.txt" }), ctx)).toEqual({ error: false, text: `${deep}/f.txt` });
    expect(await findTool.execute(findTool.parameters.parse({ pattern: "z" }), ctx)).toEqual({
      error: false,
      text: "No files found matching pattern",
    });
    const grep = await grepTool.execute(grepTool.parameters.parse({ pattern: "needle" }), ctx);
    expect(grep).toEqual({ error: false, text: `${deep}/f.txt:1: needle` });
  });
});
