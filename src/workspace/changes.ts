import { formatPatch, structuredPatch } from "diff";
import type { WorkspaceStat } from "./fs";
import type { OverlayStore } from "./overlay";
import { comparePaths } from "./snapshot-layout";

/** Lines of context around each change, as `git diff` uses. */
export const DIFF_CONTEXT_LINES = 3;
/** Like git: a NUL byte in the first 8000 bytes marks a file as binary. */
const BINARY_SNIFF_BYTES = 8000;

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

/** Compares every overlay entry with the base; unchanged content (and deleting what never existed) is dropped. */
export async function collectChanges(base: ChangeBase, overlay: OverlayStore, signal?: AbortSignal): Promise<FileChange[]> {
  const changes: FileChange[] = [];
  for (const entry of overlay.list()) {
    const stat = base.stat(entry.path);
    const before = stat?.type === "file" ? { bytes: await base.readFile(entry.path, signal), mode: stat.mode } : null;
    const after = entry.deleted ? null : { bytes: overlay.get(entry.path) ?? new Uint8Array(0), mode: entry.mode };
    if (!before && !after) continue;
    if (before && after && before.mode === after.mode && sameBytes(before.bytes, after.bytes)) continue;
    changes.push({ path: entry.path, before, after });
  }
  return changes;
}

/** `GET /changes`: the overlay against the snapshot as one git-style unified diff. */
export async function renderChanges(base: ChangeBase, overlay: OverlayStore, signal?: AbortSignal): Promise<string> {
  return renderUnifiedDiff(await collectChanges(base, overlay, signal));
}

/**
 * Renders changes as a git-style unified diff (`diff --git`, `a/` and `b/` prefixes, `/dev/null`
 * for added and deleted files, `\ No newline at end of file`), sorted by path, that `git apply`
 * accepts against the original tree. Binary files are reported as `Binary files ... differ`, as
 * `git diff` does without `--binary` (git cannot apply those lines).
 */
export function renderUnifiedDiff(changes: readonly FileChange[]): string {
  return [...changes].sort((a, b) => comparePaths(a.path, b.path)).map(renderFile).join("");
}

function renderFile({ path, before, after }: FileChange): string {
  const oldName = before ? `a/${path}` : "/dev/null";
  const newName = after ? `b/${path}` : "/dev/null";
  const oldMode = before ? gitMode(before.mode) : undefined;
  const newMode = after ? gitMode(after.mode) : undefined;
  const modes = {
    isGit: true,
    isCreate: !before,
    isDelete: !after,
    oldMode: before && after && oldMode === newMode ? undefined : oldMode,
    newMode: before && after && oldMode === newMode ? undefined : newMode,
  };
  const oldText = before ? textOf(before.bytes) : "";
  const newText = after ? textOf(after.bytes) : "";
  if (oldText === null || newText === null) {
    const header = formatPatch({ oldFileName: oldName, newFileName: newName, oldHeader: undefined, newHeader: undefined, hunks: [], ...modes });
    return `${header}Binary files ${quotePath(oldName)} and ${quotePath(newName)} differ\n`;
  }
  const patch = structuredPatch(oldName, newName, oldText, newText, undefined, undefined, { context: DIFF_CONTEXT_LINES });
  return formatPatch({ ...patch, ...modes });
}

function gitMode(mode: number): string {
  return mode & 0o111 ? "100755" : "100644";
}

/** The file as text, or null when it is binary (a NUL byte early on, or not valid UTF-8). */
function textOf(bytes: Uint8Array): string | null {
  if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Git's C-style quoting of names with control characters, quotes, backslashes or non-ASCII bytes. */
function quotePath(name: string): string {
  if (!/[\x00-\x1f"\\\x7f-\uffff]/.test(name)) return name;
  const escapes: Record<number, string> = { 7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\" };
  let out = '"';
  for (const byte of new TextEncoder().encode(name)) {
    out += escapes[byte] ?? (byte < 0x20 || byte >= 0x7f ? `\\${byte.toString(8).padStart(3, "0")}` : String.fromCharCode(byte));
  }
  return `${out}"`;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
