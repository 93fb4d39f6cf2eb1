import { UPLOAD_MIN_BYTES_PER_WINDOW, UPLOAD_PACE_WINDOW_MS } from "../domain/limits";
import { ArchiveError } from "./archive-errors";

/**
 * The upload's body, refused with `upload_too_slow` when the server has waited on it for a window
 * of `windowMs` and received fewer than `minBytes` meanwhile. Only time spent waiting for the
 * client counts: while the ingest itself is busy (storing a chunk) the window stands still, so a
 * slow store never passes for a slow client. An ingest holds one of the isolate's few slots
 * (ingest-slots.ts) until its body ends, so without this a stalled or trickling client would hold
 * it from every other upload.
 */
export function pacedUpload(
  body: ReadableStream<Uint8Array>,
  minBytes = UPLOAD_MIN_BYTES_PER_WINDOW,
  windowMs = UPLOAD_PACE_WINDOW_MS,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let waited = 0;
  let received = 0;
  const tooSlow = () => {
    const error = new ArchiveError(
      "upload_too_slow",
      `the upload sent ${received} bytes in ${windowMs / 1000} s, under the ${minBytes} an upload must send in that time while it holds one of the server's upload slots; nothing was stored`,
    );
    reader.cancel(error).catch(() => {});
    return error;
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const read = reader.read();
        for (;;) {
          const started = Date.now();
          let timer: ReturnType<typeof setTimeout> | undefined;
          const windowEnd = new Promise<null>((resolve) => {
            timer = setTimeout(() => resolve(null), windowMs - waited);
          });
          const outcome = await Promise.race([read, windowEnd]).finally(() => clearTimeout(timer));
          waited += Date.now() - started;
          if (outcome === null || waited >= windowMs) {
            if (outcome !== null && !outcome.done) received += outcome.value.byteLength;
            if (received < minBytes && !outcome?.done) return controller.error(tooSlow());
            waited = 0;
            received = 0;
            if (outcome === null) continue;
          } else if (!outcome.done) received += outcome.value.byteLength;
          if (outcome.done) return controller.close();
          return controller.enqueue(outcome.value);
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
