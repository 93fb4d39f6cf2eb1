import { failure } from "../domain/errors";
import { DOWNLOAD_STALL_MS, MAX_DOWNLOADS_PER_SESSION, MAX_STALLED_DOWNLOADS_PER_ISOLATE, SSE_STALL_GRACE_MS } from "../domain/limits";
import { StalledStreams } from "./stalled-streams";

/** The stalled downloads of every session in this isolate. */
export const isolateStalledDownloads = new StalledStreams(
  MAX_STALLED_DOWNLOADS_PER_ISOLATE,
  `more than ${MAX_STALLED_DOWNLOADS_PER_ISOLATE} downloads went unread on this server and this one longest; download it again`,
);

/**
 * The downloads an object serves at once: a session's logs (`GET .../messages`, `/events`, `/trace`),
 * changes (`GET .../changes`), changed files and attribution pages; a project's pages of cases. While a client is slow to read, the streams between the object and it
 * buffer what the object produced (about 6 MB for a client that reads nothing, hunt 48: sixteen such
 * clients held 115 MB of an isolate's 128), and a paused diff holds the file it is at. So a session
 * serves at most `max` at once, and a download its client has read nothing from for `stallMs` is
 * ended, freeing its place for a client that reads. Objects of a class may share an isolate: past
 * `graceMs` unread, a download also counts toward the isolate's bound (`isolateStalledDownloads`),
 * which cuts the one stalled longest short when one more stalls.
 */
export class Downloads {
  private serving = 0;
  /** Per download served: since when it has waited for its client's next read (null while the object produces a chunk). */
  private readonly waiting = new Map<object, number | null>();

  constructor(
    readonly max = MAX_DOWNLOADS_PER_SESSION,
    private readonly stallMs = DOWNLOAD_STALL_MS,
    private readonly isolate = isolateStalledDownloads,
    private readonly graceMs = SSE_STALL_GRACE_MS,
  ) {}

  /** Takes a place for a new download (before its first read, so requests at once cannot pass `max`); false when none is free. */
  take(): boolean {
    if (this.serving >= this.max) return false;
    this.serving++;
    return true;
  }

  /**
   * The answer to a download refused while `max` are served: `too_many_downloads`, with when a place
   * frees for certain when every client has stopped reading. `who` serves `what` ("the project",
   * "pages of its cases").
   */
  refusal(who: string, what: string) {
    const wait = this.retryAfterSeconds();
    const unread = wait === undefined ? "" : ` (their clients read nothing: the first is cut short in ${wait} s)`;
    return failure("too_many_downloads", `${who} is already serving ${this.max} ${what}${unread}; retry once one of them has ended`, wait);
  }

  /** Gives back a place taken for a download that is not served after all. */
  giveBack(): void {
    this.serving--;
  }

  /**
   * In how many seconds a place frees for certain, when every place is held by a download whose
   * client has read nothing for `graceMs` (most likely one that hung up: locally its cancel never
   * reaches the object, so only the stall cutoff frees the place): the first cutoff. Undefined while
   * a download is being read or produced, as it may end any moment.
   */
  retryAfterSeconds(now = Date.now()): number | undefined {
    if (this.waiting.size < this.serving) return undefined;
    let first = Number.POSITIVE_INFINITY;
    for (const since of this.waiting.values()) {
      if (since === null || now - since < this.graceMs) return undefined;
      first = Math.min(first, since + this.stallMs);
    }
    return Number.isFinite(first) ? Math.max(1, Math.ceil((first - now) / 1000)) : undefined;
  }

  /**
   * `source` as a download that keeps the place `take` gave it until it ends: its last chunk handed
   * to the client, cancelled by its client, failed, or stalled (then `source` is cancelled). Reads
   * `source` when the client reads, and one chunk ahead: a download whose last chunk is out is over,
   * so a client still draining it is neither cut short (it would get the whole body and then the
   * cut) nor holding a place.
   */
  serve(source: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const reader = source.getReader();
    let open = true;
    /** The source's next chunk, read when the client took the one before. */
    let ahead: Uint8Array | undefined;
    let stall: ReturnType<typeof setTimeout> | undefined;
    let grace: ReturnType<typeof setTimeout> | undefined;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const end = () => {
      if (!open) return;
      open = false;
      ahead = undefined;
      stopWaiting();
      this.waiting.delete(download);
      this.serving--;
    };
    const download = {
      fail: (why: Error) => {
        if (!open) return;
        end();
        controller.error(why);
        void reader.cancel(why).catch(() => {});
      },
    };
    // The client reads (or the download ended): no longer waiting for it, nor counted as stalled.
    const stopWaiting = () => {
      clearTimeout(stall);
      clearTimeout(grace);
      this.isolate.delete(download);
      if (open) this.waiting.set(download, null);
    };
    // Waits for the client's next read: from the start (a body nobody ever reads keeps no place) and after each chunk.
    const awaitRead = () => {
      this.waiting.set(download, Date.now());
      stall = setTimeout(() => download.fail(new Error(`the client read nothing for ${this.stallMs} ms`)), this.stallMs);
      grace = setTimeout(() => this.isolate.add(download), this.graceMs);
    };
    // The source is exhausted: closed for the client once it has taken what is queued.
    const finish = () => {
      if (!open) return;
      end();
      controller.close();
    };
    return new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          controller = c;
          awaitRead();
        },
        pull: async () => {
          // Producing the next chunk (reading R2, diffing a file) is the object's time, not the client's.
          stopWaiting();
          try {
            let chunk = ahead;
            ahead = undefined;
            if (chunk === undefined) {
              const { done, value } = await reader.read();
              if (done) return finish();
              chunk = value;
            }
            if (!open) return;
            controller.enqueue(chunk);
            const next = await reader.read();
            if (next.done) return finish();
            if (open) ahead = next.value;
          } catch (err) {
            end();
            throw err;
          }
          if (open) awaitRead();
        },
        cancel: async (reason) => {
          end();
          await reader.cancel(reason);
        },
      },
      // Nothing queued ahead for the client: a pull is a read of the client's, so the time between pulls is the client's.
      { highWaterMark: 0 },
    );
  }
}
