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
    const source = picomatch.makeRe(pattern, { dot: true, windows: false, posix: true, literalBrackets: false });
    const regex = new RegExp(source.source, `${source.flags.replace("s", "")}s`);
    const match = (path: string) => regex.test(path);
    if (pattern.includes("/")) return match;
    return (path) => match(path.slice(path.lastIndexOf("/") + 1));
  } catch (err) {
    throw new ToolError("invalid_glob", `invalid glob ${JSON.stringify(pattern)}: ${(err as Error).message}`);
  }
}

/** `path` relative to the search root `root` (both canonical; `root` may be "" or the path itself). */
export function relativeTo(root: string, path: string): string {
  if (root === "") return path;
  if (path === root) return path.slice(path.lastIndexOf("/") + 1);
  return path.slice(root.length + 1);
}
