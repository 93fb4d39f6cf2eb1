import { ApiError } from "../api/errors";

/**
 * Refusals of a whole upload. Stable codes:
 * 400 `archive_invalid` (corrupt, truncated or self-contradicting archive, empty body),
 * 415 `archive_unsupported` (not tar, tar.gz or zip; encrypted or exotic zip),
 * 413 `archive_too_large` (upload, expanded or total file bytes over the limit),
 * 413 `archive_too_many_files` (more entries than allowed),
 * 422 `archive_bomb` (compression ratio marks a zip/gzip bomb).
 */
export const archiveInvalid = (message: string) => new ApiError(400, "archive_invalid", message);
export const archiveUnsupported = (message: string) => new ApiError(415, "archive_unsupported", message);
export const archiveTooLarge = (message: string) => new ApiError(413, "archive_too_large", message);
export const archiveTooManyFiles = (limit: number) =>
  new ApiError(413, "archive_too_many_files", `archive has more than ${limit} entries`);
export const archiveBomb = (message: string) => new ApiError(422, "archive_bomb", message);
