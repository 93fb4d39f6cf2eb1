import { WorkspaceError } from "./errors";
import type { OverlayStore } from "./overlay";
import { comparePaths, parentOf, resolveWorkspacePath, writeRefusal } from "./paths";
import type { SearchQuery } from "./search/query";
import { searchTextOf } from "./search/search-text";
import { loadWorkspace, type Snapshot } from "./snapshot";
import { isBinary } from "./text";
import type { SearchableText, SearchTextsOptions, WorkspaceDirent, WorkspaceFs, WorkspaceStat, WriteOptions } from "./workspace-fs";

/** Mode of files created by the session (existing files keep theirs). */
export const NEW_FILE_MODE = 0o644;
const DIR_STAT: WorkspaceStat = { type: "dir", size: 0, mode: 0o755 };

interface FileInfo {
  size: number;
  mode: number;
  inOverlay: boolean;
}

/** The merged tree, rebuilt lazily after each write through this object. */
interface View {
  files: string[];
  info: Map<string, FileInfo>;
  dirs: string[];
  dirSet: Set<string>;
  children?: Map<string, WorkspaceDirent[]>;
}

/**
 * `WorkspaceFs` over an immutable snapshot plus a session overlay: reads see the overlay first,
 * writes and deletions only ever touch the overlay. Write through this object (or open a new one)
 * so its cached view of the tree stays current.
 */
export class SnapshotWorkspaceFs implements WorkspaceFs {
  private view: View | null = null;

  constructor(
    readonly snapshot: Snapshot,
    readonly overlay: OverlayStore,
  ) {}

  files(): readonly string[] {
    return this.current().files;
  }

  dirs(): readonly string[] {
    return this.current().dirs;
  }

  stat(path: string): WorkspaceStat | null {
    const view = this.current();
    // A path that names a file as it is is canonical already (grep and find stat thousands).
    const canonical = view.info.has(path) ? path : resolveWorkspacePath(path);
    const file = view.info.get(canonical);
    if (file) return { type: "file", size: file.size, mode: file.mode };
    return canonical === "" || view.dirSet.has(canonical) ? { ...DIR_STAT } : null;
  }

  readdir(path: string): WorkspaceDirent[] {
    const canonical = resolveWorkspacePath(path);
    const view = this.current();
    if (view.info.has(canonical)) throw new WorkspaceError("not_a_directory", `'${canonical}' is a file, not a directory`);
    if (canonical !== "" && !view.dirSet.has(canonical)) throw new WorkspaceError("not_found", `no directory at '${canonical}'`);
    view.children ??= childrenOf(view);
    return (view.children.get(canonical) ?? []).map((d) => ({ ...d }));
  }

  async readFile(path: string, signal?: AbortSignal): Promise<Uint8Array> {
    const canonical = resolveWorkspacePath(path);
    const file = this.requireFile(canonical);
    if (file.inOverlay) return this.overlay.get(canonical) ?? new Uint8Array(0);
    return this.snapshot.readFile(canonical, signal);
  }

  async *readFiles(paths: readonly string[], signal?: AbortSignal): AsyncIterable<{ path: string; bytes: Uint8Array }> {
    const view = this.current();
    const fromSnapshot: string[] = [];
    for (const path of new Set(paths.map(resolveWorkspacePath))) {
      const file = view.info.get(path);
      if (!file) continue;
      if (!file.inOverlay) {
        fromSnapshot.push(path);
        continue;
      }
      signal?.throwIfAborted();
      yield { path, bytes: this.overlay.get(path) ?? new Uint8Array(0) };
    }
    yield* this.snapshot.readMany(fromSnapshot, signal);
  }

  async *searchTexts(
    paths: readonly string[],
    query: SearchQuery,
    signal?: AbortSignal,
    options?: SearchTextsOptions,
  ): AsyncIterable<SearchableText> {
    const view = this.current();
    const fromSnapshot: string[] = [];
    for (const path of new Set(paths.map((p) => (view.info.has(p) ? p : resolveWorkspacePath(p))))) {
      const file = view.info.get(path);
      if (!file) continue;
      if (!file.inOverlay) {
        fromSnapshot.push(path);
        continue;
      }
      // Changed files are not in the snapshot's index: always searched, never cached.
      signal?.throwIfAborted();
      const bytes = this.overlay.get(path) ?? new Uint8Array(0);
      if (!isBinary(bytes)) yield { path, text: searchTextOf(bytes), pieces: "all" };
    }
    yield* this.snapshot.searchTexts(fromSnapshot, query, signal, options);
  }

  /** The snapshot's files among `paths` (changed files are searched directly, never cached). */
  warmSearchTexts(paths: readonly string[], signal: AbortSignal): Promise<boolean> {
    const view = this.current();
    const fromSnapshot = paths.filter((path) => view.info.get(path)?.inOverlay === false);
    return this.snapshot.warmSearchTexts(fromSnapshot, signal);
  }

  async writeFile(path: string, bytes: Uint8Array, mode?: number, options?: WriteOptions): Promise<void> {
    const canonical = resolveWorkspacePath(path);
    const view = this.current();
    const refusal = writeRefusal(canonical, (p) => this.stat(p)?.type ?? null);
    if (refusal) throw refusal;
    const existing = options?.replace ? undefined : view.info.get(canonical)?.mode;
    this.overlay.put(canonical, bytes, existing ?? mode ?? NEW_FILE_MODE);
    this.view = null;
  }

  async removeDir(path: string): Promise<void> {
    const canonical = resolveWorkspacePath(path);
    const stat = this.stat(canonical);
    if (stat?.type === "file") throw new WorkspaceError("not_a_directory", `'${canonical}' is a file`);
    if (stat === null || canonical === "") return;
    if (this.current().files.some((file) => file.startsWith(`${canonical}/`))) throw new Error(`'${canonical}' still holds files`);
    this.overlay.whiteout(canonical);
    this.view = null;
  }

  async deleteFile(path: string): Promise<void> {
    const canonical = resolveWorkspacePath(path);
    this.requireFile(canonical);
    this.overlay.whiteout(canonical);
    this.view = null;
  }

  private requireFile(path: string): FileInfo {
    const view = this.current();
    const file = view.info.get(path);
    if (file) return file;
    if (path === "" || view.dirSet.has(path)) throw new WorkspaceError("is_directory", `'${path}' is a directory`);
    throw new WorkspaceError("not_found", `no file at '${path}'`);
  }

  private current(): View {
    this.view ??= buildView(this.snapshot, this.overlay);
    return this.view;
  }
}

function buildView(snapshot: Snapshot, overlay: OverlayStore): View {
  const info = new Map<string, FileInfo>();
  for (const entry of snapshot.index.files) info.set(entry.path, { size: entry.size, mode: entry.mode, inOverlay: false });
  const dirSet = new Set(snapshot.index.dirs);
  let deletions = false;
  const removedDirs = new Set<string>();
  for (const change of overlay.list()) {
    if (change.deleted) {
      info.delete(change.path);
      if (dirSet.has(change.path)) removedDirs.add(change.path);
      deletions = true;
      continue;
    }
    info.set(change.path, { size: change.size, mode: change.mode, inOverlay: true });
    for (let dir = parentOf(change.path); dir !== "" && !dirSet.has(dir); dir = parentOf(dir)) dirSet.add(dir);
  }
  if (deletions) dropEmptiedDirs(snapshot, info, dirSet, removedDirs);
  return { files: [...info.keys()].sort(comparePaths), info, dirs: [...dirSet].sort(comparePaths), dirSet };
}

/**
 * A directory whose files were all deleted (`rm -r`) is gone, with what is under it: otherwise it
 * was still listed, and `cp x old` copied into it instead of making a file. The overlay has no
 * directory entries, so like git it keeps no emptied directory; one uploaded empty stays until it
 * is removed itself (`removed`: its whiteout), and comes back with a file written under it.
 */
function dropEmptiedDirs(snapshot: Snapshot, info: Map<string, FileInfo>, dirSet: Set<string>, removed: ReadonlySet<string>): void {
  const ancestors = (paths: Iterable<string>) => {
    const dirs = new Set<string>();
    for (const path of paths) for (let dir = parentOf(path); dir !== "" && !dirs.has(dir); dir = parentOf(dir)) dirs.add(dir);
    return dirs;
  };
  const hadFiles = ancestors(snapshot.index.files.map((f) => f.path));
  const hasFiles = ancestors(info.keys());
  const dropped = new Set([...dirSet].filter((dir) => (hadFiles.has(dir) || removed.has(dir)) && !hasFiles.has(dir)));
  if (dropped.size === 0) return;
  for (const dir of [...dirSet]) {
    for (let at = dir; at !== ""; at = parentOf(at)) {
      if (dropped.has(at)) {
        dirSet.delete(dir);
        break;
      }
    }
  }
}

function childrenOf(view: View): Map<string, WorkspaceDirent[]> {
  const children = new Map<string, WorkspaceDirent[]>();
  const add = (path: string, type: WorkspaceDirent["type"]) => {
    const parent = parentOf(path);
    const name = parent === "" ? path : path.slice(parent.length + 1);
    let list = children.get(parent);
    if (!list) {
      list = [];
      children.set(parent, list);
    }
    list.push({ name, type });
  };
  for (const dir of view.dirs) add(dir, "dir");
  for (const file of view.files) add(file, "file");
  for (const list of children.values()) list.sort((a, b) => comparePaths(a.name, b.name));
  return children;
}

/**
 * Opens a session's view of a workspace. With `owner`, a workspace of another tenant is
 * `workspace_not_found`.
 */
export async function openWorkspace(
  bucket: R2Bucket,
  workspaceId: string,
  overlay: OverlayStore,
  owner?: string | null,
): Promise<SnapshotWorkspaceFs> {
  return new SnapshotWorkspaceFs(await loadWorkspace(bucket, workspaceId, owner), overlay);
}
