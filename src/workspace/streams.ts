/** Small Web-stream helpers shared by the archive readers. */

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

/** Wraps a stream so that its errors surface as `mapError(error)` (e.g. decoder errors -> ArchiveError). */
export function mapStreamErrors(stream: ReadableStream<Uint8Array>, mapError: (error: unknown) => unknown): ReadableStream<Uint8Array>;
export function mapStreamErrors<T>(stream: ReadableStream<T>, mapError: (error: unknown) => unknown): ReadableStream<T>;
export function mapStreamErrors<T>(stream: ReadableStream<T>, mapError: (error: unknown) => unknown): ReadableStream<T> {
  const reader = stream.getReader();
  return new ReadableStream<T>({
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
  }, { highWaterMark: 0 });
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
  const replay = new ReadableStream<Uint8Array>({
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
  }, { highWaterMark: 0 });
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
