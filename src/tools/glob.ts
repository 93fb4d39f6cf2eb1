import picomatch from "picomatch";
import { RE2JS } from "re2js";
import { classEnd, translateGlob } from "./glob-re2";
import { ToolError } from "./tool";

/**
 * Compiles a glob as fd --glob and rg --glob read it: a pattern without `/` matches a file's name
 * at any depth (`*.ts`), one with `/` matches the path relative to the search directory
 * (`src/**\/*.ts`). Dotfiles match. `x/**` takes what is inside x, not x itself, as rg and fd
 * read it (picomatch and the RE2 translation also take x): a trailing `/**` is read as `/**\/*`.
 */
export function compileGlob(pattern: string, options: GlobOptions = {}): (relativePath: string) => boolean {
  // A leading `!` negates (`!!` does not), as picomatch reads it; handled here so that the regex
  // holds no look-ahead and can run on RE2.
  const bangs = /^!*/.exec(pattern)![0].length;
  const negated = bangs % 2 === 1;
  const body = insideOnly(pattern.slice(bangs));
  try {
    const test = body === "" ? () => false : bodyMatcher(body, options.ignoreCase === true);
    // picomatch's own `basename` option breaks patterns that contain "/", so choose here.
    const match = negated ? (path: string) => !test(path) : test;
    if (pattern.includes("/")) return match;
    return (path) => match(path.slice(path.lastIndexOf("/") + 1));
  } catch (err) {
    throw new ToolError("invalid_glob", `invalid glob ${JSON.stringify(pattern)}: ${(err as Error).message}`);
  }
}

export interface GlobOptions {
  /** Letters match in either case (find's smart case: fd's for a pattern without capitals). */
  ignoreCase?: boolean;
}

/** Whether `pattern` holds a capital letter: fd's smart case then matches case exactly, else in either case. */
export function hasCapital(pattern: string): boolean {
  return /[\p{Lu}\p{Lt}]/u.test(pattern);
}

/** A glob ending in `/**` with one segment more, so that it takes only what is below (`build/**` not `build`). */
function insideOnly(body: string): string {
  return body.endsWith("/**") && !body.endsWith("\\/**") ? `${body}/*` : body;
}

/**
 * How many parts of a glob its regex may try more than one way: wildcards (`*`, a run of them counted
 * once) and braces, outside classes and escapes.
 */
function choicePoints(glob: string): number {
  let count = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "\\") i++;
    else if (c === "[") i = Math.max(i, classEnd(glob, i));
    else if ((c === "*" && glob[i - 1] !== "*") || c === "{") count++;
  }
  return count;
}

/**
 * A matcher of a glob without its negation. picomatch's regex backtracks: with two choice points
 * (`**\/*.ts`, `*.{ts,tsx}`) the work grows with the square of a path's length at most, which V8 runs
 * fast; with more, with a higher power of it or exponentially (`*a*a*a*a*b` on a 200-character name
 * took 20 s, `**\/a` seven times over a path 60 deep 12 s, `{a,aa}` thirty times over 45 `a` 31 s), so
 * such a glob runs on RE2, in linear time. Not every glob does: RE2 in JS takes 0.3-0.7 us a path
 * where V8 takes 0.1 (bench/glob.bench.ts).
 */
function bodyMatcher(body: string, ignoreCase: boolean): (path: string) => boolean {
  if (choicePoints(body) > 2) {
    const { pattern, required } = translateGlob(body);
    const re2 = RE2JS.compile(pattern, RE2JS.DOTALL | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0));
    // Most paths lack a text the glob requires, and `includes` costs a tenth of RE2 in JS; one
    // character (`.`) is in nearly every path and only adds to the cost. (Not when case does not
    // count: `includes` is exact.)
    const texts = ignoreCase ? [] : required.filter((text) => text.length > 1);
    if (texts.length === 0) return (path) => re2.matches(path);
    return (path) => texts.every((text) => path.includes(text)) && re2.matches(path);
  }
  // By default picomatch reads `[!a]` as "! or a" and `[a]` as also the text "[a]"; `posix` and
  // `literalBrackets: false` give brackets the meaning fd, rg and git give them. `debug` makes a class
  // V8 refuses (`[z-a]`) an error, as on RE2, instead of a regex that matches nothing.
  const options = { dot: true, windows: false, posix: true, literalBrackets: false, nonegate: true, debug: true };
  const compiled = picomatch.makeRe(asPlainGlob(body), options);
  const regex = v8Regex(compiled.source, ignoreCase ? `${compiled.flags}i` : compiled.flags);
  return (path) => regex.test(path);
}

/**
 * picomatch's regex with `s` (it reads `.` as "any character but a line break", and a name may hold
 * one) and, where V8 takes it, `u`: then `?` and a class take one character, as on RE2 and in fd and
 * rg, not one UTF-16 unit (half an emoji). picomatch leaves a few escapes that `u` refuses (from
 * globs such as `\~` or `a#?` and a `}` that closes no brace); those globs keep UTF-16 units.
 */
function v8Regex(source: string, flags: string): RegExp {
  const plain = `${flags.replace("s", "")}s`;
  try {
    return new RegExp(source, `${plain}u`);
  } catch {
    return new RegExp(source, plain);
  }
}

/**
 * Which paths under the search root `root` a grep glob or find pattern takes. A pattern without `/`
 * matches names; one with `/` may name the path relative to the search root (as fd reads it:
 * `lib/*.ts` under `src`) or relative to the workspace root (as rg reads it from there:
 * `src/**\/*.ts` under `src`). A negated pattern (`!src/**`) leaves out what either names.
 */
export function globFilter(pattern: string, root: string, options: GlobOptions = {}): (path: string) => boolean {
  const matches = compileGlob(pattern, options);
  if (root === "" || !pattern.includes("/")) return (path) => matches(relativeTo(root, path));
  if (pattern.startsWith("!")) return (path) => matches(relativeTo(root, path)) && matches(path);
  return (path) => matches(relativeTo(root, path)) || matches(path);
}

/**
 * The pattern with the characters fd, rg and git read as themselves escaped for picomatch:
 * - `(`, `)` and `|`. Those globs have no extglobs (`@(a|b)`, `*(x)`, `!(x)`); picomatch's nest
 *   quantified groups whose regex backtracks exponentially (`@([!Z])*([!Z]|@(*([!Z])))Z` held the
 *   isolate for minutes over a 22-character name), and it leaves parentheses and `|` unescaped
 *   even with `noextglob`, so `+(a|b).ts` would match `+a.ts` instead of its own name.
 * - A `[` that no `]` closes (picomatch, with `posix`, would still turn a `[!` there into `[^`, so
 *   `a[!]b` matched the name `a[^]b`).
 */
function asPlainGlob(pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\") {
      out += pattern.slice(i, i + 2);
      i++;
    } else if (c === "[") {
      const end = classEnd(pattern, i);
      if (end === -1) out += "\\[";
      else {
        out += pattern.slice(i, end + 1);
        i = end;
      }
    } else if (c === "(" || c === ")" || c === "|") out += `\\${c}`;
    else out += c;
  }
  return out;
}

/** `path` relative to the search root `root` (both canonical; `root` may be "" or the path itself). */
export function relativeTo(root: string, path: string): string {
  if (root === "") return path;
  if (path === root) return path.slice(path.lastIndexOf("/") + 1);
  return path.slice(root.length + 1);
}
