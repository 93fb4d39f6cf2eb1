/** Generated `.gitignore` rules and paths, for tests that compare a matcher with the `ignore` library. */

const RULE_PARTS = ["a", "b", "ab", ".", "/", "/", "*", "**", "**/", "/**", "?", "[ab]", "[!a]", "[a-c]", "\\*", "\\?", "x"];
const SEGMENTS = ["a", "b", "ab", "ba", "aa", ".a", "a.b", "x", "abc", "*", "?"];

export function generatedRules(count: number, next: () => number): string[] {
  const out = new Set<string>();
  while (out.size < count) {
    let body = "";
    const parts = 1 + Math.floor(next() * 5);
    for (let i = 0; i < parts; i++) body += RULE_PARTS[Math.floor(next() * RULE_PARTS.length)];
    out.add(body);
  }
  return [...out];
}

/** Paths of 1-4 segments, each as a file and as a directory (with its "/"). */
export function generatedPaths(count: number, next: () => number): string[] {
  const out = new Set<string>();
  while (out.size < count) {
    const depth = 1 + Math.floor(next() * 4);
    const segments = Array.from({ length: depth }, () => SEGMENTS[Math.floor(next() * SEGMENTS.length)]);
    const path = segments.join("/");
    out.add(path);
    out.add(`${path}/`);
  }
  return [...out];
}
