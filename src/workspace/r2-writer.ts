/** Size of each multipart part, in bytes (R2 wants equal parts of at least 5 MiB, except the last). */
export const R2_PART_BYTES = 8 * 1024 * 1024;

/**
 * Writes one R2 object from a sequence of chunks without knowing its length in advance: objects
 * that fit in one part become a single `put`, larger ones a multipart upload of equal parts, with
 * one part uploading while the next fills (so at most two parts in memory). `abort()` removes
 * every trace (upload aborted, key deleted).
 */
export class R2ObjectWriter {
  private buffer: Uint8Array | null = null;
  private buffered = 0;
  private written = 0;
  private upload: R2MultipartUpload | null = null;
  private readonly parts: R2UploadedPart[] = [];
  private inFlight: Promise<void> | null = null;

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
    const tail = (this.buffer ?? new Uint8Array(0)).subarray(0, this.buffered);
    if (!this.upload) {
      await this.bucket.put(this.key, tail, { httpMetadata: this.httpMetadata });
    } else {
      await this.inFlight;
      if (tail.byteLength > 0) this.parts.push(await this.upload.uploadPart(this.parts.length + 1, tail));
      await this.upload.complete(this.parts);
    }
    this.buffer = null;
    this.buffered = 0;
    return this.written;
  }

  /** Best-effort cleanup after a failure; never throws. */
  async abort(): Promise<void> {
    this.buffer = null;
    await this.inFlight?.catch(() => {});
    await this.upload?.abort().catch(() => {});
    await this.bucket.delete(this.key).catch(() => {});
  }

  /** Starts uploading the full buffer after the previous part has finished. */
  private async flushPart(): Promise<void> {
    const part = this.buffer!;
    this.buffer = null;
    this.buffered = 0;
    await this.inFlight;
    const upload = (this.upload ??= await this.bucket.createMultipartUpload(this.key, { httpMetadata: this.httpMetadata }));
    const partNumber = this.parts.length + 1;
    this.inFlight = upload.uploadPart(partNumber, part).then((uploaded) => {
      this.parts.push(uploaded);
    });
    // Observed by the next flush, close() or abort(); never an unhandled rejection meanwhile.
    this.inFlight.catch(() => {});
  }
}
