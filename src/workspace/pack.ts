import { WorkspaceError } from "./errors";
import { type PackLayout, workspaceKeys } from "./snapshot-layout";

/** Chunk size of new packs: big enough for few requests, small enough to keep two in memory while ingesting. */
export const PACK_CHUNK_BYTES = 8 * 1024 * 1024;

export function packChunkKey(workspaceId: string, chunk: number): string {
  return `${workspaceKeys(workspaceId).packPrefix}${String(chunk).padStart(5, "0")}`;
}

/**
 * Writes a pack from a sequence of chunks of any size: every `chunkBytes` become one R2 `put`, one
 * uploading while the next fills (so at most two chunks in memory). `abort()` removes every chunk,
 * also one whose `put` is still under way: it waits for the calls already started and lets no new
 * one start.
 */
export class PackWriter {
  private buffer: Uint8Array | null = null;
  private buffered = 0;
  private written = 0;
  private chunks = 0;
  private inFlight: Promise<void> | null = null;
  /** Calls to R2 that have started and not settled. */
  private readonly pending = new Set<Promise<unknown>>();
  private state: "open" | "closed" | "aborted" = "open";

  constructor(
    private readonly bucket: R2Bucket,
    private readonly workspaceId: string,
    private readonly chunkBytes = PACK_CHUNK_BYTES,
  ) {}

  /** Bytes accepted so far (the offset the next byte will have). */
  get length(): number {
    return this.written;
  }

  async write(bytes: Uint8Array): Promise<void> {
    this.assertOpen();
    let from = 0;
    while (from < bytes.byteLength) {
      this.buffer ??= new Uint8Array(this.chunkBytes);
      const n = Math.min(this.chunkBytes - this.buffered, bytes.byteLength - from);
      this.buffer.set(bytes.subarray(from, from + n), this.buffered);
      this.buffered += n;
      this.written += n;
      from += n;
      if (this.buffered === this.chunkBytes) await this.flushChunk();
    }
  }

  /** Stores the last chunk and waits for every put; returns what index.json records. */
  async close(): Promise<PackLayout> {
    this.assertOpen();
    if (this.buffered > 0) await this.flushChunk();
    await this.inFlight;
    // An abort() that ran meanwhile has removed what was written: this close did not succeed.
    this.assertOpen();
    this.state = "closed";
    return { chunkBytes: this.chunkBytes, chunks: this.chunks };
  }

  /** Best-effort cleanup after a failure (also of a closed pack); never throws. */
  async abort(): Promise<void> {
    this.state = "aborted";
    this.buffer = null;
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    const keys = Array.from({ length: this.chunks }, (_, n) => packChunkKey(this.workspaceId, n));
    if (keys.length > 0) await this.bucket.delete(keys).catch(() => {});
  }

  /** Starts putting the buffered chunk after the previous one has landed. */
  private async flushChunk(): Promise<void> {
    const chunk = this.buffer!.subarray(0, this.buffered);
    this.buffer = null;
    this.buffered = 0;
    await this.inFlight;
    const key = packChunkKey(this.workspaceId, this.chunks++);
    this.inFlight = this.call(() => this.bucket.put(key, chunk)).then(() => {});
    // Observed by the next flush, close() or abort(); never an unhandled rejection meanwhile.
    this.inFlight.catch(() => {});
  }

  /** Starts a call to R2, unless the writer has been aborted, and tracks it until it settles. */
  private call<T>(start: () => Promise<T>): Promise<T> {
    if (this.state === "aborted") return Promise.reject(new Error(`writing the pack of ${this.workspaceId} was aborted`));
    const call = new Promise<T>((resolve) => resolve(start()));
    this.pending.add(call);
    const settled = () => this.pending.delete(call);
    call.then(settled, settled);
    return call;
  }

  private assertOpen(): void {
    if (this.state !== "open")
      throw new Error(`writing the pack of ${this.workspaceId} was ${this.state === "closed" ? "finished" : "aborted"}`);
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

  /** The same bytes as a stream straight from R2, one chunk's range after the other. */
  async stream(offset: number, length: number): Promise<ReadableStream<Uint8Array>> {
    if (length === 0) return new Response(new Uint8Array(0)).body!;
    const spans = this.spans(offset, length);
    if (spans.length === 1) return (await this.get(spans[0]!)).body;
    let next = 0;
    let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        for (;;) {
          if (!reader) {
            if (next === spans.length) return controller.close();
            reader = (await this.get(spans[next++]!)).body.getReader();
          }
          const { done, value } = await reader.read();
          if (!done) return controller.enqueue(value);
          reader = null;
        }
      },
      cancel: (reason) => reader?.cancel(reason),
    });
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
