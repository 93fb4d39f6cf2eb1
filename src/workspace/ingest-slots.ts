import { HarnessError } from "../domain";
import { MAX_CONCURRENT_INGESTS, MAX_INGEST_WAIT_MS, MAX_WAITING_INGESTS } from "../domain/limits";
import { ingestsRunning } from "./shared-caches";

/** One upload in line. */
interface Waiter {
  /** When it last looked for its slot (on its own timer). */
  seenAt: number;
  /** When a finishing upload handed it its slot, or null. */
  grantedAt: number | null;
}

/** How often an upload in line looks whether it was handed a slot. */
const WAIT_POLL_MS = 20;
/**
 * An upload in line that has not looked for its slot for this long is taken for gone: on Cloudflare
 * a request whose client went away is cancelled, its timers with it, and it would never take (or
 * give back) a slot handed to it. One that was only held up rejoins the line when it looks again.
 */
const GONE_AFTER_MS = 5_000;

/** How the slots tell time and wait; tests pass their own. */
export interface SlotClock {
  now(): number;
  sleep(ms: number): Promise<void>;
  pollMs: number;
}

const realClock: SlotClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  pollMs: WAIT_POLL_MS,
};

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
  /** Slots handed to uploads in line that have not yet seen them. */
  private readonly handed = new Set<Waiter>();

  constructor(
    private readonly max = MAX_CONCURRENT_INGESTS,
    private readonly maxWaiting = MAX_WAITING_INGESTS,
    private readonly maxWaitMs = MAX_INGEST_WAIT_MS,
    /** Told the number running whenever it changes. */
    private readonly onRunning: (running: number) => void = () => {},
    private readonly clock: SlotClock = realClock,
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
    this.takeBackUnseen();
    if (this.running < this.max) {
      this.running++;
      this.onRunning(this.running);
      return;
    }
    if (this.line.length >= this.maxWaiting) throw busy(`${this.maxWaiting} more are waiting`);
    const { clock } = this;
    const waiter: Waiter = { seenAt: clock.now(), grantedAt: null };
    this.line.push(waiter);
    const deadline = clock.now() + this.maxWaitMs;
    // The waiter watches on its own timer rather than being resolved by the upload that finishes:
    // that runs in another request's context, and reading this request's body from there fails
    // ("Cannot perform I/O on behalf of a different request" under vitest-pool-workers).
    for (;;) {
      waiter.seenAt = clock.now();
      if (waiter.grantedAt !== null) {
        this.handed.delete(waiter);
        return;
      }
      this.takeBackUnseen();
      // Taken for gone while it was held up: back in line, at the end.
      if (!this.line.includes(waiter)) this.line.push(waiter);
      const left = deadline - clock.now();
      if (left <= 0) {
        this.line.splice(this.line.indexOf(waiter), 1);
        throw busy(`none finished within ${this.maxWaitMs / 1000} s`);
      }
      await clock.sleep(Math.min(clock.pollMs, left));
    }
  }

  private release(): void {
    const now = this.clock.now();
    // The slot passes straight to the first in line still looking for it: `running` stays the same.
    for (let next = this.line.shift(); next; next = this.line.shift()) {
      if (now - next.seenAt > GONE_AFTER_MS) continue;
      next.grantedAt = now;
      this.handed.add(next);
      return;
    }
    this.onRunning(--this.running);
  }

  /** Slots handed to uploads that never came for them (gone since) are handed on. */
  private takeBackUnseen(): void {
    const now = this.clock.now();
    for (const waiter of this.handed) {
      if (waiter.grantedAt !== null && now - waiter.grantedAt > GONE_AFTER_MS) {
        // Revoked: should it only have been held up, it finds no slot when it looks and rejoins the line.
        waiter.grantedAt = null;
        this.handed.delete(waiter);
        this.release();
      }
    }
  }
}

function busy(why: string): HarnessError<"ingest_busy"> {
  return new HarnessError("ingest_busy", `this server is already taking its maximum of uploads and ${why}; retry after a few seconds`);
}

/** The isolate's slots: module state is per isolate, as the memory it guards is. */
export const ingestSlots = new IngestSlots(MAX_CONCURRENT_INGESTS, MAX_WAITING_INGESTS, MAX_INGEST_WAIT_MS, ingestsRunning);
