import type { SearchQuery } from "../workspace/search/query";
import type {
  SearchableText,
  SearchTextsOptions,
  WorkspaceBase,
  WorkspaceDirent,
  WorkspaceFs,
  WorkspaceStat,
  WriteOptions,
} from "../workspace/workspace-fs";

/** At most this many read and this many written paths are kept per tool call (a tree-wide grep reads hundreds). */
export const MAX_TOUCHED_PATHS = 50;

export interface Touched {
  reads: string[];
  writes: string[];
}

/**
 * A WorkspaceFs that notes the paths one tool call reads (files and listed directories) and writes
 * or deletes, for the trace: attribution blames the action that wrote (or read) a failing artifact.
 */
export class RecordingFs implements WorkspaceFs {
  private readonly reads = new Set<string>();
  private readonly writes = new Set<string>();

  constructor(private readonly inner: WorkspaceFs) {}

  touched(): Touched {
    const keep = (paths: Set<string>) => [...paths].sort().slice(0, MAX_TOUCHED_PATHS);
    return { reads: keep(this.reads), writes: keep(this.writes) };
  }

  files(): readonly string[] {
    return this.inner.files();
  }

  dirs(): readonly string[] {
    return this.inner.dirs();
  }

  stat(path: string): WorkspaceStat | null {
    return this.inner.stat(path);
  }

  readdir(path: string): WorkspaceDirent[] {
    this.reads.add(path);
    return this.inner.readdir(path);
  }

  readFile(path: string, signal?: AbortSignal): Promise<Uint8Array> {
    this.reads.add(path);
    return this.inner.readFile(path, signal);
  }

  readText(path: string, signal?: AbortSignal): Promise<string> {
    this.reads.add(path);
    return this.inner.readText(path, signal);
  }

  async *readFiles(paths: readonly string[], signal?: AbortSignal): AsyncIterable<{ path: string; bytes: Uint8Array }> {
    for await (const file of this.inner.readFiles(paths, signal)) {
      this.reads.add(file.path);
      yield file;
    }
  }

  async *searchTexts(
    paths: readonly string[],
    query: SearchQuery,
    signal?: AbortSignal,
    options?: SearchTextsOptions,
  ): AsyncIterable<SearchableText> {
    for await (const file of this.inner.searchTexts(paths, query, signal, options)) {
      this.reads.add(file.path);
      yield file;
    }
  }

  /** Not a read by the agent: nothing is recorded. */
  warmSearchTexts(paths: readonly string[], signal: AbortSignal): Promise<boolean> {
    return this.inner.warmSearchTexts(paths, signal);
  }

  writeFile(path: string, bytes: Uint8Array, mode?: number, options?: WriteOptions): Promise<void> {
    this.writes.add(path);
    return this.inner.writeFile(path, bytes, mode, options);
  }

  removeDir(path: string): Promise<void> {
    return this.inner.removeDir(path);
  }

  deleteFile(path: string): Promise<void> {
    this.writes.add(path);
    return this.inner.deleteFile(path);
  }

  /** Not recorded: the snapshot as uploaded is no artifact a call could have made. */
  base(): WorkspaceBase | null {
    return this.inner.base();
  }
}
