import { PartWriter } from "./part-writer";

/** Size of each multipart part, in bytes (R2 wants equal parts of at least 5 MiB, except the last). */
export const R2_PART_BYTES = 8 * 1024 * 1024;

/**
 * Writes one R2 object from a sequence of chunks without knowing its length in advance: objects
 * that fit in one part become a single `put`, larger ones a multipart upload of equal parts, with
 * one part uploading while the next fills (so at most two parts in memory). `abort()` removes
 * every trace (upload aborted, key deleted), also when it runs while a call to R2 is still under
 * way: it waits for the calls already started and lets no new one start.
 */
export class R2ObjectWriter extends PartWriter {
  /** The multipart upload from the moment it is requested, so abort() also finds one R2 has not created yet. */
  private upload: Promise<R2MultipartUpload> | null = null;
  private created: R2MultipartUpload | null = null;
  private readonly parts: R2UploadedPart[] = [];

  constructor(
    private readonly bucket: R2Bucket,
    readonly key: string,
    partBytes = R2_PART_BYTES,
    private readonly httpMetadata?: R2HTTPMetadata,
  ) {
    super(key, partBytes);
  }

  /** Finishes the object; returns its length in bytes. */
  async close(): Promise<number> {
    this.assertOpen();
    const tail = this.takeTail();
    if (!this.upload) {
      await this.call(() => this.bucket.put(this.key, tail, { httpMetadata: this.httpMetadata }));
    } else {
      await this.settled();
      const upload = await this.upload;
      if (tail.byteLength > 0) this.parts.push(await this.call(() => upload.uploadPart(this.parts.length + 1, tail)));
      await this.call(() => upload.complete(this.parts));
    }
    this.finishClose();
    return this.length;
  }

  /** Best-effort cleanup after a failure (also of a closed object); never throws. */
  async abort(): Promise<void> {
    const completed = await this.stop();
    if (!completed) {
      const upload = await this.upload?.catch(() => null);
      await upload?.abort().catch(() => {});
    }
    await this.bucket.delete(this.key).catch(() => {});
  }

  protected override async beforePart(): Promise<void> {
    this.upload ??= this.call(() => this.bucket.createMultipartUpload(this.key, { httpMetadata: this.httpMetadata }));
    this.created = await this.upload;
  }

  protected storePart(part: Uint8Array): Promise<void> {
    const upload = this.created!;
    const partNumber = this.parts.length + 1;
    return this.call(() => upload.uploadPart(partNumber, part)).then((uploaded) => {
      this.parts.push(uploaded);
    });
  }
}
