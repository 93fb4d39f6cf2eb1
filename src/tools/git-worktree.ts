import { type FileChange, gitMode, sameBytes } from "../workspace/changes";
import { comparePaths, parentOf } from "../workspace/paths";
import type { WorkspaceBase, WorkspaceFs } from "../workspace/workspace-fs";
import type { IgnoreRules } from "./workspace-walk";

/**
 * What the shell's `git` sees (bash-git.ts): the snapshot as uploaded is HEAD and the index (nothing
 * is ever staged), the session's view is the working tree. A file of the snapshot is tracked; a file
 * only the view has is untracked, or ignored when `.gitignore` says so.
 */
export interface WorktreeState {
  /** Tracked files whose bytes or executable bit differ, or that are gone, sorted by path. */
  changed: { path: string; deleted: boolean }[];
  /** Untracked files .gitignore does not exclude, sorted. */
  untracked: string[];
  /** Untracked files .gitignore excludes, sorted. */
  ignored: string[];
}

/** Reads a file of one side, counted against the command's read budget (bash-git.ts). */
export type SideReader = (path: string) => Promise<Uint8Array>;

export interface Sides {
  base: WorkspaceBase;
  view: WorkspaceFs;
  readBase: SideReader;
  readView: SideReader;
}

/**
 * Compares every path the session wrote or deleted with the snapshot: a file of the same size is
 * read on both sides, one of another size or mode is changed without reading.
 */
export async function worktreeState({ base, view, readBase, readView }: Sides, rules: IgnoreRules): Promise<WorktreeState> {
  const state: WorktreeState = { changed: [], untracked: [], ignored: [] };
  for (const path of [...base.overlaid()].sort(comparePaths)) {
    const before = base.stat(path);
    const after = view.stat(path);
    if (before?.type === "file") {
      if (after?.type !== "file") state.changed.push({ path, deleted: true });
      else if (gitMode(before.mode) !== gitMode(after.mode) || before.size !== after.size) state.changed.push({ path, deleted: false });
      else if (!sameBytes(await readBase(path), await readView(path))) state.changed.push({ path, deleted: false });
    } else if (after?.type === "file") {
      (rules.ignores(path, false) ? state.ignored : state.untracked).push(path);
    }
  }
  return state;
}

/** Both sides of a tracked change, for a diff. */
export async function changeOf({ base, view, readBase, readView }: Sides, path: string, deleted: boolean): Promise<FileChange> {
  const before = base.stat(path);
  const after = deleted ? null : view.stat(path);
  return {
    path,
    before: before ? { bytes: await readBase(path), mode: before.mode } : null,
    after: after ? { bytes: await readView(path), mode: after.mode } : null,
  };
}

/**
 * Untracked files as `git status` lists them by default: a directory that holds no tracked file is
 * shown once, as `dir/`, in place of everything under it (the topmost such directory).
 */
export function collapseUntracked(untracked: readonly string[], tracked: readonly string[]): string[] {
  const shown = new Set<string>();
  for (const path of untracked) {
    const dirs: string[] = [];
    for (let dir = parentOf(path); dir !== ""; dir = parentOf(dir)) dirs.unshift(dir);
    const free = dirs.find((dir) => !holdsAny(tracked, `${dir}/`));
    shown.add(free === undefined ? path : `${free}/`);
  }
  return [...shown].sort(comparePaths);
}

/** Whether sorted `paths` has one starting with `prefix` (binary search). */
export function holdsAny(paths: readonly string[], prefix: string): boolean {
  let lo = 0;
  let hi = paths.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (comparePaths(paths[mid]!, prefix) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < paths.length && paths[lo]!.startsWith(prefix);
}
