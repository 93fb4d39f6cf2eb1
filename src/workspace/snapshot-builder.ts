import type { ArchiveItem, SkippedEntry, SkipReason } from "./archive-entry";
import { archiveInvalid, archivePathsTooLong, archiveTooLarge, archiveTooManyFiles } from "./archive-errors";
import { WorkspaceError } from "./errors";
import type { EventLoopTurns } from "./event-loop-turns";
import type { IngestLimits } from "./limits";
import type { PackWriter } from "./pack";
import { comparePaths, parentOf, resolveWorkspacePath } from "./paths";
import type { SearchIndexBuilder } from "./search/index-builder";
import type { IndexEntry, WorkspaceIndex } from "./snapshot-layout";

/** Symlink chains longer than this are left out as unresolved. */
const MAX_LINK_HOPS = 16;
const DEFAULT_FILE_MODE = 0o644;

interface PendingLink {
  /** The entry's name as the archive wrote it: what `skipped` lists, like every other entry's. */
  name: string;
  path: string;
  /** Canonical target path. */
  target: string;
  kind: "symlink" | "hardlink";
}

/**
 * Applies the snapshot policy to archive entries in order: files are appended to the pack, hostile
 * or unusable entries are skipped with a reason, and whole-archive limits throw. Links that resolve
 * to a file inside the archive become a second index entry over the same pack bytes (no copy);
 * anything else about links is skipped.
 */
export class SnapshotBuilder {
  readonly skipped: SkippedEntry[] = [];
  private readonly files = new Map<string, IndexEntry>();
  private readonly links = new Map<string, PendingLink>();
  private readonly dirs = new Set<string>();
  private entries = 0;
  private pathChars = 0;
  private totalBytes = 0;

  constructor(
    private readonly pack: PackWriter,
    private readonly limits: IngestLimits,
    /** Indexes every file's text as it is stored (absent: no search index). */
    private readonly search?: SearchIndexBuilder,
  ) {}

  async add(item: ArchiveItem, turns?: EventLoopTurns): Promise<void> {
    const { entry } = item;
    if (++this.entries > this.limits.maxArchiveFiles) throw archiveTooManyFiles(this.limits.maxArchiveFiles);
    // Skipped entries count too: their names are kept to be reported.
    this.pathChars += entry.name.length;
    if (this.pathChars > this.limits.maxPathChars) throw archivePathsTooLong(this.limits.maxPathChars, this.entries);
    let path: string;
    try {
      path = resolveWorkspacePath(entry.name);
    } catch (error) {
      return this.skip(entry.name, error instanceof WorkspaceError && error.code === "path_too_long" ? "path_too_long" : "path_escape");
    }
    if (entry.type === "directory") return this.addDirectory(entry.name, path);
    if (path === "") return this.skip(entry.name, "path_invalid");
    switch (entry.type) {
      case "device":
        return this.skip(entry.name, "device_file");
      case "special":
        return this.skip(entry.name, "special_file");
      case "unreadable":
        return this.skip(entry.name, entry.unreadableReason ?? "unsupported_compression");
    }
    const clash = this.clash(path);
    if (clash) return this.skip(entry.name, clash);
    if (entry.type === "symlink" || entry.type === "hardlink") return this.addLink(entry.name, path, entry.type, entry.linkTarget ?? "");
    if (entry.size > this.limits.maxFileBytes) return this.skip(entry.name, "file_too_large");
    this.countBytes(entry.size);
    const offset = this.pack.length;
    this.search?.beginFile(offset, entry.size);
    for await (const chunk of item.open()) {
      this.search?.addBytes(chunk);
      await this.pack.write(chunk);
      await turns?.afterBytes(chunk.byteLength);
    }
    await this.search?.endFile();
    const size = this.pack.length - offset;
    if (size !== entry.size) throw archiveInvalid(`entry '${entry.name}' holds ${size} bytes but declares ${entry.size}`);
    this.claimFile({ path, offset, size, mode: fileMode(entry.mode) });
  }

  /** Resolves links and returns the index (files and directories sorted by path). */
  finish(): WorkspaceIndex {
    for (const link of this.links.values()) {
      const target = this.resolveLink(link);
      if (!target) {
        this.skip(link.name, link.kind === "symlink" ? "symlink_unresolved" : "hard_link_unresolved");
        continue;
      }
      this.countBytes(target.size);
      this.files.set(link.path, { ...target, path: link.path });
    }
    const files = [...this.files.values()].sort((a, b) => comparePaths(a.path, b.path));
    return { version: 1, files, dirs: [...this.dirs].sort(comparePaths) };
  }

  get fileCount(): number {
    return this.files.size;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  private addDirectory(name: string, path: string): void {
    if (path === "") return;
    if (this.files.has(path) || this.links.has(path)) return this.skip(name, "path_conflict");
    if (this.fileAncestor(path)) return this.skip(name, "path_conflict");
    this.claimDirs(path);
  }

  private addLink(name: string, path: string, kind: PendingLink["kind"], rawTarget: string): void {
    const outside = kind === "symlink" ? "symlink_outside" : "hard_link_outside";
    if (/^([\\/]|[A-Za-z]:)/.test(rawTarget)) return this.skip(name, outside);
    let target: string;
    try {
      // Symlink targets are relative to the link's directory; hard-link targets to the archive root.
      target = resolveWorkspacePath(kind === "symlink" ? joinPath(parentOf(path), rawTarget) : rawTarget);
    } catch {
      return this.skip(name, outside);
    }
    this.links.set(path, { name, path, target, kind });
    this.claimDirs(parentOf(path));
  }

  private resolveLink(link: PendingLink): IndexEntry | undefined {
    let target = link.target;
    for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
      const file = this.files.get(target);
      if (file) return file;
      const next = this.links.get(target);
      if (!next) return undefined;
      target = next.target;
    }
    return undefined;
  }

  /** Why `path` cannot hold a file: it is taken, it is a directory, or a parent is a file. */
  private clash(path: string): SkipReason | null {
    if (this.files.has(path) || this.links.has(path)) return "duplicate_path";
    if (this.dirs.has(path) || this.fileAncestor(path)) return "path_conflict";
    return null;
  }

  private fileAncestor(path: string): boolean {
    for (let dir = parentOf(path); dir !== ""; dir = parentOf(dir)) {
      if (this.files.has(dir) || this.links.has(dir)) return true;
    }
    return false;
  }

  private claimFile(entry: IndexEntry): void {
    this.files.set(entry.path, entry);
    this.claimDirs(parentOf(entry.path));
  }

  private claimDirs(dir: string): void {
    for (; dir !== "" && !this.dirs.has(dir); dir = parentOf(dir)) this.dirs.add(dir);
  }

  private countBytes(size: number): void {
    this.totalBytes += size;
    if (this.totalBytes > this.limits.maxTotalBytes) {
      throw archiveTooLarge(`the archive's files add up to more than ${this.limits.maxTotalBytes} bytes`);
    }
  }

  private skip(path: string, reason: SkipReason): void {
    this.skipped.push({ path, reason });
  }
}

function fileMode(mode: number): number {
  const permissions = mode & 0o777;
  return permissions === 0 ? DEFAULT_FILE_MODE : permissions;
}

function joinPath(dir: string, relative: string): string {
  return dir === "" ? relative : `${dir}/${relative}`;
}
