import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { compileGlob } from "../../src/tools/glob";
import { globToRe2, translateGlob } from "../../src/tools/glob-re2";
import { random } from "../workspace/search/helpers";

const NAMES = ["a", "b", "ab", "ba", "a.b", ".a", "a-1", "x.ts", ".env", "b.test.ts", "aab", "é", "1", "3"];
const PIECES = ["*", "*", "**", "?", "a", "b", ".", ".ts", "[ab]", "[!a]", "[[:digit:]]", "{a,b}", "{a,*b}", "{1..3}", "\\*", "-", "x"];

function pathOf(next: () => number): string {
  const depth = 1 + Math.floor(next() * 4);
  return Array.from({ length: depth }, () => NAMES[Math.floor(next() * NAMES.length)]).join("/");
}

function globOf(next: () => number): string {
  const segments = 1 + Math.floor(next() * 4);
  const parts: string[] = [];
  for (let s = 0; s < segments; s++) {
    if (next() < 0.25) parts.push("**");
    else parts.push(Array.from({ length: 1 + Math.floor(next() * 3) }, () => PIECES[Math.floor(next() * PIECES.length)]).join(""));
  }
  return parts.join("/");
}

describe("globs of more than two choice points (wildcards, braces), on RE2", () => {
  it("take the same paths as picomatch's own matcher, over the generated globs of more than two choice points among 20,000", () => {
    const differences: string[] = [];
    let compared = 0;
    let taken = 0;
    for (let seed = 1; seed <= 20000 && differences.length < 5; seed++) {
      const next = random(seed);
      const glob = globOf(next);
      // Choice points as glob.ts counts them: runs of `*` and braces (the generator escapes only `*`).
      const choices = (glob.replace(/\\\*/g, "").match(/\*+/g)?.length ?? 0) + (glob.match(/\{/g)?.length ?? 0);
      // Left out: runs of three or more stars, and `**` beside other characters, which picomatch reads
      // one way here and another there (`**.ts` takes `a/b.ts`, `**a` does not take `x/a`).
      if (choices <= 2 || glob.includes("***") || /[^/]\*\*|\*\*[^/]/.test(glob)) continue;
      compared++;
      // A trailing `/**` takes only what is below, as rg reads it (picomatch also takes the path before it).
      const reference = picomatch(glob.endsWith("/**") ? `${glob}/*` : glob, { dot: true, posix: true });
      const ours = compileGlob(glob);
      for (let p = 0; p < 40; p++) {
        const path = pathOf(next);
        const base = glob.includes("/") ? path : path.slice(path.lastIndexOf("/") + 1);
        if (ours(path)) taken++;
        if (ours(path) !== reference(base)) differences.push(`seed ${seed}: ${glob} on ${path}: ours ${ours(path)}`);
      }
    }
    expect(differences).toEqual([]);
    // Enough globs, and paths both taken and not.
    expect({ compared, taken }).toEqual({ compared: 4793, taken: 12891 });
  });

  it("a trailing /** takes what is below, not the path before it, as rg reads it (on V8 and on RE2)", () => {
    const paths = ["a.ts", "src/b.ts", "vendor.ts/inner.txt", "build", "build/x", "docs/build/x.md", "x/x", "qa", "qa/f", "qa/f/g"];
    const taken = (glob: string) => paths.filter(compileGlob(glob));
    expect(taken("**/*.ts/**")).toEqual(["vendor.ts/inner.txt"]);
    expect(taken("build/**")).toEqual(["build/x"]);
    expect(taken("**/build/**")).toEqual(["build/x", "docs/build/x.md"]);
    expect(taken("**/x/**")).toEqual(["x/x"]);
    expect(taken("!build/**")).toEqual(paths.filter((p) => p !== "build/x"));
    // More than two choice points: RE2.
    expect(taken("**/*{a,b}*/**")).toEqual(["build/x", "docs/build/x.md", "qa/f", "qa/f/g"]);
    // An escaped `*` is no wildcard: the glob names the file `**` in a.
    expect(taken("a/\\*\\*")).toEqual([]);
  });

  it("spells segments, classes, braces and escapes as RE2 reads them", () => {
    expect(globToRe2("**")).toBe(".*");
    expect(globToRe2("a/**")).toBe("a(?:/.*)?");
    expect(globToRe2("**/a/**/b")).toBe("(?:[^/]+/)*a/(?:[^/]+/)*b");
    expect(globToRe2("a**b*?")).toBe("a[^/]*b[^/]*[^/]");
    expect(globToRe2("[!]a][[:alpha:]x]")).toBe("[^/\\]a](?:[[:alpha:]x])");
    expect(globToRe2("{a,{b,c*}}.{1..3}")).toBe("(?:a|(?:b|c[^/]*))\\.(?:1|2|3)");
    expect(globToRe2("{a}(b|c)+\\*[x")).toBe("\\{a\\}\\(b\\|c\\)\\+\\*\\[x");
    // In a class too, `\x` is x (RE2 would refuse `\z`, read `\pL` as the letters, `\a` as the bell).
    expect(globToRe2("[\\z\\pL\\a\\]\\-é]")).toBe("(?:[zpLa\\]\\-é])");
    for (const [glob, path, taken] of [
      ["*.*.*[\\z]", "a.b.z", true],
      ["*.*.*[\\pL]", "a.b.é", false],
      ["*.*.*[\\pL]", "a.b.p", true],
      ["*.*.*[\\a]", "a.b.a", true],
    ] as const)
      expect([glob, path, compileGlob(glob)(path)]).toEqual([glob, path, taken]);
  });
});

describe("the texts a glob on RE2 requires (tested with includes before RE2)", () => {
  it("are its literal runs outside wildcards, classes and braces, split at /", () => {
    const cases: [string, string[]][] = [
      ["**/src/*.test.{ts,tsx}", ["src", ".test."]],
      ["a/**", ["a"]],
      ["./x*y*z", ["x", "y", "z"]],
      ["\\*a*[b]*{c,d}e", ["*a", "e"]],
      ["{a}*b?c*[x", ["{a}", "b", "c", "[x"]],
      ["{1..3}*{a,b}*", []],
    ];
    expect(cases.map(([glob]) => [glob, translateGlob(glob).required])).toEqual(cases);
  });
});

describe("what one character is, and classes V8 refuses", () => {
  it("`?` and a class take one character, an emoji too, on V8 as on RE2", () => {
    const cases = [
      // Up to two choice points: V8.
      ["a?c", "a😀c", true],
      ["a??c", "a😀c", false],
      ["[😀x]-*", "😀-1", true],
      // More: RE2.
      ["{a,b}?c*{d,e}", "a😀cxd", true],
      ["{a,b}??c*{d,e}", "a😀cxd", false],
      // picomatch leaves `\~` in the regex, which V8 refuses with `u`: the glob still works, a
      // character is a UTF-16 unit there.
      ["\\~?", "~a", true],
      ["\\~?", "~😀", false],
    ] as const;
    expect(cases.map(([glob, path]) => [glob, path, compileGlob(glob)(path)])).toEqual(cases);
  });

  it("a class out of order is an invalid glob on V8 as on RE2", () => {
    expect(() => compileGlob("[z-a]")).toThrow(/^invalid glob "\[z-a\]": .*Range out of order/);
    expect(() => compileGlob("*.*.*[z-a]")).toThrow(/^invalid glob "\*\.\*\.\*\[z-a\]"/);
  });
});
