import { createTarDecoder, type TarHeader } from "modern-tar";
import type { ArchiveEntry, ArchiveItem } from "./archive-entry";
import { asArchiveInvalid } from "./archive-errors";
import { mapStreamErrors, pipeThroughQuietly } from "./streams";

/**
 * Reads a (decompressed) tar stream entry by entry with modern-tar's streaming decoder in strict
 * mode (checksums, truncation). Bodies that are not opened are cancelled, which skips them.
 */
export async function* readTarEntries(tar: ReadableStream<Uint8Array>): AsyncGenerator<ArchiveItem> {
  const entries = mapStreamErrors(pipeThroughQuietly(tar, createTarDecoder({ strict: true })), asTarError).getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await entries.read();
      if (done) {
        finished = true;
        return;
      }
      let opened = false;
      const body = value.body;
      yield {
        entry: toArchiveEntry(value.header),
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

const asTarError = (error: unknown) => asArchiveInvalid(error, "not a valid tar archive");

function toArchiveEntry(header: TarHeader): ArchiveEntry {
  const base = { name: header.name, size: 0, mode: header.mode ?? 0 };
  // A backslash is a character of a tar name, not a separator: stored under another path it would
  // collide with a real one, and /changes would name a path `tar x` never made. U+FFFD stands for
  // a name that was not UTF-8 (two such names would become one).
  if (/[\\\uFFFD]/.test(header.name)) return { ...base, type: "unreadable", unreadableReason: "path_invalid" };
  // PAX sparse files (GNU.sparse.*): what follows is a map and the data blocks, not the file.
  if (Object.keys(header.pax ?? {}).some((key) => key.startsWith("GNU.sparse."))) {
    // Formats 0.1 and 1.0 store a made-up name (GNUSparseFile.<pid>/...) and the real one beside it.
    const name = header.pax?.["GNU.sparse.name"] ?? header.name;
    return { ...base, name, type: "unreadable", unreadableReason: "sparse_file" };
  }
  switch (header.type) {
    case "directory":
      return { ...base, type: "directory" };
    case "symlink":
      return { ...base, type: "symlink", linkTarget: header.linkname ?? "" };
    case "link":
      return { ...base, type: "hardlink", linkTarget: header.linkname ?? "" };
    case "character-device":
    case "block-device":
      return { ...base, type: "device" };
    case "fifo":
      return { ...base, type: "special" };
    default:
      return { ...base, type: "file", size: header.size };
  }
}
