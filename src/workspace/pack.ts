import { WorkspaceError } from "./errors";
import { PartWriter } from "./part-writer";
import { type PackLayout, workspaceKeys } from "./snapshot-layout";

/** Chunk size of new packs: big enough for few requests, small enough to keep two in memory while ingesting. */
export const PACK_CHUNK_BYTES = 8 * 1024 * 1024;

export function packChunkKey(workspaceId: string, chunk: number): string {
  return `${workspaceKeys(workspaceId).packPrefix}${String(chunk).padStart(5, "0")}`;
}

/**
 * Writes a pack from a sequence of chunks of any size: every `chunkBytes` become one R2 `put`, one
 * uploading while the next fills (see PartWriter). `abort()` removes every chunk, also one whose
 * `put` is still under way.
 */
export class PackWriter extends PartWriter {
  private chunks = 0;

  constructor(
    private readonly bucket: R2Bucket,
    private readonly workspaceId: string,
    chunkBytes = PACK_CHUNK_BYTES,
  ) {
    super(`the pack of ${workspaceId}`, chunkBytes);
  }

  /** Stores the last chunk and waits for every put; returns what index.json records. */
  async close(): Promise<PackLayout> {
    this.assertOpen();
    const tail = this.takeTail();
    await this.settled();
    if (tail.byteLength > 0) await this.storePart(tail);
    this.finishClose();
    return { chunkBytes: this.partBytes, chunks: this.chunks };
  }

  /** Best-effort cleanup after a failure (also of a closed pack); never throws. */
  async abort(): Promise<void> {
    await this.stop();
    const keys = Array.from({ length: this.chunks }, (_, n) => packChunkKey(this.workspaceId, n));
    if (keys.length > 0) await this.bucket.delete(keys).catch(() => {});
  }

  protected storePart(chunk: Uint8Array): Promise<void> {
    const key = packChunkKey(this.workspaceId, this.chunks++);
    return this.call(() => this.bucket.put(key, chunk)).then(() => {});
  }
}

interface PackSpan {
  key: string;
  offset: number;
  length: number;
}

/** Reads byte ranges of a stored pack, whichever way it was stored. */
export class PackReader {
  /** Chunk size; a pack stored as one object is one chunk of unbounded size. */
  readonly chunkBytes: number;

  constructor(
    private readonly bucket: R2Bucket,
    private readonly workspaceId: string,
    private readonly layout: PackLayout | undefined,
  ) {
    this.chunkBytes = layout?.chunkBytes ?? Number.POSITIVE_INFINITY;
  }

  /** `length` bytes from `offset`: one range read per chunk it spans, in parallel. */
  async read(offset: number, length: number): Promise<Uint8Array> {
    if (length === 0) return new Uint8Array(0);
    const spans = this.spans(offset, length);
    const parts = await Promise.all(spans.map((span) => this.readSpan(span)));
    if (parts.length === 1) return parts[0]!;
    const bytes = new Uint8Array(length);
    let at = 0;
    for (const part of parts) {
      bytes.set(part, at);
      at += part.byteLength;
    }
    return bytes;
  }

  /**
   * The same bytes as a stream straight from R2, one chunk's range after the other. A range within
   * one chunk is R2's own body; one across chunks is a native `FixedLengthStream` the runtime pumps
   * each range's body into (no JavaScript per chunk: a JS pull stream as a response body is what
   * stalls mid-way have been reported with). The first range is asked for before this returns, so a
   * pack that lost it is an error answer; a later one that fails breaks the stream off.
   */
  async stream(offset: number, length: number): Promise<ReadableStream<Uint8Array>> {
    if (length === 0) return new Response(new Uint8Array(0)).body!;
    const spans = this.spans(offset, length);
    const first = await this.get(spans[0]!);
    if (spans.length === 1) return first.body;
    const { readable, writable } = new FixedLengthStream(length);
    const pump = async () => {
      let body = first.body;
      for (let next = 1; ; next++) {
        await body.pipeTo(writable, { preventClose: true });
        if (next === spans.length) break;
        body = (await this.get(spans[next]!)).body;
      }
      await writable.close();
    };
    // A consumer that cancels errors the pipe; either way the writable is aborted and nothing is left open.
    pump().catch((err: unknown) => writable.abort(err).catch(() => {}));
    return readable;
  }

  private spans(offset: number, length: number): PackSpan[] {
    if (!this.layout) return [{ key: workspaceKeys(this.workspaceId).pack, offset, length }];
    const size = this.layout.chunkBytes;
    const spans: PackSpan[] = [];
    for (let at = offset, end = offset + length; at < end; ) {
      const chunk = Math.floor(at / size);
      const upTo = Math.min(end, (chunk + 1) * size);
      spans.push({ key: packChunkKey(this.workspaceId, chunk), offset: at - chunk * size, length: upTo - at });
      at = upTo;
    }
    return spans;
  }

  private async get(span: PackSpan): Promise<R2ObjectBody> {
    const object = await this.bucket.get(span.key, { range: { offset: span.offset, length: span.length } });
    if (!object) throw new WorkspaceError("workspace_not_found", `workspace ${this.workspaceId} has lost part of its pack`);
    return object;
  }

  private async readSpan(span: PackSpan): Promise<Uint8Array> {
    const bytes = new Uint8Array(await (await this.get(span)).arrayBuffer());
    if (bytes.byteLength !== span.length)
      throw new Error(`pack of ${this.workspaceId} returned ${bytes.byteLength} of ${span.length} bytes`);
    return bytes;
  }
}
