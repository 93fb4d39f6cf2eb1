import { WorkspaceError } from "./errors";
import type { OverlayStore } from "./overlay";
import { resolveWorkspacePath, writeRefusal } from "./paths";
import type { SearchQuery } from "./search/query";
import { searchTextOf } from "./search/search-text";
import { loadWorkspace, type Snapshot } from "./snapshot";
import { decodeText, isBinary } from "./text";
import { type FileInfo, TreeView } from "./tree-view";
import type {
  SearchableText,
  SearchTextsOptions,
  WorkspaceBase,
  WorkspaceDirent,
  WorkspaceFs,
  WorkspaceStat,
  WriteOptions,
} from "./workspace-fs";

/** Mode of files created by the session (existing files keep theirs). */
export const NEW_FILE_MODE = 0o644;
const DIR_STAT: WorkspaceStat = { type: "dir", size: 0, mode: 0o755 };

/**
 * `WorkspaceFs` over an immutable snapshot plus a session overlay: reads see the overlay first,
 * writes and deletions only ever touch the overlay. Write through this object (or open a new one)
 * so its cached view of the tree stays current.
 */
export class SnapshotWorkspaceFs implements WorkspaceFs {
  /** The merged tree, made at first use and kept current by the writes through this object. */
  private view: TreeView | null = null;
  /** `view` is the snapshot's unchanged tree, which other sessions share: never changed in place. */
  private viewShared = false;

  constructor(
    readonly snapshot: Snapshot,
    readonly overlay: OverlayStore,
  ) {}

  files(): readonly string[] {
    return this.current().files();
  }

  dirs(): readonly string[] {
    return this.current().dirs();
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
    return view.children(canonical).map((d) => ({ ...d }));
  }

  async readFile(path: string, signal?: AbortSignal): Promise<Uint8Array> {
    const canonical = resolveWorkspacePath(path);
    const file = this.requireFile(canonical);
    if (file.inOverlay) return this.overlay.get(canonical) ?? new Uint8Array(0);
    return this.snapshot.readFile(canonical, signal);
  }

  async readText(path: string, signal?: AbortSignal): Promise<string> {
    const canonical = resolveWorkspacePath(path);
    const file = this.requireFile(canonical);
    if (file.inOverlay) return decodeText(this.overlay.get(canonical) ?? new Uint8Array(0));
    return this.snapshot.readText(canonical, signal);
  }

  /** What a HEAD of the file answers: its size, and no stream (one would hold a download's place for nothing, hunt 85). */
  fileSize(path: string): number {
    return this.requireFile(resolveWorkspacePath(path)).size;
  }

  /**
   * One file as a stream with its size, for a download: a changed one from the overlay (`changed`:
   * produced by this object as it is read), the rest straight from R2.
   */
  async fileStream(path: string): Promise<{ size: number; body: ReadableStream<Uint8Array>; changed: boolean }> {
    const canonical = resolveWorkspacePath(path);
    const file = this.requireFile(canonical);
    if (file.inOverlay) {
      const stream = this.overlay.stream(canonical) ?? { size: 0, body: new Response(new Uint8Array(0)).body! };
      return { ...stream, changed: true };
    }
    const { entry, body } = await this.snapshot.fileStream(canonical);
    return { size: entry.size, body, changed: false };
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
    const stored = (options?.replace ? undefined : view.info.get(canonical)?.mode) ?? mode ?? NEW_FILE_MODE;
    this.overlay.put(canonical, bytes, stored);
    this.ownView()?.written(canonical, bytes.byteLength, stored);
  }

  async removeDir(path: string): Promise<void> {
    const canonical = resolveWorkspacePath(path);
    const stat = this.stat(canonical);
    if (stat?.type === "file") throw new WorkspaceError("not_a_directory", `'${canonical}' is a file`);
    if (stat === null || canonical === "") return;
    if (
      this.current()
        .files()
        .some((file) => file.startsWith(`${canonical}/`))
    )
      throw new Error(`'${canonical}' still holds files`);
    this.overlay.whiteout(canonical);
    // Rare: the tree is made again, with the directory's whiteout.
    this.view = null;
  }

  async deleteFile(path: string): Promise<void> {
    const canonical = resolveWorkspacePath(path);
    this.requireFile(canonical);
    this.overlay.whiteout(canonical);
    this.ownView()?.deleted(canonical);
  }

  base(): WorkspaceBase {
    const { snapshot, overlay } = this;
    return {
      files: () => snapshot.unchangedTree().files(),
      stat: (path) => snapshot.stat(path),
      readFile: (path, signal) => snapshot.readFile(path, signal),
      overlaid: () => overlay.list().map((entry) => entry.path),
    };
  }

  private requireFile(path: string): FileInfo {
    const view = this.current();
    const file = view.info.get(path);
    if (file) return file;
    if (path === "" || view.dirSet.has(path)) throw new WorkspaceError("is_directory", `'${path}' is a directory`);
    throw new WorkspaceError("not_found", `no file at '${path}'`);
  }

  private current(): TreeView {
    if (!this.view) {
      const changes = this.overlay.list();
      // A session without changes sees the snapshot's own tree: one for every such session in the isolate.
      this.viewShared = changes.length === 0;
      this.view = this.viewShared ? this.snapshot.unchangedTree() : new TreeView(this.snapshot.index, changes);
    }
    return this.view;
  }

  /** The view to bring up to date after a change, or null when the next read makes it (from the overlay, change included). */
  private ownView(): TreeView | null {
    if (this.viewShared) this.view = null;
    this.viewShared = false;
    return this.view;
  }
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
