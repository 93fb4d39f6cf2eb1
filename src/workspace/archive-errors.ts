/**
 * Refusals of a whole upload. Stable codes, each with the HTTP status the API answers with:
 * 400 `archive_invalid` (corrupt, truncated or self-contradicting archive, empty body),
 * 415 `archive_unsupported` (not tar, tar.gz or zip; encrypted or exotic zip),
 * 413 `archive_too_large` (upload, expanded or total file bytes over the limit),
 * 413 `archive_too_many_files` (more entries than allowed),
 * 422 `archive_bomb` (compression ratio marks a zip/gzip bomb).
 */
export const ARCHIVE_ERROR_STATUS = {
  archive_invalid: 400,
  archive_unsupported: 415,
  archive_too_large: 413,
  archive_too_many_files: 413,
  archive_bomb: 422,
} as const;

export type ArchiveErrorCode = keyof typeof ARCHIVE_ERROR_STATUS;

/**
 * Why an upload cannot become a snapshot. The workspace layer knows nothing of HTTP; `status` is
 * only a suggestion that src/api/workspaces.ts passes on, so the code -> status table lives here once.
 */
export class ArchiveError extends Error {
  override readonly name = "ArchiveError";
  readonly status: (typeof ARCHIVE_ERROR_STATUS)[ArchiveErrorCode];
  constructor(
    readonly code: ArchiveErrorCode,
    message: string,
  ) {
    super(message);
    this.status = ARCHIVE_ERROR_STATUS[code];
  }
}

export const archiveInvalid = (message: string) => new ArchiveError("archive_invalid", message);
export const archiveUnsupported = (message: string) => new ArchiveError("archive_unsupported", message);
export const archiveTooLarge = (message: string) => new ArchiveError("archive_too_large", message);
export const archiveTooManyFiles = (limit: number) => new ArchiveError("archive_too_many_files", `archive has more than ${limit} entries`);
export const archiveBomb = (message: string) => new ArchiveError("archive_bomb", message);

/**
 * A decoder's failure as a refusal: an `ArchiveError` (a limit, a bomb) passes unchanged, anything
 * else becomes `archive_invalid` with `what` in front of its message ("not a valid zip archive: ...").
 */
export function asArchiveInvalid(error: unknown, what: string): unknown {
  if (error instanceof ArchiveError) return error;
  const why = error instanceof Error ? error.message : String(error);
  return archiveInvalid(`${what}: ${why}`);
}
