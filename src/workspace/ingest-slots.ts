import { HarnessError } from "../domain";
import { MAX_CONCURRENT_INGESTS, MAX_INGEST_WAIT_MS, MAX_WAITING_INGESTS } from "../domain/limits";
import { ingestsRunning } from "./shared-caches";

/** One upload in line; `granted` once a finishing upload hands it its slot. */
interface Waiter {
  granted: boolean;
}

/** How often an upload in line looks whether it was handed a slot. */
const WAIT_POLL_MS = 20;

/**
 * How many uploads one isolate takes at once: archives being ingested, and the conversation and
 * trace imports, which hold their parsed body and the copy sent to an object. A stateless Worker
 * isolate serves many requests concurrently within one 128 MB: each upload's own buffers are bounded
 * (about 35 MB live for a 100 MB archive, docs/benchmarks.md), not their number, so a few at once
 * would take the isolate down with every request in it. Uploads past `max` wait in line (first
 * come, first served) for at most `maxWaitMs`; when the line is full, or the wait runs out, the
 * upload is refused with 503 `ingest_busy` and nothing of it is stored.
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
    private readonly pollMs = WAIT_POLL_MS,
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

  private async acquire(): Promise<void> {
    if (this.running < this.max) {
      this.running++;
      this.onRunning(this.running);
      return;
    }
    if (this.line.length >= this.maxWaiting) throw busy(`${this.maxWaiting} more are waiting`);
    const waiter: Waiter = { granted: false };
    this.line.push(waiter);
    const deadline = Date.now() + this.maxWaitMs;
    // The waiter watches on its own timer rather than being resolved by the upload that finishes:
    // that runs in another request's context, and reading this request's body from there fails
    // ("Cannot perform I/O on behalf of a different request" under vitest-pool-workers).
    while (!waiter.granted) {
      const left = deadline - Date.now();
      if (left <= 0) {
        this.line.splice(this.line.indexOf(waiter), 1);
        throw busy(`none finished within ${this.maxWaitMs / 1000} s`);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(this.pollMs, left)));
    }
  }

  private release(): void {
    // The slot passes straight to the first in line: `running` stays the same.
    const next = this.line.shift();
    if (next) next.granted = true;
    else this.onRunning(--this.running);
  }
}

function busy(why: string): HarnessError<"ingest_busy"> {
  return new HarnessError("ingest_busy", `this server is already taking its maximum of uploads and ${why}; retry after a few seconds`);
}

/** The isolate's slots: module state is per isolate, as the memory it guards is. */
export const ingestSlots = new IngestSlots(MAX_CONCURRENT_INGESTS, MAX_WAITING_INGESTS, MAX_INGEST_WAIT_MS, ingestsRunning);
