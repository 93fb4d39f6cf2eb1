/** One entry as an archive describes it, before any policy is applied. */
export interface ArchiveEntry {
  /** The name exactly as stored in the archive (not yet checked or canonicalised). */
  name: string;
  type: "file" | "directory" | "symlink" | "hardlink" | "device" | "special" | "unreadable";
  /** Declared content size in bytes (files only; 0 otherwise). */
  size: number;
  /** POSIX permission bits as stored (0 when the archive has none). */
  mode: number;
  /** Symlink target (relative to the link's directory) or hard-link target (relative to the root). */
  linkTarget?: string;
  /** Why an `unreadable` entry cannot be read (e.g. `encrypted`, `unsupported_compression`). */
  unreadableReason?: SkipReason;
}

/** An entry plus access to its content; `open()` must be read to the end before the next entry. */
export interface ArchiveItem {
  entry: ArchiveEntry;
  open(): ReadableStream<Uint8Array>;
}

/** Stable reasons for entries left out of a snapshot (reported in `skipped`). */
export const SKIP_REASONS = [
  "path_escape",
  "path_too_long",
  "path_invalid",
  "path_conflict",
  "duplicate_path",
  "symlink_outside",
  "symlink_unresolved",
  "hard_link_outside",
  "hard_link_unresolved",
  "device_file",
  "special_file",
  "file_too_large",
  "sparse_file",
  "encrypted",
  "unsupported_compression",
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface SkippedEntry {
  path: string;
  reason: SkipReason;
}
