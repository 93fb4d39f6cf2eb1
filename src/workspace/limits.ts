import {
  MAX_ARCHIVE_BYTES,
  MAX_ARCHIVE_FILES,
  MAX_COMPRESSION_RATIO,
  MAX_EXPANDED_BYTES,
  MAX_FILE_BYTES,
  MAX_TOTAL_BYTES,
  MAX_WORKSPACE_PATH_CHARS,
} from "../domain/limits";
/** The ratio is only judged after this many decompressed bytes, so tiny inputs never trip it. */
export const BOMB_CHECK_MIN_BYTES = 1024 * 1024;

/** Ingest limits; tests pass small values through `Partial<IngestLimits>`. */
export interface IngestLimits {
  maxArchiveBytes: number;
  maxArchiveFiles: number;
  /** Characters of all entries' names together. */
  maxPathChars: number;
  maxFileBytes: number;
  maxTotalBytes: number;
  maxExpandedBytes: number;
  maxCompressionRatio: number;
  bombCheckMinBytes: number;
}

export const DEFAULT_INGEST_LIMITS: Readonly<IngestLimits> = {
  maxArchiveBytes: MAX_ARCHIVE_BYTES,
  maxArchiveFiles: MAX_ARCHIVE_FILES,
  maxPathChars: MAX_WORKSPACE_PATH_CHARS,
  maxFileBytes: MAX_FILE_BYTES,
  maxTotalBytes: MAX_TOTAL_BYTES,
  maxExpandedBytes: MAX_EXPANDED_BYTES,
  maxCompressionRatio: MAX_COMPRESSION_RATIO,
  bombCheckMinBytes: BOMB_CHECK_MIN_BYTES,
};

export function resolveLimits(overrides: Partial<IngestLimits> = {}): IngestLimits {
  return { ...DEFAULT_INGEST_LIMITS, ...overrides };
}
