/** Size of each multipart part, in bytes (R2 wants equal parts of at least 5 MiB, except the last). */
export const R2_PART_BYTES = 8 * 1024 * 1024;

/**
 * Writes one R2 object from a sequence of chunks without knowing its length in advance: objects
 * that fit in one part become a single `put`, larger ones a multipart upload of equal parts, with
 * one part uploading while the next fills (so at most two parts in memory). `abort()` removes
 * every trace (upload aborted, key deleted), also when it runs while a call to R2 is still under
 * way: it waits for the calls already started and lets no new one start.
 */
export class R2ObjectWriter {
  private buffer: Uint8Array | null = null;
  private buffered = 0;
  private written = 0;
  /** The multipart upload from the moment it is requested, so abort() also finds one R2 has not created yet. */
  private upload: Promise<R2MultipartUpload> | null = null;
  private readonly parts: R2UploadedPart[] = [];
  private inFlight: Promise<void> | null = null;
  /** Calls to R2 that have started and not settled. */
  private readonly pending = new Set<Promise<unknown>>();
  private state: "open" | "closed" | "aborted" = "open";

  constructor(
    private readonly bucket: R2Bucket,
    readonly key: string,
    private readonly partBytes = R2_PART_BYTES,
    private readonly httpMetadata?: R2HTTPMetadata,
  ) {}

  /** Bytes accepted so far (the offset the next byte will have). */
  get length(): number {
    return this.written;
  }

  async write(bytes: Uint8Array): Promise<void> {
    this.assertOpen();
    let from = 0;
    while (from < bytes.byteLength) {
      this.buffer ??= new Uint8Array(this.partBytes);
      const n = Math.min(this.partBytes - this.buffered, bytes.byteLength - from);
      this.buffer.set(bytes.subarray(from, from + n), this.buffered);
      this.buffered += n;
      this.written += n;
      from += n;
      if (this.buffered === this.partBytes) await this.flushPart();
    }
  }

  /** Finishes the object; returns its length in bytes. */
  async close(): Promise<number> {
    this.assertOpen();
    const tail = (this.buffer ?? new Uint8Array(0)).subarray(0, this.buffered);
    if (!this.upload) {
      await this.call(() => this.bucket.put(this.key, tail, { httpMetadata: this.httpMetadata }));
    } else {
      await this.inFlight;
      const upload = await this.upload;
      if (tail.byteLength > 0) this.parts.push(await this.call(() => upload.uploadPart(this.parts.length + 1, tail)));
      await this.call(() => upload.complete(this.parts));
    }
    // An abort() that ran meanwhile has removed what was written: this close did not succeed.
    this.assertOpen();
    this.state = "closed";
    this.buffer = null;
    this.buffered = 0;
    return this.written;
  }

  /** Best-effort cleanup after a failure (also of a closed object); never throws. */
  async abort(): Promise<void> {
    const completed = this.state === "closed";
    this.state = "aborted";
    this.buffer = null;
    // Calls already under way still land: wait for them, so that what they create is removed below.
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    if (!completed) {
      const upload = await this.upload?.catch(() => null);
      await upload?.abort().catch(() => {});
    }
    await this.bucket.delete(this.key).catch(() => {});
  }

  /** Starts uploading the full buffer after the previous part has finished. */
  private async flushPart(): Promise<void> {
    const part = this.buffer!;
    this.buffer = null;
    this.buffered = 0;
    await this.inFlight;
    this.upload ??= this.call(() => this.bucket.createMultipartUpload(this.key, { httpMetadata: this.httpMetadata }));
    const upload = await this.upload;
    const partNumber = this.parts.length + 1;
    this.inFlight = this.call(() => upload.uploadPart(partNumber, part)).then((uploaded) => {
      this.parts.push(uploaded);
    });
    // Observed by the next flush, close() or abort(); never an unhandled rejection meanwhile.
    this.inFlight.catch(() => {});
  }

  /** Starts a call to R2, unless the writer has been aborted, and tracks it until it settles. */
  private call<T>(start: () => Promise<T>): Promise<T> {
    if (this.state === "aborted") return Promise.reject(new Error(`writing ${this.key} was aborted`));
    const call = new Promise<T>((resolve) => resolve(start()));
    this.pending.add(call);
    const settled = () => this.pending.delete(call);
    call.then(settled, settled);
    return call;
  }

  private assertOpen(): void {
    if (this.state !== "open") throw new Error(`writing ${this.key} was ${this.state === "closed" ? "finished" : "aborted"}`);
  }
}
