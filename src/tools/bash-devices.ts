import type { BufferEncoding, FileContent, FsStat, IFileSystem, MkdirOptions } from "just-bash";
import { type DirentEntry, dirent, EPOCH, normalize, toBytes, type WriteFileOptions } from "./bash-fs";

/** The shell's devices: /dev itself ("") and the files in it. */
const DEVICES = ["", "null", "stderr", "stdout"] as const;
type Device = (typeof DEVICES)[number];

/**
 * The shell's /dev: /dev/null, which reads as empty and keeps nothing written to it (a file in the
 * scratch space kept `grep ... > /dev/null` for a later `cat /dev/null`), and /dev/stderr for the
 * commands that write to it as a file (awk's `print > "/dev/stderr"`; a redirect to it never reaches
 * here, and tee handles its streams itself): what they write is kept, in order, for the tool to
 * show after the command's output (refusing it failed the whole command, hunt 76). /dev/stdout is
 * refused as a file: kept here, its text missed the command's pipe (hunt 78); awk, tee and redirects
 * reach standard output without it. Other changes here are refused; a process substitution
 * (`<(...)`) then routes /dev/fd to a filesystem of its own.
 */
export class DeviceFs implements IFileSystem {
  /** Text written to /dev/stderr, in order. */
  readonly written: string[] = [];
  private writtenBytes = 0;

  /** @param maxWrittenBytes what the streams may take in all (the shell's output limit) */
  constructor(private readonly maxWrittenBytes = Number.POSITIVE_INFINITY) {}

  async readFile(path: string): Promise<string> {
    this.device(path, "open");
    return "";
  }

  async readFileBuffer(path: string): Promise<Uint8Array> {
    this.device(path, "open");
    return new Uint8Array();
  }

  async writeFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void> {
    this.take(path, "write", content, options);
  }

  async appendFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void> {
    this.take(path, "append", content, options);
  }

  async exists(path: string): Promise<boolean> {
    return (DEVICES as readonly string[]).includes(normalize(path));
  }

  async stat(path: string): Promise<FsStat> {
    const isDirectory = this.entry(path, "stat") === "";
    // 0644, not 0666: a copy of /dev/null takes this mode (just-bash's cp across mounts), and a real cp would apply umask 022.
    return {
      isFile: !isDirectory,
      isDirectory,
      isSymbolicLink: false,
      mode: isDirectory ? 0o755 : 0o644,
      size: 0,
      mtime: EPOCH,
      identity: `dev:/${normalize(path)}`,
    };
  }

  lstat(path: string): Promise<FsStat> {
    return this.stat(path);
  }

  async mkdir(path: string, options?: MkdirOptions): Promise<void> {
    if (!(options?.recursive && normalize(path) === "")) throw denied("mkdir", path);
  }

  async readdir(path: string): Promise<string[]> {
    if (this.entry(path, "scandir") !== "") throw new Error(`ENOTDIR: not a directory, scandir '/dev${path}'`);
    return DEVICES.filter((name) => name !== "");
  }

  async readdirWithFileTypes(path: string): Promise<DirentEntry[]> {
    return (await this.readdir(path)).map((name) => dirent(name, false));
  }

  async rm(path: string): Promise<void> {
    throw denied("rm", path);
  }

  async cp(src: string, dest: string): Promise<void> {
    this.entry(src, "cp");
    this.device(dest, "cp");
  }

  async mv(_src: string, dest: string): Promise<void> {
    throw denied("mv", dest);
  }

  resolvePath(base: string, path: string): string {
    return `/${normalize(path.startsWith("/") ? path : `${base}/${path}`)}`;
  }

  getAllPaths(): string[] {
    return DEVICES.map((name) => `/${name}`);
  }

  /** Nothing to keep; allowed, as just-bash's `cp file /dev/null` sets the mode after it writes. */
  async chmod(path: string): Promise<void> {
    this.entry(path, "chmod");
  }

  async symlink(_target: string, linkPath: string): Promise<void> {
    throw denied("symlink", linkPath);
  }

  async link(_existingPath: string, newPath: string): Promise<void> {
    throw denied("link", newPath);
  }

  async readlink(path: string): Promise<string> {
    this.entry(path, "readlink");
    throw new Error(`EINVAL: invalid argument, readlink '/dev${path}'`);
  }

  async realpath(path: string): Promise<string> {
    return `/${this.entry(path, "realpath")}`;
  }

  async utimes(path: string): Promise<void> {
    this.entry(path, "utimes");
  }

  /** "" for /dev itself, a device's name for a device; ENOENT for anything else. */
  private entry(path: string, op: string): Device {
    const p = normalize(path);
    if ((DEVICES as readonly string[]).includes(p)) return p as Device;
    throw new Error(`ENOENT: no such file or directory, ${op} '/dev${path}'`);
  }

  /** A device (not /dev itself). */
  private device(path: string, op: string): Exclude<Device, ""> {
    const device = this.entry(path, op);
    if (device === "") throw new Error(`EISDIR: illegal operation on a directory, ${op} '/dev${path}'`);
    return device;
  }

  private take(path: string, op: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): void {
    const device = this.device(path, op);
    if (device === "null") return;
    if (device === "stdout") {
      throw new Error(`EOPNOTSUPP: /dev/stdout cannot be written as a file here, ${op} '/dev${path}' (write to standard output instead)`);
    }
    const bytes = toBytes(content, options);
    if (this.writtenBytes + bytes.byteLength > this.maxWrittenBytes) {
      throw new Error(`EFBIG: file too large, ${op} '/dev${path}' (more than the command's output limit)`);
    }
    this.writtenBytes += bytes.byteLength;
    if (bytes.byteLength > 0) this.written.push(new TextDecoder().decode(bytes));
  }
}

function denied(op: string, path: string): Error {
  return new Error(`EACCES: permission denied, ${op} '/dev${path}'`);
}
