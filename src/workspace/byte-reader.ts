/**
 * Pulls exact byte counts out of a chunked stream: `read(n)` buffers n bytes, `skip(n)` drops them,
 * `take(n)` hands them on as a stream. Keeps at most one source chunk beyond what was asked for.
 */
export class ByteReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private pending: Uint8Array = new Uint8Array(0);
  private consumed = 0;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.reader = stream.getReader();
  }

  /** Bytes handed out or skipped so far. */
  get position(): number {
    return this.consumed;
  }

  /** Exactly `n` bytes; throws `RangeError` when the stream ends first. */
  async read(n: number): Promise<Uint8Array> {
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const chunk = await this.next(n - filled);
      out.set(chunk, filled);
      filled += chunk.byteLength;
    }
    return out;
  }

  async skip(n: number): Promise<void> {
    let left = n;
    while (left > 0) left -= (await this.next(left)).byteLength;
  }

  /** The next `n` bytes as a stream; it must be read to the end before the reader is used again. */
  take(n: number): ReadableStream<Uint8Array> {
    let left = n;
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (left === 0) return controller.close();
        const chunk = await this.next(left);
        left -= chunk.byteLength;
        controller.enqueue(chunk);
        if (left === 0) controller.close();
      },
    });
  }

  async cancel(reason?: unknown): Promise<void> {
    await this.reader.cancel(reason).catch(() => {});
  }

  /** Up to `max` (>0) bytes from the front of the stream. */
  private async next(max: number): Promise<Uint8Array> {
    while (this.pending.byteLength === 0) {
      const { done, value } = await this.reader.read();
      if (done) throw new RangeError("stream ended early");
      this.pending = value;
    }
    const chunk = this.pending.subarray(0, max);
    this.pending = this.pending.subarray(chunk.byteLength);
    this.consumed += chunk.byteLength;
    return chunk;
  }
}
