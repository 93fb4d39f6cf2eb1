import type { Ignore } from "ignore";
import { RE2JS } from "re2js";
import type { LibraryRule } from "./gitignore-dispatch";
import { classEnd, classPattern, literal } from "./glob-re2";

/**
 * A `.gitignore` rule whose regex may take more than one way at more than two places (runs of `*`)
 * is matched on RE2, in linear time. The `ignore` library compiles a rule to a backtracking V8 regex:
 * `**\/a/**\/a/**\/a/**\/a/**\/a/**\/a/**\/a/**\/z` held the isolate for seconds on one path 40
 * directories deep, and the cost grows as a power of the depth with every `**` more; a repository's
 * `.gitignore` (or one a model writes) must not stall every session of the isolate. Simpler rules
 * keep the library's V8 regex: RE2 in JS is several times slower per path (as for globs, `glob.ts`).
 */
export const MAX_V8_RULE_WILDCARDS = 2;

/**
 * Replaces the matcher of each complex rule of a loaded `.gitignore` with an RE2 one; the library
 * keeps reading the file (comments, `!`, escapes, trailing spaces). A rule is tested through its
 * `regex` property (by the library and by `RuleDispatch`), which the library caches as `_regex`:
 * setting that is what this relies on, with the rule list (`_rules._rules`) and each rule's
 * normalised `body`. They are not in the library's types; the version is pinned and a test covers them.
 */
export function boundRuleMatching(matcher: Ignore): Ignore {
  for (const rule of ruleList(matcher)) {
    if (typeof rule.body !== "string") throw new Error("the ignore library no longer exposes a rule's body");
    if (wildcardRuns(rule.body) > MAX_V8_RULE_WILDCARDS) rule._regex = re2RuleTester(rule.body);
  }
  return matcher;
}

/**
 * Keeps the first `max` rules of a loaded `.gitignore` (its rule list, as `boundRuleMatching` reads it);
 * returns how many it dropped.
 */
export function keepFirstRules(matcher: Ignore, max: number): number {
  const rules = ruleList(matcher);
  const dropped = Math.max(0, rules.length - max);
  rules.length -= dropped;
  return dropped;
}

/** How many rules a loaded `.gitignore` holds (comments and blank lines are none). */
export function ruleCount(matcher: Ignore): number {
  return ruleList(matcher).length;
}

/**
 * The rules of a loaded `.gitignore` in order, as the library keeps them (`_rules._rules`: not in
 * its types; the version is pinned and a test covers it).
 */
export function ruleList(matcher: Ignore): LibraryRule[] {
  const rules = (matcher as unknown as { _rules?: { _rules?: LibraryRule[] } })._rules?._rules;
  if (!Array.isArray(rules)) throw new Error("the ignore library no longer exposes its rule list");
  return rules;
}

/**
 * What the library's regex of a rule does, on RE2: `test(path)` of a path relative to the
 * `.gitignore`'s directory, or of its last segment when the rule has no `/` (the library passes
 * either), with a `/` after a directory's name.
 */
export function re2RuleTester(body: string): { test(path: string): boolean } {
  const { pattern, directoryOnly, required } = gitignoreRuleToRe2(body);
  const re2 = RE2JS.compile(pattern, RE2JS.DOTALL);
  return {
    test(path: string): boolean {
      const isDirectory = path.endsWith("/");
      if (directoryOnly && !isDirectory) return false;
      // `includes` costs a tenth of RE2 in JS, and most paths lack a text the rule requires.
      if (!required.every((text) => path.includes(text))) return false;
      return re2.matches(isDirectory ? path.slice(0, -1) : path);
    },
  };
}

/**
 * A rule's body (as the library keeps it: no `!`, trailing spaces trimmed, a leading `\!` or `\#`
 * unescaped) as an RE2 pattern for a whole path without a trailing `/`, as gitignore(5) reads it:
 * - a `/` at the end: directories only; a `/` anywhere else: the path relative to the
 *   `.gitignore`'s directory (a leading one dropped), else the name at any depth;
 * - `**` as a whole segment: `**\/x` is x in any directory, `a/**` everything inside a (not a),
 *   `a/**\/b` a/b with any directories between; other runs of `*` are `*`;
 * - `*` is any run of characters but `/`, `?` one, `[...]` a class (`!` or `^` first negates);
 *   `\x` is x.
 * `required` are runs of literal characters every matching path holds (two or more characters).
 */
export function gitignoreRuleToRe2(body: string): { pattern: string; directoryOnly: boolean; required: string[] } {
  const directoryOnly = body.endsWith("/");
  let rule = directoryOnly ? body.slice(0, -1) : body;
  const anchored = rule.includes("/");
  if (rule.startsWith("/")) rule = rule.slice(1);
  const required: string[] = [];
  let run = "";
  const endRun = () => {
    if (run.length > 1) required.push(run);
    run = "";
  };
  let out = "";
  for (let i = 0; i < rule.length; i++) {
    const c = rule[i]!;
    if (c === "*") {
      endRun();
      let end = i;
      while (rule[end + 1] === "*") end++;
      const segmentStart = i === 0 || rule[i - 1] === "/";
      const segmentEnd = end + 1 === rule.length || rule[end + 1] === "/";
      if (end > i && segmentStart && segmentEnd) {
        // `a/**`: everything inside a; `**` alone: everything.
        if (end + 1 === rule.length) out += ".+";
        else {
          // `**/`: any directories, none included (its `/` is taken with it).
          out += "(?:.*/)?";
          end++;
        }
      } else out += "[^/]*";
      i = end;
    } else if (c === "?") {
      endRun();
      out += "[^/]";
    } else if (c === "[" && classEnd(rule, i) !== -1) {
      endRun();
      const end = classEnd(rule, i);
      out += classPattern(rule.slice(i + 1, end));
      i = end;
    } else if (c === "\\" && i + 1 < rule.length) {
      i++;
      run += rule[i];
      out += literal(rule[i]!);
    } else {
      if (c === "/") endRun();
      else run += c;
      out += literal(c);
    }
  }
  endRun();
  return { pattern: anchored ? out : `(?:.*/)?${out}`, directoryOnly, required };
}

/** Runs of `*` in a rule, outside classes and escapes: the places its regex may match more than one way. */
export function wildcardRuns(body: string): number {
  let count = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === "\\") i++;
    else if (c === "[") i = Math.max(i, classEnd(body, i));
    else if (c === "*" && body[i - 1] !== "*") count++;
  }
  return count;
}
