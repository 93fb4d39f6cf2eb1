import { characterCount } from "../domain/characters";
import { MAX_PATH_CHARS } from "../domain/limits";
import { WorkspaceError } from "./errors";
import type { EntryType } from "./workspace-fs";

/**
 * Resolves a user- or model-supplied path to its canonical form inside the workspace root:
 * POSIX separators, no `.` segments, no leading or trailing `/`; `""` is the root itself.
 * Absolute paths, drive letters, NUL bytes and any `..` that would leave the root are refused
 * with `path_escape` (a `..` that stays inside, like `a/../b`, is resolved). Paths longer than
 * `MAX_PATH_CHARS` are refused with `path_too_long`: they escape nothing, so they are not called escapes.
 */
export function resolveWorkspacePath(input: string): string {
  return resolvePath(input, undefined);
}

/**
 * `resolveWorkspacePath` for a root also seen at `mountPoint` (the tools pass the shell's
 * `/workspace`): a path at or under it names the same place as in the shell, `/workspace/src/a.ts`
 * is `src/a.ts`. Other absolute paths are refused as ever.
 */
export function resolveMountedPath(input: string, mountPoint: string): string {
  return resolvePath(input, mountPoint);
}

function resolvePath(input: string, mountPoint: string | undefined): string {
  if (input.includes("\0")) throw escapeError(input, "contains a NUL byte");
  // Only a path of more UTF-16 units than the limit can have more characters than it.
  const characters = input.length > MAX_PATH_CHARS ? characterCount(input) : input.length;
  if (characters > MAX_PATH_CHARS) {
    throw new WorkspaceError("path_too_long", `path ${shown(input)} is ${characters} characters long; the limit is ${MAX_PATH_CHARS}`);
  }
  const slashed = unmounted(input, mountPoint).replaceAll("\\", "/");
  if (slashed.startsWith("/")) {
    const outside = mountPoint === undefined ? "" : ` and not under ${mountPoint}`;
    throw escapeError(input, `is absolute${outside}; use a path relative to the workspace root`);
  }
  if (/^[A-Za-z]:/.test(slashed)) throw escapeError(input, "has a drive letter; use a path relative to the workspace root");
  const parts: string[] = [];
  for (const segment of slashed.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (parts.length === 0) throw escapeError(input, "leaves the workspace root");
      parts.pop();
      continue;
    }
    parts.push(segment);
  }
  return parts.join("/");
}

/**
 * `path` relative to the workspace root when it is `mountPoint` or under it (`/workspace/src/` is
 * `./src/`, a trailing `/` kept), else `path` as it is.
 */
export function unmounted(path: string, mountPoint: string | undefined): string {
  if (mountPoint === undefined || (path !== mountPoint && !path.startsWith(`${mountPoint}/`))) return path;
  return `.${path.slice(mountPoint.length)}`;
}

function escapeError(input: string, why: string): WorkspaceError {
  return new WorkspaceError("path_escape", `path ${shown(input)} ${why}`);
}

/** The path for a message: quoted, NUL bytes visible, cut to 200 UTF-16 units (never inside a surrogate pair). */
function shown(input: string): string {
  const visible = input.replaceAll("\0", "\\0");
  const lead = visible.charCodeAt(199);
  const end = lead >= 0xd800 && lead <= 0xdbff ? 199 : 200;
  return JSON.stringify(visible.slice(0, end));
}

/**
 * Orders paths by UTF-16 code units (byte order for ASCII, like `git` and `LC_ALL=C sort`). Every
 * sorted listing of the workspace uses it, so tools, snapshots and diffs agree on the order.
 */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The parent directory of a canonical path (`""` for top-level entries). */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

/**
 * Why no file can be written at the canonical `path`, or null when one can: the root or a directory
 * is there (`is_directory`), or an ancestor is a file (`not_a_directory`). `kindOf` says what the tree
 * holds at a path. The one rule every writer applies: the write and edit tools, the snapshot+overlay
 * view and the shell's filesystem (which turns the code into an errno).
 */
export function writeRefusal(path: string, kindOf: (path: string) => EntryType | null): WorkspaceError | null {
  if (path === "" || kindOf(path) === "dir") return new WorkspaceError("is_directory", `'${path}' is a directory`);
  for (let dir = parentOf(path); dir !== ""; dir = parentOf(dir)) {
    if (kindOf(dir) === "file") return new WorkspaceError("not_a_directory", `'${dir}' is a file, so '${path}' cannot be created`);
  }
  return null;
}
