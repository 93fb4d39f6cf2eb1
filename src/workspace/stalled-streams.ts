import { logLine } from "../log";

/**
 * Streams whose clients stopped reading (event streams, downloads), within one bound (a session's
 * or the isolate's), in the order they stalled. Ending the one stalled longest refuses nobody: its
 * client resumes (from its Last-Event-ID, or with `?after=`), and a client gone without its cancel
 * reaching the object (hunt 36) is let go.
 */
export class StalledStreams {
  private readonly streams = new Set<Stalling>();

  constructor(
    readonly max: number,
    /** Why the one stalled longest is ended and what its client does next, for that client. */
    private readonly why: string,
  ) {}

  get size(): number {
    return this.streams.size;
  }

  add(stream: Stalling): void {
    this.streams.add(stream);
    for (const longest of this.streams) {
      if (this.streams.size <= this.max) break;
      // Its end takes it out of this set and the others it is in; one that had ended already leaves too.
      longest.fail(new Error(this.why));
      this.streams.delete(longest);
      // Told to the operator: a client cut off here resumes, but one that keeps stalling shows here.
      logLine("info", "a stalled stream was ended", { bound: this.max, reason: this.why });
    }
  }

  delete(stream: Stalling): void {
    this.streams.delete(stream);
  }
}

/** A stream its bound can end: `fail` ends it with the error its client gets. */
export interface Stalling {
  fail(error: Error): void;
}
