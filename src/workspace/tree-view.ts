import type { OverlayEntry } from "./overlay";
import { comparePaths, parentOf } from "./paths";
import type { WorkspaceDirent } from "./workspace-fs";

export interface FileInfo {
  size: number;
  mode: number;
  inOverlay: boolean;
}

/** What a tree view is built from: the snapshot's index. */
export interface UploadedTree {
  files: readonly { path: string; size: number; mode: number }[];
  dirs: readonly string[];
}

/**
 * The merged tree of a snapshot and its overlay, kept current write by write: a write or a
 * deletion costs the depth of its path, not the size of the tree (rebuilt per write, a loop that
 * made 5,000 files took 17 s and grew with every file). Sorted lists are made again only when asked
 * for after a change.
 *
 * Which directories exist: every one holding a file, and every uploaded one unless it, or a
 * directory above it, is emptied (its files were all deleted, as `rm -r` does) or removed itself
 * (an uploaded empty directory's whiteout). Like git, the overlay keeps no emptied directory.
 */
export class TreeView {
  readonly info = new Map<string, FileInfo>();
  readonly dirSet: Set<string>;
  private sortedFiles: string[] | null = null;
  private sortedDirs: string[] | null = null;
  /** Each directory's entries by name (made when first asked for); sorted per directory on demand. */
  private entries: Map<string, Map<string, WorkspaceDirent["type"]>> | null = null;
  private readonly sortedChildren = new Map<string, WorkspaceDirent[]>();
  /** The uploaded directories under each one, for bringing them back. */
  private uploadedSubdirs: Map<string, string[]> | null = null;
  /** Files under each directory, at any depth; made at the first deletion (before one, nothing is emptied). */
  private counts: Map<string, number> | null = null;
  /** Directories that held uploaded files: emptied, they go (with what is under them). */
  private uploadedParents: Set<string> | null = null;
  /** Uploaded directories removed by a whiteout of their own. */
  private readonly removed = new Set<string>();
  private readonly uploadedDirs: ReadonlySet<string>;

  constructor(
    private readonly uploaded: UploadedTree,
    changes: Iterable<OverlayEntry>,
  ) {
    for (const entry of uploaded.files) this.info.set(entry.path, { size: entry.size, mode: entry.mode, inOverlay: false });
    this.uploadedDirs = new Set(uploaded.dirs);
    this.dirSet = new Set(uploaded.dirs);
    let deletions = false;
    for (const change of changes) {
      // An uploaded directory's path holding a whiteout or a file: it was removed (a file can be
      // written there only after that, and its row replaces the whiteout's).
      if (this.uploadedDirs.has(change.path)) {
        this.removed.add(change.path);
        deletions = true;
      }
      if (!change.deleted) {
        this.info.set(change.path, { size: change.size, mode: change.mode, inOverlay: true });
        this.addParents(change.path);
        continue;
      }
      deletions = true;
      this.info.delete(change.path);
    }
    if (deletions) this.dropEmptied();
  }

  files(): readonly string[] {
    this.sortedFiles ??= [...this.info.keys()].sort(comparePaths);
    return this.sortedFiles;
  }

  dirs(): readonly string[] {
    this.sortedDirs ??= [...this.dirSet].sort(comparePaths);
    return this.sortedDirs;
  }

  /** The entries of a directory, sorted by name (`[]` for one without any). */
  children(dir: string): readonly WorkspaceDirent[] {
    let sorted = this.sortedChildren.get(dir);
    if (!sorted) {
      sorted = [...(this.tree().get(dir) ?? [])].map(([name, type]) => ({ name, type })).sort((a, b) => comparePaths(a.name, b.name));
      this.sortedChildren.set(dir, sorted);
    }
    return sorted;
  }

  /** A file was written (created, or replaced with new content or mode). */
  written(path: string, size: number, mode: number): void {
    const existed = this.info.has(path);
    this.info.set(path, { size, mode, inOverlay: true });
    if (existed) return;
    if (this.uploadedDirs.has(path)) this.removed.add(path);
    this.sortedFiles = null;
    this.addChild(path, "file");
    const revived = this.countFile(path, +1);
    this.addParents(path);
    for (const dir of revived) this.reviveUnder(dir);
  }

  /** A file was deleted. */
  deleted(path: string): void {
    if (!this.info.has(path)) return;
    this.countFile(path, -1);
    this.info.delete(path);
    this.sortedFiles = null;
    this.removeChild(path);
    // The directories this left without files: a contiguous run from the parent up.
    const emptied: string[] = [];
    for (let dir = parentOf(path); dir !== "" && this.counts!.get(dir) === 0; dir = parentOf(dir)) emptied.push(dir);
    const parents = this.uploadedParentSet();
    const top = emptied.findLast((dir) => parents.has(dir) || this.removed.has(dir));
    if (top !== undefined) this.dropWithDescendants(top);
    // Above the emptied upload (or with none), a directory only a write made goes with its last file.
    for (const dir of emptied) if (!this.uploadedDirs.has(dir)) this.removeDirEntry(dir);
  }

  private addParents(path: string): void {
    for (let dir = parentOf(path); dir !== "" && !this.dirSet.has(dir); dir = parentOf(dir)) this.addDirEntry(dir);
  }

  /** Moves the file counts of `path`'s directories by `delta`; returns those that were empty and now are not. */
  private countFile(path: string, delta: number): string[] {
    this.counts ??= delta < 0 ? this.makeCounts() : null;
    if (!this.counts) return [];
    const filled: string[] = [];
    for (let dir = parentOf(path); dir !== ""; dir = parentOf(dir)) {
      const before = this.counts.get(dir) ?? 0;
      this.counts.set(dir, before + delta);
      if (before === 0 && delta > 0) filled.push(dir);
    }
    return filled;
  }

  /** A directory holds files again: the uploaded ones under it that only its emptiness dropped come back. */
  private reviveUnder(dir: string): void {
    if (!this.uploadedParentSet().has(dir) && !this.removed.has(dir)) return;
    if (!this.uploadedSubdirs) {
      this.uploadedSubdirs = new Map();
      for (const uploaded of this.uploaded.dirs) {
        const parent = parentOf(uploaded);
        const list = this.uploadedSubdirs.get(parent) ?? [];
        if (list.length === 0) this.uploadedSubdirs.set(parent, list);
        list.push(uploaded);
      }
    }
    // Below a directory still dropped, everything is too.
    const pending = [...(this.uploadedSubdirs.get(dir) ?? [])];
    for (let candidate = pending.pop(); candidate !== undefined; candidate = pending.pop()) {
      if (this.dropped(candidate)) continue;
      if (!this.dirSet.has(candidate)) this.addDirEntry(candidate);
      pending.push(...(this.uploadedSubdirs.get(candidate) ?? []));
    }
  }

  /** Whether an emptied or removed directory at or above `dir` drops it. */
  private dropped(dir: string): boolean {
    const parents = this.uploadedParentSet();
    for (let at = dir; at !== ""; at = parentOf(at)) {
      if ((parents.has(at) || this.removed.has(at)) && (this.counts?.get(at) ?? 0) === 0) return true;
    }
    return false;
  }

  private dropEmptied(): void {
    this.counts = this.makeCounts();
    for (const dir of [...this.dirSet]) if ((this.counts.get(dir) ?? 0) === 0 && this.dropped(dir)) this.dirSet.delete(dir);
  }

  private dropWithDescendants(dir: string): void {
    const tree = this.tree();
    const found = [dir];
    for (let i = 0; i < found.length; i++) {
      for (const [name, type] of tree.get(found[i]!) ?? []) if (type === "dir") found.push(`${found[i]}/${name}`);
    }
    for (const gone of found.reverse()) this.removeDirEntry(gone);
  }

  private addDirEntry(dir: string): void {
    this.dirSet.add(dir);
    this.sortedDirs = null;
    this.addChild(dir, "dir");
  }

  private removeDirEntry(dir: string): void {
    if (!this.dirSet.delete(dir)) return;
    this.sortedDirs = null;
    this.removeChild(dir);
    this.entries?.delete(dir);
    this.sortedChildren.delete(dir);
  }

  private uploadedParentSet(): Set<string> {
    if (!this.uploadedParents) {
      this.uploadedParents = new Set();
      for (const { path } of this.uploaded.files) {
        for (let dir = parentOf(path); dir !== "" && !this.uploadedParents.has(dir); dir = parentOf(dir)) this.uploadedParents.add(dir);
      }
    }
    return this.uploadedParents;
  }

  private makeCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const path of this.info.keys()) {
      for (let dir = parentOf(path); dir !== ""; dir = parentOf(dir)) counts.set(dir, (counts.get(dir) ?? 0) + 1);
    }
    return counts;
  }

  private tree(): Map<string, Map<string, WorkspaceDirent["type"]>> {
    if (!this.entries) {
      this.entries = new Map();
      for (const dir of this.dirSet) this.addChild(dir, "dir");
      for (const file of this.info.keys()) this.addChild(file, "file");
    }
    return this.entries;
  }

  private addChild(path: string, type: WorkspaceDirent["type"]): void {
    if (!this.entries) return;
    const parent = parentOf(path);
    const names = this.entries.get(parent) ?? new Map<string, WorkspaceDirent["type"]>();
    if (names.size === 0) this.entries.set(parent, names);
    names.set(nameOf(path, parent), type);
    this.sortedChildren.delete(parent);
  }

  private removeChild(path: string): void {
    const parent = parentOf(path);
    this.entries?.get(parent)?.delete(nameOf(path, parent));
    this.sortedChildren.delete(parent);
  }
}

function nameOf(path: string, parent: string): string {
  return parent === "" ? path : path.slice(parent.length + 1);
}
