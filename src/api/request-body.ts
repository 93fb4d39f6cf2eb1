import type { MiddlewareHandler } from "hono";
import { HarnessError } from "../domain";
import { logLine } from "../log";
import { pacedUpload } from "../workspace/upload-pace";

/**
 * A refused body is read and discarded up to this many further bytes before the answer goes out.
 * Above the platform's own request body cap (100 MB on the Free and Pro plans), so a deployed Worker
 * always drains; only a larger body on `wrangler dev` is cut off.
 */
export const MAX_DRAIN_BYTES = 128 * 1024 * 1024;

/**
 * The media types a JSONL body is taken in (`POST /api/sessions/import`, `POST /api/projects/:pid/traces`):
 * one list for both, and for the OpenAPI document. None of them is a type a cross-site form can send
 * without a preflight.
 */
export const JSONL_MEDIA_TYPES = ["application/x-ndjson", "application/jsonl", "application/x-jsonlines"] as const;

interface BodyTap {
  reader: ReadableStreamDefaultReader<Uint8Array>;
  done: boolean;
  /** The read in flight: workerd's request bodies allow one pending read at a time. */
  reading: Promise<ReadableStreamReadResult<Uint8Array>> | null;
}

const taps = new WeakMap<Request, BodyTap>();

/**
 * The request body as a stream whose `cancel()` does not cancel the request: a refusal (a bomb, an
 * oversized body) stops reading, and `settleRequestBodies` discards the rest before the response is
 * sent. Answering while the body is half read and cancelled left the connection between wrangler
 * dev's proxy and the Worker unusable for the next request (docs/architecture.md, "Local runtime
 * artefacts"); reading to the end costs little, as bodies are capped anyway.
 */
export function requestBody(request: Request): ReadableStream<Uint8Array> | null {
  if (!request.body) return null;
  refuseContentEncoding(request);
  const tap: BodyTap = { reader: request.body.getReader(), done: false, reading: null };
  taps.set(request, tap);
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        tap.reading = tap.reader.read();
        let read: ReadableStreamReadResult<Uint8Array>;
        try {
          read = await tap.reading;
        } catch (cause) {
          // The client went away mid-body ("Network connection lost"): its refusal, not a fault here.
          // What the runtime said is logged, so a read that fails for another reason can be told apart.
          tap.done = true;
          logLine("info", "request body broke off", { cause: String(cause).slice(0, 200) });
          throw new HarnessError(
            "body_incomplete",
            "the request body broke off before its end (the connection closed); nothing was stored",
          );
        } finally {
          tap.reading = null;
        }
        const { done, value } = read;
        if (done) {
          tap.done = true;
          controller.close();
        } else {
          controller.enqueue(value);
        }
      },
      cancel(reason) {
        // Left for settleRequestBodies: the request's own stream is drained, not cancelled; but a
        // client refused for being too slow is not waited for any longer.
        if (reason instanceof HarnessError && reason.code === "upload_too_slow") {
          tap.done = true;
          tap.reader.cancel(reason).catch(() => {});
        }
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Bodies are read as sent: one compressed with `Content-Encoding` would be parsed as its compressed
 * bytes (a JSON route called it invalid JSON), so it is 415 (RFC 9110, 15.5.16). A gzipped archive
 * is sent as `Content-Type: application/gzip` instead.
 */
function refuseContentEncoding(request: Request): void {
  const encoding = (request.headers.get("content-encoding") ?? "").trim().toLowerCase();
  if (encoding === "" || encoding === "identity") return;
  throw new HarnessError(
    "unsupported_media_type",
    `request bodies are read as sent: send this one without Content-Encoding (not ${JSON.stringify(encoding.slice(0, 40))})`,
  );
}

/**
 * Reads what is left of a tapped body, up to `MAX_DRAIN_BYTES`, at the pace an upload must keep
 * (`pacedUpload`); past either it gives up and cancels: a client that stalls is not waited for.
 */
export async function drainRequestBody(request: Request): Promise<void> {
  const tap = taps.get(request);
  if (!tap || tap.done) return;
  // A read the route left in flight comes first; its bytes are discarded like the rest.
  const rest = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await (tap.reading ?? tap.reader.read());
        tap.reading = null;
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => tap.reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  const reader = pacedUpload(rest).getReader();
  let drained = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      drained += value.byteLength;
      if (drained > MAX_DRAIN_BYTES) {
        await reader.cancel();
        break;
      }
    }
  } catch {
    // The client went away; nothing is left to protect.
  }
  tap.done = true;
}

/** Middleware: once a route has answered, the rest of any body it stopped reading is discarded. */
export function settleRequestBodies(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    await drainRequestBody(c.req.raw);
  };
}
