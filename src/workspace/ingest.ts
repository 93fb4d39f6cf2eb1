import type { ArchiveItem, SkippedEntry } from "./archive-entry";
import { archiveInvalid, archiveTooLarge, archiveUnsupported, asArchiveInvalid } from "./archive-errors";
import { type ArchiveFormat, detectArchiveFormat, FORMAT_SNIFF_BYTES } from "./archive-format";
import { EventLoopTurns } from "./event-loop-turns";
import { expansionLimits, guardExpansion } from "./expansion-guard";
import { paddedGunzip } from "./gunzip";
import { type IngestLimits, resolveLimits } from "./limits";
import { PackWriter } from "./pack";
import { R2ObjectWriter } from "./r2-writer";
import { SearchIndexBuilder } from "./search/index-builder";
import { SnapshotBuilder } from "./snapshot-builder";
import { type WorkspaceMeta, workspaceKeys } from "./snapshot-layout";
import { mapStreamErrors, peekStream, pipeThroughQuietly } from "./streams";
import { readTarEntries } from "./tar-reader";
import { readZipEntries } from "./zip-reader";

export interface IngestOptions {
  /** The request's Content-Type; used only when the magic bytes are not recognisable. */
  contentType?: string;
  workspaceId: string;
  /** The tenant that owns the workspace (null when auth is off). */
  owner: string | null;
  limits?: Partial<IngestLimits>;
  /** Chunk size of the pack and multipart part size of the zip spool (default 8 MiB); tests pass small values. */
  partBytes?: number;
  /** Build the search index (default true); off only to measure what it costs, or to store a snapshot as older versions did. */
  searchIndex?: boolean;
  /** (file, trigram) pairs per search index shard (default SHARD_POSTINGS); tests pass small values. */
  searchShardPostings?: number;
  /** Most bytes of the search index's directory (default MAX_SEARCH_DIRECTORY_BYTES); tests pass small values. */
  searchDirectoryBytes?: number;
  now?: () => Date;
}

export interface IngestResult {
  workspaceId: string;
  files: number;
  bytes: number;
  skipped: SkippedEntry[];
}

/**
 * Streams an uploaded archive (tar, tar.gz or zip) into an immutable snapshot: an uncompressed
 * pack of file bytes (in 8 MiB chunks), a search index over their text, and an index in R2, then a small meta object
 * that marks it complete. Memory stays bounded by two pack chunks or R2 parts (8 MiB each), decoder buffers, one
 * search index shard (about 16 MiB) and the index's directory (at most 12 MiB, see SearchIndexBuilder). Entries that are unsafe or unusable
 * are skipped with a reason; refusals throw `ArchiveError` and leave nothing behind in R2.
 */
export async function ingestWorkspace(bucket: R2Bucket, body: ReadableStream<Uint8Array>, opts: IngestOptions): Promise<IngestResult> {
  const limits = resolveLimits(opts.limits);
  const keys = workspaceKeys(opts.workspaceId);
  const pack = new PackWriter(bucket, opts.workspaceId, opts.partBytes);
  const spool = new R2ObjectWriter(bucket, keys.upload, opts.partBytes);
  const search =
    opts.searchIndex === false
      ? undefined
      : new SearchIndexBuilder(bucket, opts.workspaceId, opts.searchShardPostings, undefined, opts.searchDirectoryBytes);
  let source: ReadableStream<Uint8Array> | null = null;
  try {
    const peeked = await peekStream(limitUploadBytes(body, limits.maxArchiveBytes), FORMAT_SNIFF_BYTES);
    source = peeked.stream;
    if (peeked.head.byteLength === 0) throw archiveInvalid("the archive is empty");
    const format = detectArchiveFormat(opts.contentType, peeked.head);
    const builder = new SnapshotBuilder(pack, limits, search);
    const turns = new EventLoopTurns();
    for await (const item of await archiveItems(format, source, bucket, spool, limits, turns)) {
      await builder.add(item, turns);
      await turns.afterEntry();
    }
    // A zip whose every file is encrypted would make an empty workspace that looks like a success.
    if (builder.fileCount === 0 && builder.skipped.length > 0 && builder.skipped.every((s) => s.reason === "encrypted"))
      throw archiveUnsupported(`every file of this zip is encrypted (${builder.skipped.length}); upload it unencrypted`);
    const index = builder.finish();
    const searchInfo = await search?.finish();
    if (searchInfo) index.search = searchInfo;
    index.pack = await pack.close();
    await bucket.delete(keys.upload);
    await bucket.put(keys.index, JSON.stringify(index), { httpMetadata: { contentType: "application/json" } });
    const meta: WorkspaceMeta = {
      workspaceId: opts.workspaceId,
      owner: opts.owner,
      format,
      files: builder.fileCount,
      bytes: builder.bytes,
      createdAt: (opts.now ?? (() => new Date()))().toISOString(),
    };
    await bucket.put(keys.meta, JSON.stringify(meta), { httpMetadata: { contentType: "application/json" } });
    return { workspaceId: opts.workspaceId, files: meta.files, bytes: meta.bytes, skipped: builder.skipped };
  } catch (error) {
    await (source ?? body).cancel(error).catch(() => {});
    await Promise.all([pack.abort(), spool.abort(), search?.abort()]);
    await bucket.delete([keys.pack, keys.index, keys.meta, keys.upload]).catch(() => {});
    throw error;
  }
}

async function archiveItems(
  format: ArchiveFormat,
  source: ReadableStream<Uint8Array>,
  bucket: R2Bucket,
  spool: R2ObjectWriter,
  limits: IngestLimits,
  turns: EventLoopTurns,
): Promise<AsyncIterable<ArchiveItem>> {
  switch (format) {
    case "tar":
      return readTarEntries(source);
    case "tar.gz": {
      const tar = guardExpansion(source, paddedGunzip(), expansionLimits(limits, "the gzip stream"));
      // Named here: the tar reader would call a broken gzip stream a broken tar.
      return readTarEntries(mapStreamErrors(tar, (error) => asArchiveInvalid(error, "not a valid gzip stream")));
    }
    case "zip": {
      // The central directory is at the end: spool the upload to R2, then read it by range.
      for await (const chunk of source) {
        await spool.write(chunk);
        await turns.afterBytes(chunk.byteLength);
      }
      const size = await spool.close();
      return readZipEntries(bucket, spool.key, size, limits);
    }
  }
}

/** Errors the stream with 413 `archive_too_large` once more than `maxBytes` have arrived. */
function limitUploadBytes(body: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
  let total = 0;
  return pipeThroughQuietly(
    body,
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        total += chunk.byteLength;
        if (total > maxBytes) throw archiveTooLarge(`the archive is larger than ${maxBytes} bytes`);
        controller.enqueue(chunk);
      },
    }),
  );
}
