import { HarnessError } from "../domain/errors";

/**
 * Refusals of a whole upload (statuses in the error registry):
 * `archive_invalid` (corrupt, truncated or self-contradicting archive, empty body),
 * `archive_unsupported` (not tar, tar.gz or zip; a zip whose every file is encrypted),
 * `archive_too_large` (upload, expanded or total file bytes over the limit),
 * `archive_too_many_files` (more entries than allowed, or names adding up to more characters),
 * `archive_bomb` (compression ratio marks a zip/gzip bomb),
 * `upload_too_slow` (the body came too slowly while the upload held an ingest slot).
 */
export type ArchiveErrorCode =
  | "archive_invalid"
  | "archive_unsupported"
  | "archive_too_large"
  | "archive_too_many_files"
  | "archive_bomb"
  | "upload_too_slow";

/** Why an upload cannot become a snapshot. */
export class ArchiveError extends HarnessError<ArchiveErrorCode> {
  override readonly name = "ArchiveError";
}

export const archiveInvalid = (message: string) => new ArchiveError("archive_invalid", message);
export const archiveUnsupported = (message: string) => new ArchiveError("archive_unsupported", message);
export const archiveTooLarge = (message: string) => new ArchiveError("archive_too_large", message);
export const archiveTooManyFiles = (limit: number) => new ArchiveError("archive_too_many_files", `archive has more than ${limit} entries`);
export const archivePathsTooLong = (limit: number, entries: number) =>
  new ArchiveError(
    "archive_too_many_files",
    `the names of the archive's first ${entries} entries add up to more than ${limit} characters (a workspace's paths are held in memory)`,
  );
export const archiveBomb = (message: string) => new ArchiveError("archive_bomb", message);

/**
 * A decoder's failure as a refusal: an `ArchiveError` (a limit, a bomb) passes unchanged, and so does
 * a body that broke off (`body_incomplete`, the client's doing, not the archive's); anything else
 * becomes `archive_invalid` with `what` in front of its message ("not a valid zip archive: ...").
 */
export function asArchiveInvalid(error: unknown, what: string): unknown {
  if (error instanceof ArchiveError) return error;
  if (error instanceof HarnessError && error.code === "body_incomplete") return error;
  const why = error instanceof Error ? error.message : String(error);
  return archiveInvalid(`${what}: ${why}`);
}
