import { archiveUnsupported } from "./archive-errors";

export type ArchiveFormat = "tar" | "tar.gz" | "zip";

/** Bytes to look at before deciding the format (the ustar magic sits at offset 257; an empty tar is 1024 zeros). */
export const FORMAT_SNIFF_BYTES = 1024;

const CONTENT_TYPES: Record<string, ArchiveFormat> = {
  "application/x-tar": "tar",
  "application/tar": "tar",
  "application/gzip": "tar.gz",
  "application/x-gzip": "tar.gz",
  "application/x-gtar": "tar.gz",
  "application/x-compressed-tar": "tar.gz",
  "application/tar+gzip": "tar.gz",
  "application/zip": "zip",
  "application/x-zip-compressed": "zip",
};

/** The Content-Types an archive is read by when its bytes carry no magic (the API documents them). */
export const ARCHIVE_CONTENT_TYPES: readonly string[] = Object.keys(CONTENT_TYPES);

/**
 * The archive format: magic bytes decide when they are recognisable (gzip `1f 8b`, zip `PK\3\4` or
 * `PK\5\6`, tar `ustar` at 257 or an empty tar's zero blocks); otherwise the Content-Type does (old v7 tars have no magic).
 */
export function detectArchiveFormat(contentType: string | undefined, head: Uint8Array): ArchiveFormat {
  if (head[0] === 0x1f && head[1] === 0x8b) return "tar.gz";
  if (head[0] === 0x50 && head[1] === 0x4b && ((head[2] === 3 && head[3] === 4) || (head[2] === 5 && head[3] === 6))) return "zip";
  if (String.fromCharCode(...head.subarray(257, 262)) === "ustar") return "tar";
  // An empty tar is nothing but zero blocks (at least two).
  if (head.byteLength >= 1024 && head.every((b) => b === 0)) return "tar";
  const mediaType = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  const declared = CONTENT_TYPES[mediaType];
  if (declared) return declared;
  throw archiveUnsupported(
    `the body is not a tar, tar.gz or zip archive (Content-Type ${JSON.stringify(mediaType || "none")}, unrecognised magic bytes)`,
  );
}
