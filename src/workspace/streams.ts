/** Small Web-stream helpers shared by the archive readers and the routes that stream what they build. */

/**
 * `stream.pipeThrough(pair)`, pumped by hand: workerd's native pipe reports an unhandled rejection
 * when a `DecompressionStream` fails on close (truncated input) even though the failure also
 * reaches the readable side, which is where callers observe it. Cancelling the readable cancels
 * the source.
 */
export function pipeThroughQuietly<I, O>(stream: ReadableStream<I>, pair: ReadableWritablePair<O, I>): ReadableStream<O> {
  void pump(stream, pair.writable);
  return pair.readable;
}

async function pump<T>(source: ReadableStream<T>, destination: WritableStream<T>): Promise<void> {
  const reader = source.getReader();
  const writer = destination.getWriter();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      // Like pipeTo: wait for room, not for the chunk to be processed; failures surface below.
      await writer.ready;
      writer.write(value).catch(() => {});
    }
    await writer.close();
  } catch (error) {
    await writer.abort(error).catch(() => {});
    await reader.cancel(error).catch(() => {});
  }
}

const WRITE_SETTLED: unique symbol = Symbol("write settled");

/** Resolves after the current task, so output that the last write produced can arrive first. */
const nextTask = () => new Promise<typeof WRITE_SETTLED>((resolve) => setTimeout(() => resolve(WRITE_SETTLED), 0));

/**
 * `stream.pipeThrough(pair)` for a transform that ignores backpressure, as workerd's native
 * `DecompressionStream` does: it takes input as fast as it arrives and queues all the output (a
 * 19 MB tar.gz piped through it had ~100 MB of output waiting). Here input is written only while
 * the reader is waiting for output and everything written so far has been taken in without any
 * output appearing, so about one input chunk's output is queued at a time. Errors on either side
 * surface on the returned stream; cancelling it cancels the source.
 */
export function pipeThroughOnDemand<I, O>(stream: ReadableStream<I>, pair: ReadableWritablePair<O, I>): ReadableStream<O> {
  const input = stream.getReader();
  const writer = pair.writable.getWriter();
  const output = pair.readable.getReader();
  let pendingRead: Promise<ReadableStreamReadResult<O>> | null = null;
  let lastWrite: Promise<void> = Promise.resolve();
  let inputDone = false;
  return new ReadableStream<O>(
    {
      async pull(controller) {
        for (;;) {
          pendingRead ??= output.read();
          // Once the input is closed only the output is left to wait for.
          const settled = inputDone ? await pendingRead : await Promise.race([pendingRead, lastWrite.then(nextTask)]);
          if (settled === WRITE_SETTLED) {
            let next: ReadableStreamReadResult<I>;
            try {
              next = await input.read();
            } catch (error) {
              await writer.abort(error).catch(() => {});
              throw error;
            }
            inputDone = next.done;
            lastWrite = next.done ? writer.close() : writer.write(next.value);
            // Observed through the race above, never as an unhandled rejection.
            lastWrite.catch(() => {});
            continue;
          }
          pendingRead = null;
          if (settled.done) controller.close();
          else controller.enqueue(settled.value);
          return;
        }
      },
      async cancel(reason) {
        await Promise.all([input.cancel(reason), writer.abort(reason), output.cancel(reason)].map((p) => p.catch(() => {})));
      },
    },
    { highWaterMark: 0 },
  );
}

/** Wraps a stream so that its errors surface as `mapError(error)` (e.g. decoder errors -> ArchiveError). */
export function mapStreamErrors(stream: ReadableStream<Uint8Array>, mapError: (error: unknown) => unknown): ReadableStream<Uint8Array>;
export function mapStreamErrors<T>(stream: ReadableStream<T>, mapError: (error: unknown) => unknown): ReadableStream<T>;
export function mapStreamErrors<T>(stream: ReadableStream<T>, mapError: (error: unknown) => unknown): ReadableStream<T> {
  const reader = stream.getReader();
  return new ReadableStream<T>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (error) {
          controller.error(mapError(error));
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/** Reads the first `n` bytes (fewer if the stream is shorter) and returns them with the full stream. */
export async function peekStream(
  stream: ReadableStream<Uint8Array>,
  n: number,
): Promise<{ head: Uint8Array; stream: ReadableStream<Uint8Array> }> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let ended = false;
  while (total < n) {
    const { done, value } = await reader.read();
    if (done) {
      ended = true;
      break;
    }
    chunks.push(value);
    total += value.byteLength;
  }
  const head = concatBytes(chunks);
  const replay = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        if (head.byteLength > 0) controller.enqueue(head);
        if (ended) controller.close();
      },
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return { head: head.subarray(0, n), stream: replay };
}

export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(chunks.reduce((sum, c) => sum + c.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** The most bytes one chunk of `textStream` carries (a part can be tens of MB; RPC answers are bounded). */
const TEXT_STREAM_CHUNK_BYTES = 1024 * 1024;
/**
 * Parts are joined until a chunk holds this many characters (or the parts end): a diff's parts are
 * a file each, about 100 bytes for a new one-line file, and 56,001 such chunks from the Durable Object
 * made `/changes` take 8-16 s, after which local workerd closed the client's keep-alive connection
 * (hunt 63: `wrangler dev` then answered the next request on it 503). Joined, the same diff takes 2-3 s.
 */
const TEXT_STREAM_MIN_CHUNK_CHARS = 64 * 1024;

/**
 * The strings `parts` yields, UTF-8 encoded, as a byte stream that asks for more parts only when its
 * reader wants more, in chunks of at least TEXT_STREAM_MIN_CHUNK_CHARS characters (but the last) and
 * at most TEXT_STREAM_CHUNK_BYTES bytes. The first part is made before this resolves, so a failure
 * there rejects the call (an error answer) rather than breaking off a stream already answered 200.
 */
export async function textStream(parts: AsyncGenerator<string>): Promise<ReadableStream<Uint8Array>> {
  const encoder = new TextEncoder();
  let first: IteratorResult<string> | null = await parts.next();
  let ended = false;
  let pending: Uint8Array = new Uint8Array(0);
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (pending.byteLength === 0) {
          let text = "";
          while (!ended && text.length < TEXT_STREAM_MIN_CHUNK_CHARS) {
            const next = first ?? (await parts.next());
            first = null;
            if (next.done) ended = true;
            else text += next.value;
          }
          if (text === "") return controller.close();
          pending = encoder.encode(text);
        }
        const chunk = pending.subarray(0, TEXT_STREAM_CHUNK_BYTES);
        pending = pending.subarray(chunk.byteLength);
        controller.enqueue(chunk);
      },
      async cancel() {
        await parts.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Marks the end of a byte stream a Durable Object answers over RPC: an error there reaches the
 * Worker as a normal end (a `/changes` download cut off by the session's deletion ended 200, a
 * shorter patch that still applied). The stream's own bytes never hold a NUL (diffs and JSONL).
 */
const STREAM_END_MARK = new TextEncoder().encode("\0end of stream\0");

/** The stream, then the end mark once it has ended well (nothing after an error). Reads on demand. */
export function withEndMark(stream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        controller.enqueue(STREAM_END_MARK);
        controller.close();
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The stream of `withEndMark` without its mark; it errors when the stream ends without one or fails,
 * after telling `onBroken` (an HTTP client may not learn of it: see docs/architecture.md). Reads on demand.
 */
export function withoutEndMark(stream: ReadableStream<Uint8Array>, onBroken?: () => void): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  const size = STREAM_END_MARK.byteLength;
  // The last bytes read may be the mark: held back until more come or the stream ends.
  let held = new Uint8Array(0);
  // A reader that hung up ends the read under way: that is no break.
  let cancelled = false;
  const broken = () => {
    if (!cancelled) onBroken?.();
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          const { done, value } = await reader.read().catch((error: unknown) => {
            broken();
            throw error;
          });
          if (done) {
            const whole = held.byteLength === size && held.every((b, i) => b === STREAM_END_MARK[i]);
            if (whole || cancelled) return controller.close();
            broken();
            throw new Error("the stream broke off before its end");
          }
          const bytes = concatBytes([held, value]);
          const keep = Math.min(size, bytes.byteLength);
          held = bytes.slice(bytes.byteLength - keep);
          if (bytes.byteLength > keep) return controller.enqueue(bytes.subarray(0, bytes.byteLength - keep));
        }
      },
      cancel(reason) {
        cancelled = true;
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
