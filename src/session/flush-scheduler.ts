import type { FlushResult } from "./segment-flusher";

/** Unflushed bytes that trigger a flush without waiting for the alarm or the end of a run. */
export const FLUSH_THRESHOLD_BYTES = 256 * 1024;
/** The alarm flushes whatever is left this long after the first unflushed append. */
export const FLUSH_INTERVAL_MS = 10_000;

export interface FlushSchedulerDeps {
  /** Moves the unflushed tail to R2 (segments, manifest, session.json); may throw. */
  flush(): Promise<FlushResult>;
  /** Bytes of log bodies not yet in R2, measured from storage. */
  measureUnflushedBytes(): number;
  setAlarm(atMs: number): Promise<void>;
  /** Keeps the object alive for background work (`ctx.waitUntil`). */
  waitUntil(work: Promise<unknown>): void;
  now(): number;
}

/**
 * Decides when the session log goes to R2: at once when the unflushed tail passes
 * FLUSH_THRESHOLD_BYTES, otherwise from an alarm FLUSH_INTERVAL_MS after an append (and at the end of
 * every run, which calls `flush()`). At most one flush is in flight: callers join it, and appends made
 * while it runs only count bytes (the next append past the threshold, the alarm or the run's end flushes them). Without that, every append
 * past the threshold started another flush and another session.json put, thousands per large run,
 * which queued R2 writes for seconds and stalled other requests of the process.
 */
export class FlushScheduler {
  private unflushedBytes: number | null = null;
  private running: Promise<FlushResult> | null = null;
  private alarmArmed = false;

  constructor(private readonly deps: FlushSchedulerDeps) {}

  /** Called after every committed append with the bytes it added. */
  afterAppend(bytes: number): void {
    this.unflushedBytes = (this.unflushedBytes ?? this.deps.measureUnflushedBytes()) + bytes;
    if (this.unflushedBytes >= FLUSH_THRESHOLD_BYTES) {
      if (!this.running) this.deps.waitUntil(this.flush().catch(() => this.armAlarm()));
    } else if (!this.alarmArmed) {
      this.deps.waitUntil(this.armAlarm());
    }
  }

  /**
   * Flushes now. With a flush in flight, flushes again once it ends: a flush takes the rows appended
   * before it started, and this caller's may be later. Rejects when R2 fails; the rows stay in SQLite.
   */
  flush(): Promise<FlushResult> {
    const running = this.running;
    if (running) return running.then(this.flushAgain, this.flushAgain);
    const started = this.deps.flush().finally(() => {
      this.running = null;
      // Re-measured on the next append: rows appended during the flush may or may not be in it.
      this.unflushedBytes = null;
    });
    this.running = started;
    return started;
  }

  private readonly flushAgain = (): Promise<FlushResult> => this.flush();

  /** The alarm fired (one alarm per object; it has to be armed again to fire again). */
  alarmFired(): void {
    this.alarmArmed = false;
  }

  async armAlarm(): Promise<void> {
    this.alarmArmed = true;
    await this.deps.setAlarm(this.deps.now() + FLUSH_INTERVAL_MS);
  }

  /** Settles once no flush is in flight (one chained after the last is waited for too); never rejects. */
  async settled(): Promise<void> {
    while (this.running) await this.running.catch(() => {});
  }

  get flushing(): boolean {
    return this.running !== null;
  }
}
