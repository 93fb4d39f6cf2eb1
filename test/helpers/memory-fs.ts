import { WorkspaceError } from "../../src/workspace/errors";
import { comparePaths, parentOf, resolveWorkspacePath, writeRefusal } from "../../src/workspace/paths";
import { searchTextOf } from "../../src/workspace/search/search-text";
import { decodeText, isBinary } from "../../src/workspace/text";
import type {
  SearchableText,
  WorkspaceBase,
  WorkspaceDirent,
  WorkspaceFs,
  WorkspaceStat,
  WriteOptions,
} from "../../src/workspace/workspace-fs";

/**
 * A test fake of WorkspaceFs: every file lives in a Map. It follows the interface's contract
 * (canonical paths, sorted listings, implied parent directories, error codes) so tools tested
 * against it behave the same over the real snapshot + overlay. Never imported from src/.
 */
export class MemoryWorkspaceFs implements WorkspaceFs {
  private readonly entries = new Map<string, { bytes: Uint8Array; mode: number }>();
  /** Every write and delete, in order, so tests can assert what reached the "overlay". */
  readonly mutations: { op: "write" | "delete"; path: string }[] = [];
  /** The files as seeded (`put`): the "snapshot" under the writes and deletes. */
  private readonly seeded = new Map<string, { bytes: Uint8Array; mode: number }>();

  constructor(files: Record<string, string | Uint8Array> = {}) {
    for (const [path, content] of Object.entries(files)) this.put(path, content);
  }

  /** Seeds a file without recording a mutation (fixture setup). */
  put(path: string, content: string | Uint8Array, mode = 0o644): void {
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
    this.entries.set(resolveWorkspacePath(path), { bytes, mode });
    this.seeded.set(resolveWorkspacePath(path), { bytes, mode });
  }

  /** The seeded files, and the paths written or deleted since. */
  base(): WorkspaceBase {
    const seeded = this.seeded;
    return {
      files: () => [...seeded.keys()].sort(comparePaths),
      stat: (path) => {
        const file = seeded.get(path);
        return file ? { type: "file", size: file.bytes.byteLength, mode: file.mode } : null;
      },
      readFile: async (path) => {
        const file = seeded.get(path);
        if (!file) throw new WorkspaceError("not_found", `'${path}' does not exist`);
        return file.bytes;
      },
      overlaid: () => [...new Set(this.mutations.map((m) => m.path))].sort(comparePaths),
    };
  }

  files(): readonly string[] {
    return [...this.entries.keys()].sort(comparePaths);
  }

  dirs(): readonly string[] {
    const dirs = new Set<string>();
    for (const path of this.entries.keys()) {
      for (let dir = parentOf(path); dir !== ""; dir = parentOf(dir)) dirs.add(dir);
    }
    return [...dirs].sort(comparePaths);
  }

  stat(path: string): WorkspaceStat | null {
    const file = this.entries.get(path);
    if (file) return { type: "file", size: file.bytes.byteLength, mode: file.mode };
    if (path === "" || this.isDir(path)) return { type: "dir", size: 0, mode: 0o755 };
    return null;
  }

  readdir(path: string): WorkspaceDirent[] {
    if (this.entries.has(path)) throw new WorkspaceError("not_a_directory", `'${path}' is not a directory`);
    if (path !== "" && !this.isDir(path)) throw new WorkspaceError("not_found", `'${path}' does not exist`);
    const prefix = path === "" ? "" : `${path}/`;
    const children = new Map<string, WorkspaceDirent>();
    for (const file of this.entries.keys()) {
      if (!file.startsWith(prefix)) continue;
      const rest = file.slice(prefix.length);
      const slash = rest.indexOf("/");
      const name = slash < 0 ? rest : rest.slice(0, slash);
      children.set(name, { name, type: slash < 0 ? "file" : "dir" });
    }
    return [...children.values()].sort((a, b) => comparePaths(a.name, b.name));
  }

  async readFile(path: string): Promise<Uint8Array> {
    const file = this.entries.get(path);
    if (file) return file.bytes;
    if (path === "" || this.isDir(path)) throw new WorkspaceError("is_directory", `'${path}' is a directory`);
    throw new WorkspaceError("not_found", `'${path}' does not exist`);
  }

  async readText(path: string): Promise<string> {
    return decodeText(await this.readFile(path));
  }

  async *readFiles(paths: readonly string[]): AsyncIterable<{ path: string; bytes: Uint8Array }> {
    for (const path of paths) {
      const file = this.entries.get(path);
      if (file) yield { path, bytes: file.bytes };
    }
  }

  /** Every text file among `paths`: there is no index to narrow with. */
  async *searchTexts(paths: readonly string[]): AsyncIterable<SearchableText> {
    for (const path of paths) {
      const file = this.entries.get(path);
      if (file && !isBinary(file.bytes)) yield { path, text: searchTextOf(file.bytes), pieces: "all" };
    }
  }

  /** Nothing to prepare: the bytes are in memory. */
  async warmSearchTexts(): Promise<boolean> {
    return true;
  }

  async writeFile(path: string, bytes: Uint8Array, mode?: number, options?: WriteOptions): Promise<void> {
    const refusal = writeRefusal(path, (p) => this.stat(p)?.type ?? null);
    if (refusal) throw refusal;
    const existing = options?.replace ? undefined : this.entries.get(path);
    this.entries.set(path, { bytes: bytes.slice(), mode: existing?.mode ?? mode ?? 0o644 });
    this.mutations.push({ op: "write", path });
  }

  /** Directories here are only those files imply: one with no file under it is already gone. */
  async removeDir(path: string): Promise<void> {
    if (this.entries.has(path)) throw new WorkspaceError("not_a_directory", `'${path}' is a file`);
  }

  async deleteFile(path: string): Promise<void> {
    if (!this.entries.delete(path)) throw new WorkspaceError("not_found", `'${path}' does not exist`);
    this.mutations.push({ op: "delete", path });
  }

  /** The file's content as UTF-8 text (test convenience). */
  text(path: string): string {
    const file = this.entries.get(path);
    if (!file) throw new Error(`no file ${path}`);
    return new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }).decode(file.bytes);
  }

  private isDir(path: string): boolean {
    const prefix = `${path}/`;
    for (const file of this.entries.keys()) if (file.startsWith(prefix)) return true;
    return false;
  }
}

/** Lines "line 1" .. "line n", each ending in "\n". */
export function numberedLines(n: number): string {
  let out = "";
  for (let i = 1; i <= n; i++) out += `line ${i}\n`;
  return out;
}

/**
 * The fixture tree every tool test uses: nested dirs, .gitignore'd files (root and nested rules,
 * a negation), a .git/ dir, a binary file, a CRLF + BOM file, a file with a long line and a
 * 3000-line file.
 */
export function fixtureFiles(): Record<string, string | Uint8Array> {
  return {
    ".gitignore": "node_modules/\n*.log\n!keep.log\n/build\n",
    ".env.example": "TOKEN=changeme\n",
    "README.md": "# Fixture\n\nA small project used by the tool tests.\nTODO: write docs\n",
    "src/index.ts": 'import { greet } from "./lib/greet";\n\nexport function main(): void {\n  console.log(greet("world"));\n}\n',
    "src/lib/greet.ts": "export function greet(name: string): string {\n  // TODO: localise\n  return `Hello, ${name}!`;\n}\n",
    "src/lib/math.ts":
      "export const add = (a: number, b: number) => a + b;\nexport const sub = (a: number, b: number) => a - b;\nexport const mul = (a: number, b: number) => a * b;\n",
    "src/lib/.gitignore": "generated.ts\n",
    "src/lib/generated.ts": "export const GENERATED = true; // TODO: ignored by nested rule\n",
    "src/windows.txt": "\uFEFFfirst line\r\nsecond TODO line\r\nthird line\r\n",
    "src/long-line.txt": `short\n${"x".repeat(600)}TODO${"y".repeat(100)}\nend\n`,
    "docs/big.txt": numberedLines(3000),
    "docs/notes/deep/nested.md": "deep TODO\n",
    "assets/logo.bin": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x54, 0x4f, 0x44, 0x4f, 0x0a]),
    "node_modules/pkg/index.js": "module.exports = 'TODO in dependency';\n",
    "build/out.js": "// TODO build output\n",
    "debug.log": "TODO log line\n",
    "keep.log": "TODO kept log\n",
    ".git/HEAD": "ref: refs/heads/main TODO\n",
  };
}

export function fixtureFs(): MemoryWorkspaceFs {
  return new MemoryWorkspaceFs(fixtureFiles());
}

/** A ToolContext over `fs` with a live signal (test convenience). */
export function toolContext(fs: WorkspaceFs, options: { allowWrite?: boolean; signal?: AbortSignal } = {}) {
  return { fs, signal: options.signal ?? new AbortController().signal, allowWrite: options.allowWrite ?? false };
}
