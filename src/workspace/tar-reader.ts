import { createTarDecoder, type TarHeader } from "modern-tar";
import type { ArchiveEntry, ArchiveItem } from "./archive-entry";
import { asArchiveInvalid } from "./archive-errors";
import { mapStreamErrors, pipeThroughQuietly } from "./streams";
import { type RawMember, RawTarHeaders } from "./tar-raw-headers";

/**
 * Reads a (decompressed) tar stream entry by entry with modern-tar's streaming decoder in strict
 * mode (checksums, truncation). Bodies that are not opened are cancelled, which skips them. Names,
 * link targets and type flags come from the raw header blocks (`RawTarHeaders`), which modern-tar's
 * header does not give exactly.
 */
export async function* readTarEntries(tar: ReadableStream<Uint8Array>): AsyncGenerator<ArchiveItem> {
  const headers = new RawTarHeaders();
  const decoded = pipeThroughQuietly(pipeThroughQuietly(tar, headers.tap()), createTarDecoder({ strict: true }));
  const entries = mapStreamErrors(decoded, asTarError).getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await entries.read();
      if (done) {
        finished = true;
        return;
      }
      const body = value.body;
      const entry = toArchiveEntry(value.header, headers.take(value.header));
      if (!entry) {
        await body.cancel();
        continue;
      }
      let opened = false;
      yield {
        entry,
        open: () => {
          opened = true;
          return mapStreamErrors(body, asTarError);
        },
      };
      if (!opened) await body.cancel();
    }
  } finally {
    if (!finished) await entries.cancel().catch(() => {});
  }
}

const asTarError = (error: unknown) => asArchiveInvalid(explained(error), "not a valid tar archive");

/**
 * modern-tar's words for a tar that does not end in its two zero blocks ("Invalid EOF.", "Tar archive
 * is truncated."), with what usually causes it: GNU tar reads such archives, this server does not.
 */
function explained(error: unknown): unknown {
  if (!(error instanceof Error) || !/^(Invalid EOF|Tar archive is truncated)/.test(error.message)) return error;
  return new Error(
    `${error.message} The archive does not end with its end-of-archive blocks right after its last entry: it was cut off, or has data after its end (two tars joined, trailing bytes)`,
  );
}

const VOLUME_LABEL = "V".charCodeAt(0);
const OLD_GNU_SPARSE = "S".charCodeAt(0);
/** Names and link targets exactly as their bytes say: a leading U+FEFF is kept, bytes that are not UTF-8 throw. */
const exactUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
/** The same bytes for skip lists, where a name that is not UTF-8 shows U+FFFD. */
const shownUtf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** The entry a member stands for, or null for a header that is no member (a GNU volume label). */
function toArchiveEntry(header: TarHeader, raw: RawMember): ArchiveEntry | null {
  // `tar -V LABEL` names the archive (or tape) in a header of its own: GNU tar makes no file of it.
  if (raw.typeflag === VOLUME_LABEL) return null;
  const name = decodeExactly(raw.name.bytes);
  const base = { name: name ?? shownUtf8.decode(raw.name.bytes), size: 0, mode: header.mode ?? 0 };
  // A backslash is a character of a tar name, not a separator: stored under another path it would
  // collide with a real one, and /changes would name a path `tar x` never made. A name that is not
  // UTF-8 has no exact string (two such names would become one).
  if (name === null || name.includes("\\")) return { ...base, type: "unreadable", unreadableReason: "path_invalid" };
  // PAX sparse files (GNU.sparse.*): what follows is a map and the data blocks, not the file.
  if (Object.keys(header.pax ?? {}).some((key) => key.startsWith("GNU.sparse."))) {
    // Formats 0.1 and 1.0 store a made-up name (GNUSparseFile.<pid>/...) and the real one beside it.
    const sparseName = header.pax?.["GNU.sparse.name"] ?? name;
    return { ...base, name: sparseName, type: "unreadable", unreadableReason: "sparse_file" };
  }
  // GNU's old sparse members ('S', which modern-tar reads as files) hold the data without its holes.
  if (raw.typeflag === OLD_GNU_SPARSE) return { ...base, type: "unreadable", unreadableReason: "sparse_file" };
  switch (header.type) {
    case "directory":
      return { ...base, type: "directory" };
    case "symlink":
    case "link": {
      const target = decodeExactly(raw.linkname.bytes);
      const type = header.type === "symlink" ? "symlink" : "hardlink";
      // A target that is not UTF-8 names no file of the snapshot, and must not become one that is.
      if (target === null)
        return { ...base, type: "unreadable", unreadableReason: type === "symlink" ? "symlink_unresolved" : "hard_link_unresolved" };
      return { ...base, type, linkTarget: target };
    }
    case "character-device":
    case "block-device":
      return { ...base, type: "device" };
    case "fifo":
      return { ...base, type: "special" };
    default:
      return { ...base, type: "file", size: header.size };
  }
}

function decodeExactly(bytes: Uint8Array): string | null {
  try {
    return exactUtf8.decode(bytes);
  } catch {
    return null;
  }
}
