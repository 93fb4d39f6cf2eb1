/** Emit buffered text once it is this long... */
export const DELTA_FLUSH_CHARS = 256;
/** ...or this long after the previous emit, so a slow stream still shows progress promptly. */
export const DELTA_FLUSH_INTERVAL_MS = 50;

/**
 * Merges the model's tiny text deltas into fewer `assistant_delta` events, so the log does not get
 * one row per token. Checked on each arriving delta (no timers): text is held only while deltas
 * keep arriving faster than the interval; `flush()` releases the rest at the end of a turn.
 */
export class DeltaCoalescer {
  private buffer = "";
  private lastEmitMs = -Infinity;

  constructor(
    private readonly emit: (text: string) => void,
    private readonly clock: () => number,
  ) {}

  push(text: string): void {
    if (text === "") return;
    this.buffer += text;
    const now = this.clock();
    if (this.buffer.length >= DELTA_FLUSH_CHARS || now - this.lastEmitMs >= DELTA_FLUSH_INTERVAL_MS) this.release(now);
  }

  flush(): void {
    if (this.buffer !== "") this.release(this.clock());
  }

  private release(now: number): void {
    const text = this.buffer;
    this.buffer = "";
    this.lastEmitMs = now;
    this.emit(text);
  }
}
