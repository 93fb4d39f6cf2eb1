/**
 * What the R2 writers share: bytes of any size are cut into parts of `partBytes`; each full part is
 * stored (`storePart`) once the previous one has been, so one uploads while the next fills and at
 * most two are in memory. Every call to R2 goes through `call`, so `stop()` (for an abort) can wait
 * for the calls under way and let no new one start.
 */
export abstract class PartWriter {
  private buffer: Uint8Array | null = null;
  private buffered = 0;
  private written = 0;
  private inFlight: Promise<void> | null = null;
  /** Calls to R2 that have started and not settled. */
  private readonly pending = new Set<Promise<unknown>>();
  private state: "open" | "closed" | "aborted" = "open";

  constructor(
    /** Names what is written, in errors. */
    private readonly label: string,
    protected readonly partBytes: number,
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

  /** Runs before a part is stored, after the previous one has been (a multipart upload is created here). */
  protected async beforePart(): Promise<void> {}

  /** Starts storing a part through `call` (synchronously: no await before the call) and settles when it is stored. */
  protected abstract storePart(part: Uint8Array): Promise<void>;

  /** The bytes not yet in a full part, taken out of the buffer. */
  protected takeTail(): Uint8Array {
    const tail = (this.buffer ?? new Uint8Array(0)).subarray(0, this.buffered);
    this.buffer = null;
    this.buffered = 0;
    return tail;
  }

  /** Waits until the last part started has been stored. */
  protected async settled(): Promise<void> {
    await this.inFlight;
  }

  /** Marks a close as done; throws if an abort() ran meanwhile (it has removed what was written). */
  protected finishClose(): void {
    this.assertOpen();
    this.state = "closed";
  }

  /** Lets no new call start and waits for those under way; returns whether a close had finished. */
  protected async stop(): Promise<boolean> {
    const closed = this.state === "closed";
    this.state = "aborted";
    this.buffer = null;
    // Calls already under way still land: wait for them, so that what they create can be removed.
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    return closed;
  }

  /** Starts a call to R2, unless the writer has been aborted, and tracks it until it settles. */
  protected call<T>(start: () => Promise<T>): Promise<T> {
    if (this.state === "aborted") return Promise.reject(new Error(`writing ${this.label} was aborted`));
    const call = new Promise<T>((resolve) => resolve(start()));
    this.pending.add(call);
    const settled = () => this.pending.delete(call);
    call.then(settled, settled);
    return call;
  }

  protected assertOpen(): void {
    if (this.state !== "open") throw new Error(`writing ${this.label} was ${this.state === "closed" ? "finished" : "aborted"}`);
  }

  private async flushPart(): Promise<void> {
    const part = this.takeTail();
    await this.inFlight;
    await this.beforePart();
    this.inFlight = this.storePart(part);
    // Observed by the next flush, close() or abort(); never an unhandled rejection meanwhile.
    this.inFlight.catch(() => {});
  }
}
