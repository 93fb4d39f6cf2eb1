import picomatch from "picomatch";
import { GLOB_MAX_STARS_PER_SEGMENT } from "../domain";
import { ToolError } from "./tool";

/**
 * Compiles a glob as fd --glob and rg --glob read it: a pattern without `/` matches a file's name
 * at any depth (`*.ts`), one with `/` matches the path relative to the search directory
 * (`src/**\/*.ts`). Dotfiles match.
 */
export function compileGlob(pattern: string): (relativePath: string) => boolean {
  // picomatch's regex backtracks: each `*` in a name multiplies the work by its length
  // (`*a*a*a*a*b` on a 200-character name took 20 s), so a segment holds at most a few.
  const crowded = pattern
    .split("/")
    .find((segment) => segment !== "**" && (segment.replace(/\\./g, "").match(/\*/g)?.length ?? 0) > GLOB_MAX_STARS_PER_SEGMENT);
  if (crowded !== undefined) {
    throw new ToolError(
      "invalid_glob",
      `invalid glob ${JSON.stringify(pattern)}: at most ${GLOB_MAX_STARS_PER_SEGMENT} '*' in one path segment (${JSON.stringify(crowded)} has more; matching it can take exponential time)`,
    );
  }
  try {
    // picomatch's own `basename` option breaks patterns that contain "/", so choose here. Its regex
    // reads `.` as "any character but a line break"; a file name may hold one, so `s` lets it match.
    // By default it reads `[!a]` as "! or a" and `[a]` as also the text "[a]"; `posix` and
    // `literalBrackets: false` give brackets the meaning fd, rg and git give them.
    const source = picomatch.makeRe(asPlainGlob(pattern), { dot: true, windows: false, posix: true, literalBrackets: false });
    const regex = new RegExp(source.source, `${source.flags.replace("s", "")}s`);
    const match = (path: string) => regex.test(path);
    if (pattern.includes("/")) return match;
    return (path) => match(path.slice(path.lastIndexOf("/") + 1));
  } catch (err) {
    throw new ToolError("invalid_glob", `invalid glob ${JSON.stringify(pattern)}: ${(err as Error).message}`);
  }
}

/**
 * Which paths under the search root `root` a grep glob or find pattern takes. A pattern without `/`
 * matches names; one with `/` may name the path relative to the search root (as fd reads it:
 * `lib/*.ts` under `src`) or relative to the workspace root (as rg reads it from there:
 * `src/**\/*.ts` under `src`). A negated pattern (`!src/**`) leaves out what either names.
 */
export function globFilter(pattern: string, root: string): (path: string) => boolean {
  const matches = compileGlob(pattern);
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

/** Where the bracket expression opened at `open` ends, or -1 when nothing closes it (a `]` first is a member). */
function classEnd(pattern: string, open: number): number {
  let i = open + 1;
  if (pattern[i] === "!" || pattern[i] === "^") i++;
  if (pattern[i] === "]") i++;
  for (; i < pattern.length; i++) {
    if (pattern[i] === "\\") i++;
    else if (pattern[i] === "]") return i;
  }
  return -1;
}

/** `path` relative to the search root `root` (both canonical; `root` may be "" or the path itself). */
export function relativeTo(root: string, path: string): string {
  if (root === "") return path;
  if (path === root) return path.slice(path.lastIndexOf("/") + 1);
  return path.slice(root.length + 1);
}
