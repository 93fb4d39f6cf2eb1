/**
 * The search index of a snapshot, stored beside its pack. Text files are cut at line breaks into
 * pieces of about `SEARCH_PIECE_BYTES`, exactly as `searchTextOf` cuts them; what the posting lists
 * name are docs, runs of `PIECES_PER_DOC` consecutive pieces of one file (the last run of a file may
 * be shorter), so a search narrows to parts of files, not just files, and the lists stay about as
 * long as per-file lists would be.
 *
 * - `workspaces/{wid}/search/postings-NNNN`: one object per shard. A shard covers a run of docs in
 *   pack order; for every trigram key present in any of them it holds the sorted list
 *   of the shard-local doc numbers that contain it, as LEB128 gaps, or for a key in at least half of
 *   the shard's docs the one byte `DENSE_LIST_BYTE`: "every doc". Read by range.
 * - `workspaces/{wid}/search/directory`: read whole at the first search. Every file's pack offset,
 *   flags (binary, unindexed), its first piece; every piece's byte offset and first line in its file; per
 *   shard, its first doc, its sorted keys and where each key's list ends in the shard object.
 *
 * Version 3 added `FILE_UNINDEXED` (version 2 is the same layout without it; a reader that knows
 * only 2 refuses 3 and searches in full, rather than take an unindexed file for one with no match).
 * Version 1 (snapshots stored before pieces) has one doc per file and no piece tables. Both are still
 * read. `index.json` names the index (`WorkspaceIndex.search`); a snapshot without it is searched in full.
 */

export const SEARCH_INDEX_VERSION = 3;
/** Pieces per doc (about 64 KiB): finer docs cost the index builder more (one list entry per doc a key is in). */
export const PIECES_PER_DOC = 4;
const MAGIC = 0x31495350; // "PSI1", little-endian

/** What `index.json` records about a snapshot's search index. */
export interface SearchIndexInfo {
  version: 1 | 2 | typeof SEARCH_INDEX_VERSION;
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
/**
 * A file's text was not indexed (it is larger than grep searches, `SEARCH_MAX_FILE_BYTES`): a search
 * that asks for it must read it whole. Version 3.
 */
export const FILE_UNINDEXED = 2;

export interface ShardDirectory {
  /** Global number of the shard's first doc. */
  firstDoc: number;
  docCount: number;
  /** Sorted trigram keys present in the shard. */
  keys: Uint32Array;
  /** `ends[i]` is where the list of `keys[i]` ends in the shard object; it starts at `ends[i - 1]` (or 0). */
  ends: Uint32Array;
}

/** Where the pieces are in the files (versions 2 and 3). File f's docs are its pieces in runs of `piecesPerDoc`, numbered on from the docs of the files before it. */
export interface PieceTable {
  /** The piece size the files were cut with (`SEARCH_PIECE_BYTES` when they were indexed). */
  pieceBytes: number;
  piecesPerDoc: number;
  /** `firstPiece[f]` is file f's first piece; its pieces run to `firstPiece[f + 1]` (empty and binary files have none). */
  firstPiece: Uint32Array;
  /** Byte offset of every piece in its file: piece k of file f starts at `starts[firstPiece[f] + k]`. */
  starts: Uint32Array;
  /** Lines of its file before every piece (the "\n" bytes before it), so a piece read alone can number its lines. */
  linesBefore: Uint32Array;
}

export interface SearchDirectory {
  /** Pack offset of every file, in pack order (non-decreasing). */
  offsets: Float64Array;
  flags: Uint8Array;
  /** Null in version 1: doc n is file n, whole. */
  pieces: PieceTable | null;
  shards: ShardDirectory[];
}

/*
 * Directory bytes, little-endian, every array 8-byte aligned:
 *   u32 magic, u32 version, u32 fileCount, u32 shardCount
 *   versions 2 and 3: u32 pieceCount, u32 pieceBytes, u32 piecesPerDoc, u32 0
 *   f64[fileCount] offsets, u8[fileCount] flags (padded to 8)
 *   versions 2 and 3: u32[fileCount + 1] firstPiece (padded to 8), u32[pieceCount] starts, u32[pieceCount] linesBefore (each padded to 8)
 *   per shard: u32 firstDoc, u32 docCount, u32 keyCount, u32 0, u32[keyCount] keys, u32[keyCount] ends (padded to 8)
 * Version 1 is the same without those parts.
 */
export function encodeDirectory(directory: SearchDirectory): Uint8Array {
  const files = directory.offsets.length;
  const pieces = directory.pieces;
  let size = 16 + files * 8 + pad8(files);
  if (pieces) size += 16 + pad8((files + 1) * 4) + 2 * pad8(pieces.starts.length * 4);
  for (const shard of directory.shards) size += 16 + pad8(shard.keys.length * 8);
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, pieces ? SEARCH_INDEX_VERSION : 1, true);
  view.setUint32(8, files, true);
  view.setUint32(12, directory.shards.length, true);
  let at = 16;
  if (pieces) {
    view.setUint32(at, pieces.starts.length, true);
    view.setUint32(at + 4, pieces.pieceBytes, true);
    view.setUint32(at + 8, pieces.piecesPerDoc, true);
    at += 16;
  }
  new Float64Array(bytes.buffer, at, files).set(directory.offsets);
  at += files * 8;
  bytes.set(directory.flags, at);
  at += pad8(files);
  if (pieces) {
    new Uint32Array(bytes.buffer, at, files + 1).set(pieces.firstPiece);
    at += pad8((files + 1) * 4);
    new Uint32Array(bytes.buffer, at, pieces.starts.length).set(pieces.starts);
    at += pad8(pieces.starts.length * 4);
    new Uint32Array(bytes.buffer, at, pieces.starts.length).set(pieces.linesBefore);
    at += pad8(pieces.starts.length * 4);
  }
  for (const shard of directory.shards) {
    view.setUint32(at, shard.firstDoc, true);
    view.setUint32(at + 4, shard.docCount, true);
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
  const version = view.getUint32(4, true);
  if (version < 1 || version > SEARCH_INDEX_VERSION) throw new Error(`search index version ${version}`);
  const files = view.getUint32(8, true);
  const shardCount = view.getUint32(12, true);
  const u32s = (at: number, count: number) => {
    if (at + count * 4 > own.byteLength) throw new Error("search index directory is cut short");
    return new Uint32Array(own.buffer, own.byteOffset + at, count);
  };
  let at = 16;
  let pieceCount = 0;
  let pieceBytes = 0;
  let piecesPerDoc = 0;
  if (version >= 2) {
    pieceCount = view.getUint32(at, true);
    pieceBytes = view.getUint32(at + 4, true);
    piecesPerDoc = view.getUint32(at + 8, true);
    if (piecesPerDoc === 0) throw new Error("search index directory has no piece grouping");
    at += 16;
  }
  if (at + files * 8 + files > own.byteLength) throw new Error("search index directory is cut short");
  const offsets = new Float64Array(own.buffer, own.byteOffset + at, files);
  at += files * 8;
  const flags = own.subarray(at, at + files);
  at += pad8(files);
  let pieces: PieceTable | null = null;
  if (version >= 2) {
    const firstPiece = u32s(at, files + 1);
    at += pad8((files + 1) * 4);
    const starts = u32s(at, pieceCount);
    at += pad8(pieceCount * 4);
    const linesBefore = u32s(at, pieceCount);
    at += pad8(pieceCount * 4);
    if (firstPiece[files] !== pieceCount) throw new Error("search index directory's piece table does not add up");
    pieces = { pieceBytes, piecesPerDoc, firstPiece, starts, linesBefore };
  }
  const shards: ShardDirectory[] = [];
  for (let i = 0; i < shardCount; i++) {
    if (at + 16 > own.byteLength) throw new Error("search index directory is cut short");
    const firstDoc = view.getUint32(at, true);
    const count = view.getUint32(at + 4, true);
    const keyCount = view.getUint32(at + 8, true);
    at += 16;
    const keys = u32s(at, keyCount);
    const ends = u32s(at + keyCount * 4, keyCount);
    at += pad8(keyCount * 8);
    shards.push({ firstDoc, docCount: count, keys, ends });
  }
  if (at !== own.byteLength) throw new Error("search index directory has trailing bytes");
  return { offsets, flags, pieces, shards };
}

function pad8(n: number): number {
  return Math.ceil(n / 8) * 8;
}

/** A posting list of this one byte stands for every doc of the shard (a list's first gap is at least 1). */
export const DENSE_LIST_BYTE = 0;

/** Whether a stored list is the dense marker. */
export function isDenseList(bytes: Uint8Array): boolean {
  return bytes.byteLength === 1 && bytes[0] === DENSE_LIST_BYTE;
}

/** Decodes a posting list (LEB128 gaps, the first from -1) into shard-local doc numbers. */
export function decodePostings(bytes: Uint8Array): Uint32Array {
  const out = new Uint32Array(bytes.byteLength);
  let n = 0;
  let doc = -1;
  let value = 0;
  let shift = 0;
  for (let i = 0; i < bytes.byteLength; i++) {
    const b = bytes[i]!;
    value |= (b & 0x7f) << shift;
    if (b & 0x80) {
      shift += 7;
      continue;
    }
    doc += value;
    out[n++] = doc;
    value = 0;
    shift = 0;
  }
  return out.subarray(0, n);
}
