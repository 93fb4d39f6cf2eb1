import type { SearchIndexInfo } from "./search/index-layout";

/** One stored file: its bytes are `pack[offset, offset + size)`. */
export interface IndexEntry {
  path: string;
  offset: number;
  size: number;
  /** POSIX permission bits (0o644, 0o755, ...). */
  mode: number;
}

/** `workspaces/{wid}/index.json`: every file (sorted by path) and every directory (sorted). */
export interface WorkspaceIndex {
  version: 1;
  files: IndexEntry[];
  dirs: string[];
  /** The snapshot's search index (absent in snapshots stored before there was one: they are searched in full). */
  search?: SearchIndexInfo;
}

/** `workspaces/{wid}/meta.json`, written last: its presence means the snapshot is complete. */
export interface WorkspaceMeta {
  workspaceId: string;
  owner: string | null;
  format: "tar" | "tar.gz" | "zip";
  /** Number of files in the snapshot. */
  files: number;
  /** Sum of the files' sizes, in bytes. */
  bytes: number;
  createdAt: string;
}

/** R2 keys of one workspace; `upload` is a transient spool for zip archives. */
export function workspaceKeys(workspaceId: string) {
  const prefix = `workspaces/${workspaceId}/`;
  return {
    prefix,
    pack: `${prefix}pack`,
    index: `${prefix}index.json`,
    meta: `${prefix}meta.json`,
    upload: `${prefix}upload`,
    /** The upload's answer, kept when it was sent with an Idempotency-Key (a repeat gets it back). */
    result: `${prefix}result.json`,
  };
}
