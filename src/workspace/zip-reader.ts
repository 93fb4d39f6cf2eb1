import type { ArchiveItem } from "./archive-entry";
import { ArchiveError, archiveInvalid, asArchiveInvalid } from "./archive-errors";
import { ByteReader } from "./byte-reader";
import { crc32 } from "./crc32";
import { expansionLimits, guardExpansion } from "./expansion-guard";
import type { IngestLimits } from "./limits";
import { mapStreamErrors, pipeThroughQuietly } from "./streams";
import { decodeExactly, MAX_LINK_TARGET_BYTES, readZipDirectory, type ZipEntryData } from "./zip-directory";

const LOCAL_SIGNATURE = 0x04034b50;
const LOCAL_HEADER_BYTES = 30;

/**
 * Reads a zip that has been spooled to R2: the central directory (names, sizes, Unix modes and
 * file types) from the tail, then every entry's data in one sequential read of the rest. Stored
 * and deflated entries are supported (deflate via the native `DecompressionStream`); declared
 * ratios are checked before inflating and actual output while inflating, and the content of every
 * entry that is read must match its CRC-32.
 */
export async function* readZipEntries(bucket: R2Bucket, key: string, size: number, limits: IngestLimits): AsyncGenerator<ArchiveItem> {
  const directory = await readZipDirectory(bucket, key, size, limits);
  if (directory.count === 0) return;
  const order = directory.dataOrder();
  const start = directory.localOffset(order[0]!);
  const object = await bucket.get(key, { range: { offset: start, length: directory.offset - start } });
  if (!object) throw new Error(`spooled upload ${key} vanished`);
  const reader = new ByteReader(mapStreamErrors(object.body, asZipError));
  try {
    for await (const { i, entry } of directory.entries(order)) {
      const data = directory.data(i);
      const label = `zip entry '${entry.name}'`;
      const at = directory.localOffset(i) - start;
      if (at < reader.position) throw archiveInvalid(`zip entries overlap at '${entry.name}'`);
      await reader.skip(at - reader.position);
      const local = new DataView((await reader.read(LOCAL_HEADER_BYTES)).buffer);
      if (local.getUint32(0, true) !== LOCAL_SIGNATURE) throw archiveInvalid(`${label} has no local header`);
      await reader.skip(local.getUint16(26, true) + local.getUint16(28, true));
      const dataEnd = reader.position + data.compressedSize;
      if (entry.type === "symlink") {
        // A link's entry has no size (it is no file), but its target may be deflated (Python's and Go's
        // zip writers do): inflate up to the longest target taken, which its declared size was checked against.
        const target = decodeExactly(await readAll(contentOf(reader, data, MAX_LINK_TARGET_BYTES, label, limits), MAX_LINK_TARGET_BYTES));
        // A target that is not UTF-8 names no file of the snapshot (such names are skipped), and must not
        // become one that is (U+FFFD in a real name).
        if (target === null) Object.assign(entry, { type: "unreadable", unreadableReason: "symlink_unresolved" });
        else entry.linkTarget = target;
        yield {
          entry,
          open: () => {
            throw new Error("symlinks have no content");
          },
        };
      } else if (entry.type === "file") {
        yield { entry, open: () => contentOf(reader, data, entry.size, label, limits) };
      } else {
        yield {
          entry,
          open: () => {
            throw new Error(`${entry.type} entries have no content`);
          },
        };
      }
      if (reader.position < dataEnd) await reader.skip(dataEnd - reader.position);
    }
  } catch (error) {
    throw asZipError(error);
  } finally {
    await reader.cancel();
  }
}

function contentOf(reader: ByteReader, data: ZipEntryData, size: number, label: string, limits: IngestLimits): ReadableStream<Uint8Array> {
  const raw = reader.take(data.compressedSize);
  if (data.method === 0) return checkCrc32(raw, data.crc32, label);
  const inflated = guardExpansion(raw, new DecompressionStream("deflate-raw"), expansionLimits(limits, label, size));
  const mapped = mapStreamErrors(inflated, (error) =>
    error instanceof ArchiveError && error.code === "archive_too_large"
      ? archiveInvalid(`${label} inflates past its declared size`)
      : asArchiveInvalid(error, `${label} is corrupt`),
  );
  return checkCrc32(mapped, data.crc32, label);
}

/**
 * Passes `content` on unchanged and errors it with `archive_invalid` at its end if its CRC-32 is not
 * `expected`: a corrupt entry must not become a snapshot file (the refusal removes the pack).
 */
function checkCrc32(content: ReadableStream<Uint8Array>, expected: number, label: string): ReadableStream<Uint8Array> {
  let crc = 0;
  return pipeThroughQuietly(
    content,
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        crc = crc32(chunk, crc);
        controller.enqueue(chunk);
      },
      flush() {
        if (crc !== expected)
          throw archiveInvalid(`${label} fails its CRC-32 check (content ${hex32(crc)}, archive says ${hex32(expected)})`);
      },
    }),
  );
}

const hex32 = (n: number) => `0x${n.toString(16).padStart(8, "0")}`;

async function readAll(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  if (bytes.byteLength > maxBytes) throw archiveInvalid(`zip symlink target is longer than ${maxBytes} bytes`);
  return bytes;
}

const asZipError = (error: unknown) => asArchiveInvalid(error, "not a valid zip archive");
