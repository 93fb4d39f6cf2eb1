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
  /** How the pack is stored (absent in snapshots stored before chunks: one object at `pack`). */
  pack?: PackLayout;
  /** The snapshot's search index (absent in snapshots stored before there was one: they are searched in full). */
  search?: SearchIndexInfo;
}

/**
 * A snapshot's pack (every file's bytes, back to back) is stored as fixed-size chunks, each its own
 * R2 object put in one piece: `workspaces/{wid}/pack/00000`, `.../00001`, ... Separate objects
 * rather than one multipart object because a read then touches one small object (or two, across a
 * boundary) that R2 serves as stored; local R2 (miniflare) serves a multipart object through a JS
 * stream at about a tenth of the speed, which made every cold search in `npm run dev` slow. Chunks
 * also need no upload session to complete or abort. Snapshots stored before chunks have one object
 * at `workspaces/{wid}/pack` (no `pack` in index.json) and are read as one chunk.
 */
export interface PackLayout {
  /** Size of every chunk but the last, in bytes. */
  chunkBytes: number;
  /** Number of chunk objects (0 for an empty pack). */
  chunks: number;
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
    /** The pack of a snapshot stored before chunks (see PackLayout). */
    pack: `${prefix}pack`,
    packPrefix: `${prefix}pack/`,
    index: `${prefix}index.json`,
    meta: `${prefix}meta.json`,
    upload: `${prefix}upload`,
    /** The upload's answer, kept when it was sent with an Idempotency-Key (a repeat gets it back). */
    result: `${prefix}result.json`,
  };
}
