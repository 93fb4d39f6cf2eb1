import { formatPatch, type StructuredPatch, structuredPatch } from "diff";
import { MAX_DIFF_EDIT_LINES } from "../domain/limits";
import { gitBlobId, NULL_BLOB_ID, renderBinaryPatch } from "./git-binary-patch";
import type { OverlayStore } from "./overlay";
import { comparePaths } from "./paths";
import { textOf } from "./text";
import type { WorkspaceStat } from "./workspace-fs";

/** Lines of context around each change, as `git diff` uses. */
export const DIFF_CONTEXT_LINES = 3;

export interface FileVersion {
  bytes: Uint8Array;
  mode: number;
}

/** One path's change: `before` null means added, `after` null means deleted. */
export interface FileChange {
  path: string;
  before: FileVersion | null;
  after: FileVersion | null;
}

/** The unchanging side of a diff: a `Snapshot` (never the merged `WorkspaceFs`, which sees the overlay). */
export interface ChangeBase {
  stat(path: string): WorkspaceStat | null;
  readFile(path: string, signal?: AbortSignal): Promise<Uint8Array>;
}

/** Compares every overlay entry with the base; unchanged content and git mode (and deleting what never existed) are dropped. */
export async function collectChanges(base: ChangeBase, overlay: OverlayStore, signal?: AbortSignal): Promise<FileChange[]> {
  const changes: FileChange[] = [];
  for (const entry of overlay.list()) {
    const change = await changeAt(base, overlay, entry.path, signal);
    if (change) changes.push(change);
  }
  return changes;
}

/** What the overlay changed at `path`, as it is now; null when nothing git would show. */
async function changeAt(base: ChangeBase, overlay: OverlayStore, path: string, signal?: AbortSignal): Promise<FileChange | null> {
  if (!overlay.entry(path)) return null;
  const stat = base.stat(path);
  const before = stat?.type === "file" ? { bytes: await base.readFile(path, signal), mode: stat.mode } : null;
  // The overlay's side is read after the await, entry and bytes together: a write meanwhile gives
  // one state of the file, never its old mode with new bytes.
  const entry = overlay.entry(path);
  if (!entry) return null;
  const after = entry.deleted ? null : { bytes: overlay.get(path) ?? new Uint8Array(0), mode: entry.mode };
  if (!before && !after) return null;
  // git records only whether a file is executable: 0664 and 0644 are the same to it, and a
  // change it cannot express would leave a bare header that makes `git apply` refuse the patch.
  if (before && after && gitMode(before.mode) === gitMode(after.mode) && sameBytes(before.bytes, after.bytes)) return null;
  return { path, before, after };
}

/**
 * `GET /changes`: the overlay against the snapshot as one git-style unified diff, one file's part at
 * a time in path order, so that neither side of every changed file is held at once (deleting a
 * large snapshot's files is a diff of all their lines). Each file is diffed as it is when its turn
 * comes; the paths are those changed when the diff started.
 */
export async function* changedFileDiffs(base: ChangeBase, overlay: OverlayStore, signal?: AbortSignal): AsyncGenerator<string> {
  const paths = overlay
    .list()
    .map((entry) => entry.path)
    .sort(comparePaths);
  for (const path of paths) {
    const change = await changeAt(base, overlay, path, signal);
    if (change) yield await renderFile(change);
  }
}

/** The whole of `changedFileDiffs` as one string. */
export async function renderChanges(base: ChangeBase, overlay: OverlayStore, signal?: AbortSignal): Promise<string> {
  let out = "";
  for await (const part of changedFileDiffs(base, overlay, signal)) out += part;
  return out;
}

/**
 * Renders changes as a git-style diff (`diff --git`, `a/` and `b/` prefixes, `/dev/null` for added
 * and deleted files, `\ No newline at end of file`), sorted by path, that `git apply` accepts
 * against the original tree. Binary files get a full `index` line and a `GIT binary patch`, as
 * `git diff --binary` writes them; text files get no `index` line (git apply does not need one).
 */
export async function renderUnifiedDiff(changes: readonly FileChange[]): Promise<string> {
  let out = "";
  for (const change of [...changes].sort((a, b) => comparePaths(a.path, b.path))) out += await renderFile(change);
  return out;
}

/**
 * How a file's diff is written: `apply` for `git apply` (`/changes`: binary files as a full patch
 * after a full-length `index` line, text files without one), `show` as `git diff` shows it
 * (`index` lines with abbreviated ids on every file, "Binary files ... differ").
 */
export type DiffStyle = "apply" | "show";

/** One file's part of a diff, and what `git diff --stat` counts of it. */
export interface FileDiff {
  text: string;
  /** Lines added and removed; 0 for a binary file. */
  added: number;
  removed: number;
  binary: boolean;
}

/** Git's abbreviation of object ids in `index` lines. */
const SHORT_ID_CHARS = 7;

async function renderFile(change: FileChange): Promise<string> {
  return (await diffFile(change, "apply")).text;
}

/** One changed file as a git-style diff (see `renderUnifiedDiff`), in `style`. */
export async function diffFile({ path, before, after }: FileChange, style: DiffStyle): Promise<FileDiff> {
  const oldName = before ? `a/${path}` : "/dev/null";
  const newName = after ? `b/${path}` : "/dev/null";
  const oldMode = before ? gitMode(before.mode) : undefined;
  const newMode = after ? gitMode(after.mode) : undefined;
  const sameMode = before !== null && after !== null && oldMode === newMode;
  const modes = {
    isGit: true,
    isCreate: !before,
    isDelete: !after,
    oldMode: sameMode ? undefined : oldMode,
    newMode: sameMode ? undefined : newMode,
  };
  const header = formatPatch({
    oldFileName: oldName,
    newFileName: newName,
    oldHeader: undefined,
    newHeader: undefined,
    hunks: [],
    ...modes,
  });
  // Only the mode changed: git writes no index line and no body either.
  if (before && after && sameBytes(before.bytes, after.bytes)) return { text: header, added: 0, removed: 0, binary: false };
  const index = async (chars: number) => {
    const oldId = before ? await gitBlobId(before.bytes) : NULL_BLOB_ID;
    const newId = after ? await gitBlobId(after.bytes) : NULL_BLOB_ID;
    return `index ${oldId.slice(0, chars)}..${newId.slice(0, chars)}${sameMode ? ` ${oldMode}` : ""}\n`;
  };
  const oldText = before ? textOf(before.bytes) : "";
  const newText = after ? textOf(after.bytes) : "";
  if (oldText !== null && newText !== null) {
    const options = { context: DIFF_CONTEXT_LINES, maxEditLength: MAX_DIFF_EDIT_LINES };
    const patch =
      structuredPatch(oldName, newName, oldText, newText, undefined, undefined, options) ??
      wholeReplacement(oldName, newName, oldText, newText);
    let added = 0;
    let removed = 0;
    for (const hunk of patch.hunks) {
      for (const line of hunk.lines) {
        if (line[0] === "+") added++;
        else if (line[0] === "-") removed++;
      }
    }
    const text = formatPatch({ ...patch, ...modes });
    if (style === "apply") return { text, added, removed, binary: false };
    // The index line goes after the header's mode lines, before `---` (or last, for an empty file);
    // a range of one line is written without its length, as git does (`@@ -1 +1,2 @@`).
    let body = text
      .slice(header.length)
      .replace(
        /^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@/gm,
        (_, a, m = "", b, n = "") => `@@ -${a}${m === ",1" ? "" : m} +${b}${n === ",1" ? "" : n} @@`,
      );
    // git ends the `---` and `+++` lines of a name holding a space with a tab (for patch(1)).
    if (path.includes(" ")) body = body.replace(/^(--- .*)\n(\+\+\+ .*)\n/, "$1\t\n$2\t\n");
    return { text: `${header}${await index(SHORT_ID_CHARS)}${body}`, added, removed, binary: false };
  }
  const body =
    style === "apply" ? renderBinaryPatch(before?.bytes ?? null, after?.bytes ?? null) : `Binary files ${oldName} and ${newName} differ\n`;
  return {
    text: `${header}${await index(style === "apply" ? NULL_BLOB_ID.length : SHORT_ID_CHARS)}${body}`,
    added: 0,
    removed: 0,
    binary: true,
  };
}

/**
 * The patch that removes every line of `oldText` and adds every line of `newText`, in one hunk: each
 * half is a diff against nothing (linear), so their "no newline at end of file" marks come right.
 */
function wholeReplacement(oldName: string, newName: string, oldText: string, newText: string): StructuredPatch {
  const removed = structuredPatch(oldName, newName, oldText, "", undefined, undefined, { context: 0 }).hunks[0];
  const added = structuredPatch(oldName, newName, "", newText, undefined, undefined, { context: 0 }).hunks[0];
  // An empty side starts at 1 here: formatPatch writes a side of no lines one lower, as `-0,0`.
  const hunk = {
    oldStart: removed?.oldStart ?? 1,
    oldLines: removed?.oldLines ?? 0,
    newStart: added?.newStart ?? 1,
    newLines: added?.newLines ?? 0,
    lines: [...(removed?.lines ?? []), ...(added?.lines ?? [])],
  };
  return { oldFileName: oldName, newFileName: newName, oldHeader: undefined, newHeader: undefined, hunks: [hunk] };
}

export function gitMode(mode: number): string {
  return mode & 0o111 ? "100755" : "100644";
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
