/**
 * Work between two turns given back to the event loop, in bytes of archive data... (4 MiB let a
 * running stream go silent for 0.55 s here, 1.2 s on a loaded machine; 1 MiB 0.3-0.4 s, at no
 * measurable cost to the ingest: docs/architecture.md.)
 */
export const YIELD_EVERY_BYTES = 1024 * 1024;
/** ...or in archive entries, whichever comes first. */
export const YIELD_EVERY_ENTRIES = 256;

/**
 * A turn of the event loop (a zero timer): other requests on the isolate, timers and aborts run
 * before the work goes on. Awaiting a resolved promise is no turn: work whose every step is served
 * from memory runs as one chain, holding the isolate to its end.
 */
export function eventLoopTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Gives the event loop a turn (a zero timer) at regular amounts of work. An ingest whose input is
 * already buffered runs as one long chain of resolved promises, and nothing else on the isolate (a
 * live SSE stream, its pings, other requests) gets a turn until it ends: a 98 MB upload silenced
 * other streams for up to 3.5 s. Counted in work, not time: a Worker's clock does not advance while
 * it computes.
 */
export class EventLoopTurns {
  private bytes = 0;
  private entries = 0;

  constructor(private readonly yieldTurn: () => Promise<void> = eventLoopTurn) {}

  async afterBytes(n: number): Promise<void> {
    this.bytes += n;
    if (this.bytes >= YIELD_EVERY_BYTES) await this.turn();
  }

  async afterEntry(): Promise<void> {
    if (++this.entries >= YIELD_EVERY_ENTRIES) await this.turn();
  }

  private async turn(): Promise<void> {
    this.bytes = 0;
    this.entries = 0;
    await this.yieldTurn();
  }
}
