import type { BufferEncoding, CpOptions, FileContent, FsStat, IFileSystem, MkdirOptions, RmOptions } from "just-bash";
import { BASH_MAX_READ_BYTES, BASH_MAX_WRITTEN_BYTES, MAX_FILE_BYTES } from "../domain/limits";
import { WorkspaceError } from "../workspace/errors";
import { eventLoopTurn } from "../workspace/event-loop-turns";
import { comparePaths, parentOf, writeRefusal } from "../workspace/paths";
import type { WorkspaceFs } from "../workspace/workspace-fs";
import { BASH_FS_CALLS_PER_TURN } from "./bash-fs-turns";

type ReadFileOptions = Exclude<Parameters<IFileSystem["readFile"]>[1], BufferEncoding | undefined>;
export type WriteFileOptions = Exclude<Parameters<IFileSystem["writeFile"]>[2], BufferEncoding | undefined>;
export type DirentEntry = Awaited<ReturnType<NonNullable<IFileSystem["readdirWithFileTypes"]>>>[number];

/** Snapshot files carry no time; every entry shows the epoch. */
export const EPOCH = new Date(0);

/** Appends held back (`WorkspaceBashFs.appendFile`) are written once they add up to this much. */
const APPENDS_HELD_BYTES = 1024 * 1024;

/** Refused writes (and reads) a bash result names; the rest are counted. */
const REFUSED_WRITES_NAMED = 3;

/**
 * just-bash's IFileSystem over a WorkspaceFs, mounted at the shell's workspace directory. Paths it
 * receives are absolute within the mount ("/src/a.ts"); `..` cannot climb above "/". Reads see the
 * snapshot plus the overlay, and count against the command's read budget. Writes reach the overlay
 * only when `allowWrite`; otherwise they fail with EROFS, as on a read-only mount. WorkspaceFs has no
 * empty directories, so one `mkdir` made, or a deletion or move emptied, lasts only for the command (a
 * directory persists once a file is written in it); `cp` and `mv` give a new file its source's mode,
 * `chmod` sets a file's.
 */
export class WorkspaceBashFs implements IFileSystem {
  /** Empty directories of this command: made by `mkdir`, or emptied by `rm` / `mv`. */
  private readonly madeDirs = new Set<string>();
  /**
   * The file the last write put whole, until the next write or chmod: a chmod right after it (what a
   * copy from /tmp does) rewrites bytes that already counted. Any other chmod counts them again.
   */
  private lastWritten: string | null = null;
  private bytesWritten = 0;
  /**
   * Writes refused because the run is read-only: how many, and the first few (`rm '/workspace/d'`).
   * Some commands hide the refusal: `rm -f` drops every error, `sed -i`, `tee` and `chmod` report
   * any as "No such file or directory"; the tool says what happened instead.
   */
  readonly refused: { count: number; first: string[] } = { count: 0, first: [] };
  private bytesRead = 0;
  /** Reads refused because the command had read `BASH_MAX_READ_BYTES`: how many, and the first few. */
  readonly unread: { count: number; first: string[] } = { count: 0, first: [] };
  /** Workspace files this command wrote or deleted: they stay changed if it is stopped (told then). */
  readonly changed = new Set<string>();
  /** Appends not yet written, per workspace path (see `appendFile`), and their bytes in all. */
  private readonly appends = new Map<string, { path: string; chunks: Uint8Array[]; bytes: number }>();
  private appendedBytes = 0;
  private flushing: Promise<void> = Promise.resolve();
  /** Appends whose write failed when they were flushed: the file and why. */
  readonly unwritten: string[] = [];

  /**
   * @param mountPoint where the shell sees this filesystem; only used to show full paths in errors
   */
  constructor(
    private readonly fs: WorkspaceFs,
    private readonly allowWrite: boolean,
    private readonly signal?: AbortSignal,
    private readonly mountPoint = "",
  ) {}

  async readFile(path: string, options?: ReadFileOptions | BufferEncoding): Promise<string> {
    await this.flushAppends([toWorkspace(path)]);
    const encoding = typeof options === "string" ? options : options?.encoding;
    if (encoding === "latin1" || encoding === "binary") {
      const bytes = await this.readFileBuffer(path);
      let out = "";
      for (let i = 0; i < bytes.byteLength; i += 0x8000) out += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      return out;
    }
    // Any other encoding is read as UTF-8, as before; a snapshot's file from grep's text cache.
    const p = toWorkspace(path);
    this.countRead(p, path);
    try {
      return await this.fs.readText(p, this.signal);
    } catch (err) {
      throw errno(err, "open", this.shown(path));
    }
  }

  async readFileBuffer(path: string): Promise<Uint8Array> {
    const p = toWorkspace(path);
    await this.flushAppends([p]);
    this.countRead(p, path);
    try {
      return await this.fs.readFile(p, this.signal);
    } catch (err) {
      throw errno(err, "open", this.shown(path));
    }
  }

  async writeFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void> {
    await this.flushAppends([toWorkspace(path)]);
    this.precheck("write", path, content);
    await this.put(path, toBytes(content, options), "write");
  }

  /** Puts a file back as the snapshot has it (`git restore`): its bytes and mode, its directories made again. */
  async restore(path: string, bytes: Uint8Array, mode: number): Promise<void> {
    await this.flushAppends([toWorkspace(path)]);
    this.precheck("write", path, bytes);
    await this.put(path, bytes, "write", mode, true, bytes.byteLength, true);
  }

  /**
   * Appends to a file that is there wait in `appends` and are written together, before a call that reads,
   * writes, copies, moves or removes that file (or its directory), at 1 MiB, and when the command ends
   * (`flushAppends`; a stat counts them): each one rewrote the whole file, so
   * a loop of `>>` or awk's `print > f` took time growing with the square of the file (hunt 121: 10,000
   * lines of awk, 689 KB, passed a 10 s timeout). Only what is appended counts against the command's
   * writes: twenty `>>` to a 2 MiB file are 20 small writes.
   */
  async appendFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void> {
    this.precheck("append", path, content);
    const p = toWorkspace(path);
    const waiting = this.appends.get(p);
    if (waiting === undefined && this.fs.stat(p)?.type !== "file") {
      await this.put(path, toBytes(content, options), "append");
      return;
    }
    // Nothing to add to a file that is there (a `>>` redirect opens its target so): no rewrite.
    if (content.length === 0) return;
    const added = toBytes(content, options);
    const size = (this.fs.stat(p)?.size ?? 0) + (waiting?.bytes ?? 0) + added.byteLength;
    if (size > MAX_FILE_BYTES) throw fileTooLarge("append", this.shown(path));
    if (this.bytesWritten + added.byteLength > BASH_MAX_WRITTEN_BYTES) {
      throw writesSpent("append", this.shown(path));
    }
    this.bytesWritten += added.byteLength;
    const entry = waiting ?? { path, chunks: [], bytes: 0 };
    entry.chunks.push(added);
    entry.bytes += added.byteLength;
    this.appends.set(p, entry);
    this.appendedBytes += added.byteLength;
    if (this.appendedBytes >= APPENDS_HELD_BYTES) await this.flushAppends();
  }

  /**
   * Writes the appends that wait to the files at or under `paths` (workspace paths; all files when
   * absent), one flush at a time (a second waits for the first): a read of one file need not write
   * another's (hunt 123: a loop of `>>` to a 4 MB file that read a small one rewrote the large one
   * every pass). A write that fails (the session's workspace full) is kept in `unwritten` for the
   * result to tell: the call that happened to flush is not the command that appended. Never rejects.
   */
  flushAppends(paths?: readonly string[]): Promise<void> {
    // Every read comes here: with nothing waiting (the usual case) it costs no more than a size check.
    if (this.appends.size === 0) return this.flushing;
    const due = (p: string) => paths === undefined || paths.some((q) => q === "" || p === q || p.startsWith(`${q}/`));
    if (![...this.appends.keys()].some(due)) return this.flushing;
    this.flushing = this.flushing.then(() => this.writeAppends(due));
    return this.flushing;
  }

  private async writeAppends(due: (p: string) => boolean): Promise<void> {
    for (const [p, entry] of this.appends) {
      if (!due(p)) continue;
      this.appends.delete(p);
      this.appendedBytes -= entry.bytes;
      try {
        // Not stopped by the command's signal: after a timeout or an abort what it appended is still written.
        const before = await this.fs.readFile(p);
        const joined = new Uint8Array(before.byteLength + entry.bytes);
        joined.set(before, 0);
        let at = before.byteLength;
        for (const chunk of entry.chunks) {
          joined.set(chunk, at);
          at += chunk.byteLength;
        }
        // Counted as each append came.
        await this.put(entry.path, joined, "append", undefined, false, 0);
      } catch (err) {
        this.unwritten.push(`${this.shown(entry.path)}: ${errno(err, "append", this.shown(entry.path)).message}`);
      }
    }
  }

  async exists(path: string): Promise<boolean> {
    if (path.includes("\\")) return false; // no workspace file has such a name (see toWorkspace)
    return this.kind(toWorkspace(path)) !== null;
  }

  async stat(path: string): Promise<FsStat> {
    const p = toWorkspace(path);
    const stat = this.fs.stat(p);
    if (stat) {
      return {
        isFile: stat.type === "file",
        isDirectory: stat.type === "dir",
        isSymbolicLink: false,
        mode: stat.mode,
        // Appends that wait count (see `appendFile`): a stat, as each `>>` makes, need not write them.
        size: stat.size + (this.appends.get(p)?.bytes ?? 0),
        mtime: EPOCH,
        // No links or aliases: a canonical path names one file, which is what cp and mv check
        // before they overwrite (without an identity they refuse: "cannot safely determine...").
        identity: `workspace:${p}`,
      };
    }
    if (this.madeDirs.has(p))
      return { isFile: false, isDirectory: true, isSymbolicLink: false, mode: 0o755, size: 0, mtime: EPOCH, identity: `workspace:${p}` };
    throw new Error(`ENOENT: no such file or directory, stat '${this.shown(path)}'`);
  }

  lstat(path: string): Promise<FsStat> {
    return this.stat(path);
  }

  async mkdir(path: string, options?: MkdirOptions): Promise<void> {
    this.assertWritable("mkdir", path);
    const p = toWorkspace(path);
    const kind = this.kind(p);
    if (kind === "file") throw new Error(`EEXIST: file already exists, mkdir '${this.shown(path)}'`);
    if (kind === "dir") {
      if (options?.recursive) return;
      throw new Error(`EEXIST: directory already exists, mkdir '${this.shown(path)}'`);
    }
    const parent = parentOf(p);
    if (!options?.recursive && this.kind(parent) !== "dir")
      throw new Error(`ENOENT: no such file or directory, mkdir '${this.shown(path)}'`);
    for (let dir = p; dir !== "" && this.kind(dir) === null; dir = parentOf(dir)) {
      if (this.kind(parentOf(dir)) === "file") throw new Error(`ENOTDIR: not a directory, mkdir '${this.shown(path)}'`);
      this.madeDirs.add(dir);
    }
  }

  async readdir(path: string): Promise<string[]> {
    return (await this.readdirWithFileTypes(path)).map((e) => e.name);
  }

  async readdirWithFileTypes(path: string): Promise<DirentEntry[]> {
    const p = toWorkspace(path);
    const entries = new Map<string, DirentEntry>();
    if (this.fs.stat(p) || !this.madeDirs.has(p)) {
      try {
        for (const e of this.fs.readdir(p)) entries.set(e.name, dirent(e.name, e.type === "dir"));
      } catch (err) {
        throw errno(err, "scandir", this.shown(path));
      }
    }
    for (const dir of this.madeDirs) {
      if (parentOf(dir) === p && dir !== "") entries.set(basename(dir), dirent(basename(dir), true));
    }
    return [...entries.values()].sort((a, b) => comparePaths(a.name, b.name));
  }

  async rm(path: string, options?: RmOptions): Promise<void> {
    await this.flushAppends([toWorkspace(path)]);
    this.assertWritable("rm", path);
    const p = toWorkspace(path);
    const kind = this.kind(p);
    if (kind === null) {
      if (options?.force) return;
      throw new Error(`ENOENT: no such file or directory, rm '${this.shown(path)}'`);
    }
    if (kind === "file") {
      await this.fs.deleteFile(p);
      this.changed.add(p);
      this.keepEmptied(parentOf(p));
      return;
    }
    if (p === "") throw new Error(`EBUSY: mount point, cannot remove '${this.shown(path)}'`);
    const inside = this.filesUnder(p);
    const madeInside = this.madeUnder(p);
    if (!options?.recursive && (inside.length > 0 || madeInside.length > 0)) {
      throw new Error(`ENOTEMPTY: directory not empty, rm '${this.shown(path)}'`);
    }
    for (const [i, file] of inside.entries()) {
      await this.turnEvery(i);
      await this.fs.deleteFile(file);
      this.changed.add(file);
    }
    for (const dir of madeInside) this.madeDirs.delete(dir);
    this.madeDirs.delete(p);
    // A directory that came empty in the upload is still listed: it goes too (it stayed, rm said 0).
    await this.fs.removeDir(p);
    this.keepEmptied(parentOf(p));
  }

  async cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    await this.flushAppends([toWorkspace(src), toWorkspace(dest)]);
    await this.copy(src, dest, options, false);
  }

  /**
   * cp, and the first half of mv. A copy onto an existing file keeps that file's mode, as cp does; a
   * move (`replace`) puts the source's file there, mode included, as a rename does.
   */
  private async copy(src: string, dest: string, options: CpOptions | undefined, replace: boolean): Promise<void> {
    const op = replace ? "mv" : "cp";
    this.assertWritable(op, dest);
    const from = toWorkspace(src);
    const kind = this.kind(from);
    if (kind === null) throw new Error(`ENOENT: no such file or directory, cp '${this.shown(src)}'`);
    // A copy keeps its source's mode (an executable stays executable), as cp does for a new file.
    if (kind === "file") {
      await this.put(dest, await this.ownBytes(src), op, this.fs.stat(from)?.mode, replace);
      return;
    }
    if (!options?.recursive) throw new Error(`EISDIR: is a directory, cp '${this.shown(src)}'`);
    const to = toWorkspace(dest);
    if (to === from || to.startsWith(`${from}/`))
      throw new Error(`EINVAL: cannot copy '${this.shown(src)}' into itself, '${this.shown(dest)}'`);
    await this.mkdir(dest, { recursive: true });
    // Empty directories inside go along, as they would on a disk.
    for (const dir of this.madeUnder(from)) this.madeDirs.add(normalize(`${to}${dir.slice(from.length)}`));
    for (const [i, file] of this.filesUnder(from).entries()) {
      await this.turnEvery(i);
      const bytes = await this.fs.readFile(file, this.signal);
      await this.put(`/${to}${file.slice(from.length)}`, bytes, op, this.fs.stat(file)?.mode, replace, bytes.byteLength, true);
    }
  }

  /**
   * One call of the shell's that walks many files (`cp -r`, `mv` and `rm -r` of a directory) gives
   * the event loop a turn every so many, and stops when the command is stopped: the shell's own turns
   * come between its calls only (hunt 74: a `cp -r` of 6,000 files held the isolate 7 s, past its
   * timeout). What it did up to there stays, as when a real `cp` is killed.
   */
  private async turnEvery(i: number): Promise<void> {
    if (i === 0 || i % BASH_FS_CALLS_PER_TURN !== 0) return;
    await eventLoopTurn();
    this.signal?.throwIfAborted();
  }

  async mv(src: string, dest: string): Promise<void> {
    await this.flushAppends([toWorkspace(src), toWorkspace(dest)]);
    this.assertWritable("mv", dest);
    const from = toWorkspace(src);
    const to = toWorkspace(dest);
    if (this.kind(from) === null) throw new Error(`ENOENT: no such file or directory, mv '${this.shown(src)}'`);
    if (from === to) return;
    if (to.startsWith(`${from}/`)) throw new Error(`EINVAL: cannot move '${this.shown(src)}' into itself, '${this.shown(dest)}'`);
    // A directory moves onto an empty one only, as rename(2) does (hunt 75: it was merged into a full one, overwriting).
    if (this.kind(from) === "dir" && this.kind(to) === "dir" && (this.filesUnder(to).length > 0 || this.madeUnder(to).length > 0))
      throw new Error(`ENOTEMPTY: directory not empty, rename '${this.shown(src)}' -> '${this.shown(dest)}'`);
    await this.copy(src, dest, { recursive: true }, true);
    await this.rm(src, { recursive: true });
  }

  resolvePath(base: string, path: string): string {
    return `/${normalize(path.startsWith("/") ? path : `${base}/${path}`)}`;
  }

  getAllPaths(): string[] {
    return ["/", ...this.fs.dirs().map((d) => `/${d}`), ...[...this.madeDirs].map((d) => `/${d}`), ...this.fs.files().map((f) => `/${f}`)];
  }

  /**
   * Sets a file's permission bits: its bytes are written back with the new mode, which wins as in a
   * move. just-bash's copy from /tmp (another mount) writes the file, then calls this with the
   * source's mode. A directory keeps no mode: nothing to do.
   */
  async chmod(path: string, mode: number): Promise<void> {
    await this.flushAppends([toWorkspace(path)]);
    this.assertWritable("chmod", path);
    const p = toWorkspace(path);
    const kind = this.kind(p);
    if (kind === null) throw new Error(`ENOENT: no such file or directory, chmod '${this.shown(path)}'`);
    const bits = mode & 0o777;
    const before = this.fs.stat(p);
    if (kind === "dir" || before === null || (before.mode & 0o777) === bits) return;
    const justWritten = this.lastWritten === p;
    this.lastWritten = null;
    await this.put(path, await this.ownBytes(path), "chmod", bits, true, justWritten ? 0 : before.size);
    this.lastWritten = null;
  }

  async symlink(_target: string, linkPath: string): Promise<void> {
    throw new Error(`EPERM: operation not permitted, symlink '${this.shown(linkPath)}' (links are not supported in the workspace)`);
  }

  async link(existingPath: string, _newPath: string): Promise<void> {
    throw new Error(`EPERM: operation not permitted, link '${this.shown(existingPath)}' (links are not supported in the workspace)`);
  }

  async readlink(path: string): Promise<string> {
    if (this.kind(toWorkspace(path)) === null) throw new Error(`ENOENT: no such file or directory, readlink '${this.shown(path)}'`);
    throw new Error(`EINVAL: invalid argument, readlink '${this.shown(path)}'`);
  }

  async realpath(path: string): Promise<string> {
    const p = toWorkspace(path);
    if (this.kind(p) === null) throw new Error(`ENOENT: no such file or directory, realpath '${this.shown(path)}'`);
    return `/${p}`;
  }

  async utimes(path: string, _atime: Date, _mtime: Date): Promise<void> {
    // Times are not stored; touching an existing file changes nothing, so it is allowed read-only too.
    if (this.kind(toWorkspace(path)) === null) throw new Error(`ENOENT: no such file or directory, utimes '${this.shown(path)}'`);
  }

  private kind(p: string): "file" | "dir" | null {
    const stat = this.fs.stat(p);
    if (stat) return stat.type;
    return this.madeDirs.has(p) ? "dir" : null;
  }

  /** `dir` and the directories above it stay while the command runs, though a deletion left them no file. */
  private keepEmptied(dir: string): void {
    for (; dir !== "" && this.kind(dir) === null; dir = parentOf(dir)) this.madeDirs.add(dir);
  }

  /** The directories this command made below `dir`. */
  private madeUnder(dir: string): string[] {
    return [...this.madeDirs].filter((d) => d.startsWith(`${dir}/`));
  }

  private filesUnder(dir: string): string[] {
    const prefix = `${dir}/`;
    return this.fs.files().filter((f) => f.startsWith(prefix));
  }

  /**
   * Refuses a write that cannot succeed before its content is turned into bytes (a read-only run, or a
   * command past its write budget: UTF-8 is at least a byte per UTF-16 unit, as is a byte string):
   * tee to 3,000 refused files converted 2 MB 3,000 times (hunt 120).
   */
  private precheck(op: string, path: string, content: FileContent): void {
    this.assertWritable(op, path);
    if (this.bytesWritten + (typeof content === "string" ? content.length : content.byteLength) > BASH_MAX_WRITTEN_BYTES) {
      throw writesSpent(op, this.shown(path));
    }
  }

  /**
   * A file's bytes for the filesystem's own work (an append, a copy, a chmod, which write them back and
   * count as writes), not counted as the command's reads.
   */
  private async ownBytes(path: string): Promise<Uint8Array> {
    try {
      return await this.fs.readFile(toWorkspace(path), this.signal);
    } catch (err) {
      throw errno(err, "open", this.shown(path));
    }
  }

  /** Counts a read of workspace file `p` against the command's read budget; past it the read fails. */
  private countRead(p: string, path: string): void {
    this.chargeRead(this.fs.stat(p)?.size ?? 0, this.shown(path));
  }

  /** Counts `size` bytes read from `shown` (here, or in the command's /tmp: `readsCounted`); past the budget the read fails. */
  chargeRead(size: number, shown: string): void {
    if (this.bytesRead + size > BASH_MAX_READ_BYTES) {
      this.unread.count++;
      if (this.unread.first.length < REFUSED_WRITES_NAMED) this.unread.first.push(`'${shown}'`);
      throw new Error(
        `EFBIG: file too large, open '${shown}' (this command has read ${BASH_MAX_READ_BYTES} bytes of files, the most one command may read)`,
      );
    }
    this.bytesRead += size;
  }

  private assertWritable(op: string, path: string): void {
    if (!this.allowWrite) {
      this.refused.count++;
      if (this.refused.first.length < REFUSED_WRITES_NAMED) this.refused.first.push(`${op} '${this.shown(path)}'`);
      throw new Error(`EROFS: read-only file system, ${op} '${this.shown(path)}' (this run does not allow writes)`);
    }
  }

  /** Writes a file; `replace`: it takes `mode` even where one exists (one write: a failure leaves that file as it was). */
  private async put(
    path: string,
    bytes: Uint8Array,
    op: string,
    mode?: number,
    replace = false,
    counted = bytes.byteLength,
    /** A tree's copy makes the directories its files sit in, as `cp -r` does. */
    makeParents = false,
  ): Promise<void> {
    this.assertWritable(op, path);
    const p = toWorkspace(path);
    const refusal = writeRefusal(p, (q) => this.kind(q));
    if (refusal?.code === "is_directory") throw new Error(`EISDIR: illegal operation on a directory, ${op} '${this.shown(path)}'`);
    if (refusal) throw new Error(`ENOTDIR: not a directory, ${op} '${this.shown(path)}'`);
    // As on a disk: a write into a directory that does not exist fails (hunt 75: `echo x > typo/f`
    // made the directory, and a mistyped path became a new tree).
    if (!makeParents && this.kind(parentOf(p)) !== "dir") throw new Error(`ENOENT: no such file or directory, ${op} '${this.shown(path)}'`);
    if (bytes.byteLength > MAX_FILE_BYTES) throw fileTooLarge(op, this.shown(path));
    if (this.bytesWritten + counted > BASH_MAX_WRITTEN_BYTES) {
      throw writesSpent(op, this.shown(path));
    }
    this.bytesWritten += counted;
    await this.fs.writeFile(p, bytes, mode, { replace });
    this.changed.add(p);
    this.lastWritten = counted === bytes.byteLength ? p : null;
    for (let dir = parentOf(p); dir !== ""; dir = parentOf(dir)) this.madeDirs.delete(dir);
  }

  /** A path as the shell sees it (under its mount point), for error messages. */
  private shown(path: string): string {
    return `${this.mountPoint}${path.startsWith("/") || path === "" ? path : `/${path}`}`;
  }
}

/** "/a/./b/../c" -> "a/c"; never above the root. NUL bytes are refused like a missing file. */
export function toWorkspace(path: string): string {
  if (path.includes("\0")) throw new Error(`ENOENT: path contains null byte, '${path.replaceAll("\0", "\\0")}'`);
  // The workspace reads "\" as a separator (as in uploads and tool paths): a file named with one
  // would land at another path, so the shell refuses such names instead.
  if (path.includes("\\"))
    throw new Error(`EINVAL: invalid argument, a backslash in a file name is not supported in the workspace, '${path}'`);
  return normalize(path);
}

export function normalize(path: string): string {
  const parts: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") parts.pop();
    else parts.push(segment);
  }
  return parts.join("/");
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

export function dirent(name: string, isDirectory: boolean): DirentEntry {
  return { name, isFile: !isDirectory, isDirectory, isSymbolicLink: false };
}

export function toBytes(content: FileContent, options?: WriteFileOptions | BufferEncoding): Uint8Array {
  if (typeof content !== "string") return content;
  const encoding = typeof options === "string" ? options : options?.encoding;
  if (encoding === "latin1" || encoding === "binary") {
    const out = new Uint8Array(content.length);
    for (let i = 0; i < content.length; i++) out[i] = content.charCodeAt(i) & 0xff;
    return out;
  }
  return new TextEncoder().encode(content);
}

/** A file past the per-file limit, as the shell's commands print it. */
function fileTooLarge(op: string, shown: string): Error {
  return new Error(`EFBIG: file too large, ${op} '${shown}' (limit ${MAX_FILE_BYTES} bytes per file)`);
}

/** The command's write budget spent, as the shell's commands print it. */
function writesSpent(op: string, shown: string): Error {
  return new Error(`ENOSPC: no space left on device, ${op} '${shown}' (limit ${BASH_MAX_WRITTEN_BYTES} bytes written per command)`);
}

/** WorkspaceError -> the errno-style message the shell's commands print. */
function errno(err: unknown, op: string, path: string): Error {
  if (err instanceof WorkspaceError) {
    if (err.code === "not_found") return new Error(`ENOENT: no such file or directory, ${op} '${path}'`);
    if (err.code === "is_directory") return new Error(`EISDIR: illegal operation on a directory, read '${path}'`);
    if (err.code === "not_a_directory") return new Error(`ENOTDIR: not a directory, ${op} '${path}'`);
    return new Error(`EIO: ${err.message}, ${op} '${path}'`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * `fs` (the command's scratch space) with its commands' file reads counted by `charge` before they
 * happen, as the workspace's are: a file in /tmp named 200 times read 1.4 GB (hunt 121), and `sha1sum`,
 * which reads through `readFileBuffer`, 2.1 GB (hunt 123). A copy or move out of /tmp reads through it
 * too: `charge` is told of it, and bash.ts leaves it out (a copy is a write, counted as one).
 */
export function readsCounted<T extends { stat(path: string): Promise<{ size: number }> }>(
  fs: T,
  charge: (size: number, path: string) => void,
): T {
  return new Proxy(fs, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      if (property !== "readFile" && property !== "readFileBytes" && property !== "readFileBuffer") return value.bind(target);
      return async (path: string, ...rest: unknown[]) => {
        const size = await target.stat(path).then(
          (stat) => stat.size,
          () => 0,
        );
        charge(size, path);
        return (value as (...a: unknown[]) => unknown).apply(target, [path, ...rest]);
      };
    },
  });
}
