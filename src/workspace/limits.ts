/** Refuse archives whose upload (compressed) body is larger than this, in bytes. */
export const MAX_ARCHIVE_BYTES = 100 * 1024 * 1024;
/** Refuse archives with more entries than this (files, directories, links, devices: every header). */
export const MAX_ARCHIVE_FILES = 50_000;
/** Files larger than this are skipped with `file_too_large`, in bytes. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;
/** Refuse snapshots whose stored files add up to more than this, in bytes. */
export const MAX_TOTAL_BYTES = 512 * 1024 * 1024;
/** Refuse archives that decompress to more than this (skipped entries included), in bytes. */
export const MAX_EXPANDED_BYTES = 1024 * 1024 * 1024;
/** Uncompressed/compressed ratio above which a gzip stream or zip entry counts as a bomb. */
export const MAX_COMPRESSION_RATIO = 100;
/** The ratio is only judged after this many decompressed bytes, so tiny inputs never trip it. */
export const BOMB_CHECK_MIN_BYTES = 1024 * 1024;

/** Ingest limits; tests pass small values through `Partial<IngestLimits>`. */
export interface IngestLimits {
  maxArchiveBytes: number;
  maxArchiveFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
  maxExpandedBytes: number;
  maxCompressionRatio: number;
  bombCheckMinBytes: number;
}

export const DEFAULT_INGEST_LIMITS: Readonly<IngestLimits> = {
  maxArchiveBytes: MAX_ARCHIVE_BYTES,
  maxArchiveFiles: MAX_ARCHIVE_FILES,
  maxFileBytes: MAX_FILE_BYTES,
  maxTotalBytes: MAX_TOTAL_BYTES,
  maxExpandedBytes: MAX_EXPANDED_BYTES,
  maxCompressionRatio: MAX_COMPRESSION_RATIO,
  bombCheckMinBytes: BOMB_CHECK_MIN_BYTES,
};

export function resolveLimits(overrides: Partial<IngestLimits> = {}): IngestLimits {
  return { ...DEFAULT_INGEST_LIMITS, ...overrides };
}
