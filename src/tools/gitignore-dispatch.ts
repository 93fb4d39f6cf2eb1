/** A rule of the `ignore` library, as far as the dispatch reads it (see `ruleList`). */
export interface LibraryRule {
  body: string;
  negative: boolean;
  regex: { test(path: string): boolean };
  /** The library's cache of `regex` (what `boundRuleMatching` replaces). */
  _regex?: { test(path: string): boolean };
}

export type Verdict = { ignored: boolean; unignored: boolean };

const NO_VERDICT: Verdict = { ignored: false, unignored: false };
const GLOB_CHARS = /[*?[\\]/;

/**
 * One `.gitignore`'s verdict on a path, as the library gives it (the last rule that matches decides),
 * testing only the rules that can match the path's name. Every rule's regex ends at the path's end
 * (or its final `/`), so its last segment matches the path's name whole: a rule whose last segment is
 * plain text (`node_modules/`, `dist`, `build/Release`) can match only a path of that name, `*` and
 * plain text (`*.log`) only names ending in the text, and plain text before a `*` or `?`
 * (`npm-debug.log*`) only names starting with it. The rest (classes, escapes, `**` in the last
 * segment) are tested on every path. Most rules of a real `.gitignore` are of the first kinds, and
 * testing every rule on every path was most of a search's walk (79 rules of a Node project's
 * `.gitignore` over 54,000 paths: 150-300 ms per grep or find). Which rule matches is still decided
 * by its own regex; a test compares the verdicts with the library's over generated rules and paths.
 */
export class RuleDispatch {
  /** Rule numbers (ascending) by the name they match. */
  private readonly byName = new Map<string, number[]>();
  /** Rule numbers by the first character of the names they can match. */
  private readonly byFirst = new Map<string, number[]>();
  /** Rule numbers by the last character of the names they can match. */
  private readonly byLast = new Map<string, number[]>();
  /** Rules tested on every path. */
  private readonly everyPath: number[] = [];

  constructor(private readonly rules: readonly LibraryRule[]) {
    for (const [n, rule] of rules.entries()) {
      const key = nameKey(rule.body);
      if (key.kind === "any") this.everyPath.push(n);
      else file(key.kind === "name" ? this.byName : key.kind === "prefix" ? this.byFirst : this.byLast, key.text, n);
    }
  }

  /** The verdict on `path` (relative to the `.gitignore`'s directory; a directory ends with `/`). */
  verdict(path: string): Verdict {
    const end = path.endsWith("/") ? path.length - 1 : path.length;
    const name = path.slice(path.lastIndexOf("/", end - 1) + 1, end);
    let last = -1;
    last = this.lastMatch(this.byName.get(name), path, last);
    last = this.lastMatch(this.byFirst.get(name[0] ?? ""), path, last);
    last = this.lastMatch(this.byLast.get(name[name.length - 1] ?? ""), path, last);
    last = this.lastMatch(this.everyPath, path, last);
    if (last < 0) return NO_VERDICT;
    const { negative } = this.rules[last]!;
    return { ignored: !negative, unignored: negative };
  }

  /** The highest rule number in `candidates` above `above` whose rule matches, else `above`. */
  private lastMatch(candidates: number[] | undefined, path: string, above: number): number {
    if (!candidates) return above;
    for (let i = candidates.length - 1; i >= 0 && candidates[i]! > above; i--) {
      if (this.rules[candidates[i]!]!.regex.test(path)) return candidates[i]!;
    }
    return above;
  }
}

type NameKey = { kind: "name" | "prefix" | "suffix"; text: string } | { kind: "any" };

/** What every name a rule matches has: the rule's body (no `!`), read as the library reads it. */
function nameKey(body: string): NameKey {
  const rule = body.endsWith("/") ? body.slice(0, -1) : body;
  const segment = rule.slice(rule.lastIndexOf("/") + 1);
  // Escapes, classes (a class may hold `/`) and `**` are left to the rule's regex.
  if (segment === "" || segment.includes("\\") || segment.includes("[") || segment.includes("**")) return { kind: "any" };
  if (!GLOB_CHARS.test(segment)) return { kind: "name", text: segment };
  const glob = segment.search(GLOB_CHARS);
  if (glob > 0) return { kind: "prefix", text: segment[0]! };
  if (segment[0] === "*" && segment.length > 1 && !GLOB_CHARS.test(segment.slice(1)))
    return { kind: "suffix", text: segment[segment.length - 1]! };
  return { kind: "any" };
}

function file(map: Map<string, number[]>, key: string, rule: number): void {
  const list = map.get(key);
  if (list) list.push(rule);
  else map.set(key, [rule]);
}
