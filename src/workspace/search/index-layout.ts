/**
 * The search index of a snapshot, stored beside its pack:
 *
 * - `workspaces/{wid}/search/postings-NNNN`: one object per shard. A shard covers a run of files in
 *   pack order; for every trigram key present in any of them it holds the sorted list of the
 *   shard-local file numbers that contain it, as LEB128 gaps. Read by range, one list at a time.
 * - `workspaces/{wid}/search/directory`: read whole at the first search. Every file's pack offset
 *   and whether it is binary; per shard, its first file, its sorted keys and where each key's list
 *   ends in the shard object.
 *
 * `index.json` names the index (`WorkspaceIndex.search`); a snapshot without it is searched in full.
 */

export const SEARCH_INDEX_VERSION = 1;
const MAGIC = 0x31495350; // "PSI1", little-endian

/** What `index.json` records about a snapshot's search index. */
export interface SearchIndexInfo {
  version: typeof SEARCH_INDEX_VERSION;
  shards: number;
  /** Files in the directory (every file stored in the pack). */
  files: number;
  /** Size of the directory object, in bytes. */
  directoryBytes: number;
}

export function searchKeys(workspaceId: string) {
  const prefix = `workspaces/${workspaceId}/search/`;
  return {
    prefix,
    directory: `${prefix}directory`,
    shard: (n: number) => `${prefix}postings-${String(n).padStart(4, "0")}`,
  };
}

/** A file is binary (never searched, so not indexed) when this flag is set. */
export const FILE_BINARY = 1;

export interface ShardDirectory {
  /** Global number of the shard's first file. */
  firstFile: number;
  fileCount: number;
  /** Sorted trigram keys present in the shard. */
  keys: Uint32Array;
  /** `ends[i]` is where the list of `keys[i]` ends in the shard object; it starts at `ends[i - 1]` (or 0). */
  ends: Uint32Array;
}

export interface SearchDirectory {
  /** Pack offset of every file, in pack order (non-decreasing). */
  offsets: Float64Array;
  flags: Uint8Array;
  shards: ShardDirectory[];
}

/*
 * Directory bytes, little-endian, every array 8-byte aligned:
 *   u32 magic, u32 version, u32 fileCount, u32 shardCount
 *   f64[fileCount] offsets, u8[fileCount] flags (padded to 8)
 *   per shard: u32 firstFile, u32 fileCount, u32 keyCount, u32 0, u32[keyCount] keys, u32[keyCount] ends (padded to 8)
 */
export function encodeDirectory(directory: SearchDirectory): Uint8Array {
  const files = directory.offsets.length;
  let size = 16 + files * 8 + pad8(files);
  for (const shard of directory.shards) size += 16 + pad8(shard.keys.length * 8);
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, SEARCH_INDEX_VERSION, true);
  view.setUint32(8, files, true);
  view.setUint32(12, directory.shards.length, true);
  let at = 16;
  new Float64Array(bytes.buffer, at, files).set(directory.offsets);
  at += files * 8;
  bytes.set(directory.flags, at);
  at += pad8(files);
  for (const shard of directory.shards) {
    view.setUint32(at, shard.firstFile, true);
    view.setUint32(at + 4, shard.fileCount, true);
    view.setUint32(at + 8, shard.keys.length, true);
    at += 16;
    new Uint32Array(bytes.buffer, at, shard.keys.length).set(shard.keys);
    new Uint32Array(bytes.buffer, at + shard.keys.length * 4, shard.keys.length).set(shard.ends);
    at += pad8(shard.keys.length * 8);
  }
  return bytes;
}

/** Reads a directory; the arrays are views over `bytes` (no copy). Throws on a foreign or newer format. */
export function decodeDirectory(bytes: Uint8Array): SearchDirectory {
  // Typed-array views need aligned offsets: copy when the bytes do not start on an 8-byte boundary.
  const own = bytes.byteOffset % 8 === 0 ? bytes : bytes.slice();
  const view = new DataView(own.buffer, own.byteOffset, own.byteLength);
  if (own.byteLength < 16 || view.getUint32(0, true) !== MAGIC) throw new Error("not a search index directory");
  if (view.getUint32(4, true) !== SEARCH_INDEX_VERSION) throw new Error(`search index version ${view.getUint32(4, true)}`);
  const files = view.getUint32(8, true);
  const shardCount = view.getUint32(12, true);
  let at = 16;
  const offsets = new Float64Array(own.buffer, own.byteOffset + at, files);
  at += files * 8;
  const flags = own.subarray(at, at + files);
  at += pad8(files);
  const shards: ShardDirectory[] = [];
  for (let i = 0; i < shardCount; i++) {
    const firstFile = view.getUint32(at, true);
    const fileCount = view.getUint32(at + 4, true);
    const keyCount = view.getUint32(at + 8, true);
    at += 16;
    const keys = new Uint32Array(own.buffer, own.byteOffset + at, keyCount);
    const ends = new Uint32Array(own.buffer, own.byteOffset + at + keyCount * 4, keyCount);
    at += pad8(keyCount * 8);
    shards.push({ firstFile, fileCount, keys, ends });
  }
  if (at !== own.byteLength) throw new Error("search index directory has trailing bytes");
  return { offsets, flags, shards };
}

function pad8(n: number): number {
  return Math.ceil(n / 8) * 8;
}

/** Decodes a posting list (LEB128 gaps, the first from -1) into shard-local file numbers. */
export function decodePostings(bytes: Uint8Array): Uint32Array {
  const out = new Uint32Array(bytes.byteLength);
  let n = 0;
  let file = -1;
  let value = 0;
  let shift = 0;
  for (let i = 0; i < bytes.byteLength; i++) {
    const b = bytes[i]!;
    value |= (b & 0x7f) << shift;
    if (b & 0x80) {
      shift += 7;
      continue;
    }
    file += value;
    out[n++] = file;
    value = 0;
    shift = 0;
  }
  return out.subarray(0, n);
}
