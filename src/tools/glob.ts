import picomatch from "picomatch";
import { ToolError } from "./tool";

/**
 * Compiles a glob as fd --glob and rg --glob read it: a pattern without `/` matches a file's name
 * at any depth (`*.ts`), one with `/` matches the path relative to the search directory
 * (`src/**\/*.ts`). Dotfiles match.
 */
export function compileGlob(pattern: string): (relativePath: string) => boolean {
  try {
    // picomatch's own `basename` option breaks patterns that contain "/", so choose here. Its regex
    // reads `.` as "any character but a line break"; a file name may hold one, so `s` lets it match.
    const source = picomatch.makeRe(pattern, { dot: true, windows: false });
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
