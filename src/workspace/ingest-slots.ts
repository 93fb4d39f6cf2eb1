import { HarnessError } from "../domain";
import { MAX_CONCURRENT_INGESTS, MAX_INGEST_WAIT_MS, MAX_WAITING_INGESTS } from "../domain/limits";
import { ingestsRunning } from "./shared-caches";

interface Waiter {
  start: () => void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * How many uploads one isolate ingests at once. A stateless Worker isolate serves many requests
 * concurrently within one 128 MB: an ingest's own buffers are bounded (about 35 MB live for a 100 MB
 * archive, docs/benchmarks.md), not their number, so a few at once would take the isolate down with
 * every request in it. Uploads past `max` wait in line (first come, first served) for at most
 * `maxWaitMs`; when the line is full, or the wait runs out, the upload is refused with 503
 * `ingest_busy` and nothing of it is stored.
 */
export class IngestSlots {
  private running = 0;
  private readonly line: Waiter[] = [];

  constructor(
    private readonly max = MAX_CONCURRENT_INGESTS,
    private readonly maxWaiting = MAX_WAITING_INGESTS,
    private readonly maxWaitMs = MAX_INGEST_WAIT_MS,
    /** Told the number running whenever it changes. */
    private readonly onRunning: (running: number) => void = () => {},
  ) {}

  /** Ingests running now, and waiting for a slot. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.line.length };
  }

  async run<T>(ingest: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await ingest();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.running < this.max) {
      this.running++;
      this.onRunning(this.running);
      return Promise.resolve();
    }
    if (this.line.length >= this.maxWaiting) return Promise.reject(busy(`${this.maxWaiting} more are waiting`));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          this.line.splice(this.line.indexOf(waiter), 1);
          reject(busy(`none finished within ${this.maxWaitMs / 1000} s`));
        }, this.maxWaitMs),
      };
      this.line.push(waiter);
    });
  }

  private release(): void {
    // The slot passes straight to the first in line: `running` stays the same.
    const next = this.line.shift();
    if (next) next.start();
    else this.onRunning(--this.running);
  }
}

function busy(why: string): HarnessError<"ingest_busy"> {
  return new HarnessError("ingest_busy", `this server is already ingesting its maximum of uploads and ${why}; retry after a few seconds`);
}

/** The isolate's slots: module state is per isolate, as the memory it guards is. */
export const ingestSlots = new IngestSlots(MAX_CONCURRENT_INGESTS, MAX_WAITING_INGESTS, MAX_INGEST_WAIT_MS, ingestsRunning);
