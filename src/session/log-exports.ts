import { EXPORT_STALL_MS, MAX_EXPORTS_PER_SESSION } from "../domain/limits";

/**
 * The downloads of its logs a session serves at once. While a client is slow to read, the streams
 * between the object and it buffer what the object produced (about 6 MB for a client that reads
 * nothing, hunt 48: sixteen such clients held 115 MB of an isolate's 128), so a session serves at most
 * `max` at once, and a download its client has read nothing from for `stallMs` is ended, freeing
 * its place for a client that reads.
 */
export class LogExports {
  private serving = 0;

  constructor(
    readonly max = MAX_EXPORTS_PER_SESSION,
    private readonly stallMs = EXPORT_STALL_MS,
  ) {}

  /** Takes a place for a new download (before its first read, so requests at once cannot pass `max`); false when none is free. */
  take(): boolean {
    if (this.serving >= this.max) return false;
    this.serving++;
    return true;
  }

  /** Gives back a place taken for a download that is not served after all. */
  giveBack(): void {
    this.serving--;
  }

  /**
   * A download's body: `first`, then the rest of `batches`, each encoded by `encode`. It keeps the
   * place `take` gave it until it ends: read to its end, cancelled by its client, failed, or stalled.
   */
  body<T>(first: IteratorResult<T>, batches: AsyncGenerator<T>, encode: (batch: T) => Uint8Array): ReadableStream<Uint8Array> {
    let open = true;
    let stall: ReturnType<typeof setTimeout> | undefined;
    const end = () => {
      if (!open) return;
      open = false;
      clearTimeout(stall);
      this.serving--;
    };
    let pending: IteratorResult<T> | null = first;
    // Waits for the client's next read: from the start (a body nobody ever reads keeps no place) and after each batch.
    const awaitRead = (controller: ReadableStreamDefaultController<Uint8Array>) => {
      stall = setTimeout(() => {
        end();
        controller.error(new Error(`the client read nothing for ${this.stallMs} ms`));
        void batches.return(undefined);
      }, this.stallMs);
    };
    return new ReadableStream<Uint8Array>(
      {
        start: awaitRead,
        pull: async (controller) => {
          // Reading from R2 is the object's time, not the client's: the clock runs only between pulls.
          clearTimeout(stall);
          try {
            const next = pending ?? (await batches.next());
            pending = null;
            if (next.done) {
              end();
              return controller.close();
            }
            controller.enqueue(encode(next.value));
          } catch (err) {
            end();
            throw err;
          }
          awaitRead(controller);
        },
        cancel: async () => {
          end();
          await batches.return(undefined);
        },
      },
      // Nothing queued ahead: a pull is a read of the client's, so the time between pulls is the client's.
      { highWaterMark: 0 },
    );
  }
}
