/** Rejection value of `StreamCancellation.wait`, so an abort is never mistaken for a provider failure. */
export const ABORT = Symbol("aborted");

/**
 * How one model stream stops. The caller's signal cancels the HTTP request (`requestSignal`) and
 * rejects the pending `wait` at once, so a transport that ignores the signal cannot hang the stream;
 * `close()` cancels the request when the stream stops for any other reason (finished, consumer left).
 * One listener for the whole stream: racing every chunk against a shared abort promise would pile up
 * one reaction per chunk until the stream ends.
 */
export class StreamCancellation {
  private readonly request = new AbortController();
  private rejectPending: ((reason: unknown) => void) | undefined;
  private readonly onAbort = () => {
    this.request.abort();
    this.rejectPending?.(ABORT);
  };

  constructor(readonly signal: AbortSignal) {
    if (signal.aborted) this.request.abort();
    signal.addEventListener("abort", this.onAbort, { once: true });
  }

  /** The HTTP request's own signal. */
  get requestSignal(): AbortSignal {
    return this.request.signal;
  }

  get aborted(): boolean {
    return this.signal.aborted;
  }

  /** `promise`, unless the caller aborts first: then a rejection with ABORT. Awaits one promise at a time. */
  wait<T>(promise: Promise<T>): Promise<T> {
    if (this.signal.aborted) {
      promise.catch(() => {});
      return Promise.reject(ABORT);
    }
    return new Promise<T>((resolve, reject) => {
      this.rejectPending = reject;
      promise.then(resolve, reject);
    });
  }

  close(): void {
    this.rejectPending = undefined;
    this.signal.removeEventListener("abort", this.onAbort);
    this.request.abort();
  }
}

/**
 * A reader of `body` that is cancelled when `signal` aborts, and `release` to call once the body is
 * read to its end. A request aborted after its response began left the read of its body pending in
 * workerd: the body, its reader and the abort's DOMException stayed in the isolate for good, one set
 * per aborted run (hunt 101: 194 after 200 aborts).
 */
export function cancelledOnAbort(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal | null | undefined,
): { reader: ReadableStreamDefaultReader<Uint8Array>; release: () => void } {
  const reader = body.getReader();
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => {});
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  return { reader, release: () => signal?.removeEventListener("abort", onAbort) };
}
