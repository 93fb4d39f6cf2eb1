import { MAX_PROVIDER_EVENT_BYTES } from "../domain/limits";
import { ProviderStreamError } from "./provider-errors";
import { cancelledOnAbort } from "./stream-cancellation";

const LF = 0x0a;
const CR = 0x0d;
const ERROR_FIELD = new TextEncoder().encode("error:");

/**
 * Older llama.cpp servers report a failure inside a 200 event stream as an SSE field named `error`
 * (`error: {"code":400,"message":...}`), which SSE parsers, the SDK's included, silently drop. This
 * rewrites each line that starts with `error:` into `data: {"error": ...}`, the form the SDK raises as
 * an error; every other byte passes unchanged.
 *
 * The bytes are handed on an event at a time (up to a blank line, as the SDK splits them), each in
 * one read: the SDK joins and searches an unfinished event again on every read, which took time
 * growing with the square of its length (hunt 72: 4 MB of tool-call arguments in one line; hunt 108:
 * 30 MB in many `data:` lines of one event held the isolate for 82 s). An event longer than
 * `maxEventBytes` ends the answer with `output_too_large` before the SDK sees it.
 */
export function rewriteLegacyErrorLines(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal | null,
  maxEventBytes = MAX_PROVIDER_EVENT_BYTES,
): ReadableStream<Uint8Array> {
  const { reader, release } = cancelledOnAbort(body, signal);
  // The unfinished event's reads, joined once it ends.
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  // The last bytes before the next read: a blank line may straddle two reads.
  let before: Uint8Array = new Uint8Array(0);
  const tooLong = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    release();
    reader.cancel().catch(() => {});
    controller.error(eventTooLong(maxEventBytes));
  };
  // A pull source rather than pipeThrough: a pipe costs several promises per read, on every token.
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          if (held.length > 0) controller.enqueue(rewriteLines(concat(held)));
          release();
          return controller.close();
        }
        const end = lastEventEnd(before, value);
        before = lastBytes(before, value);
        if (end < 0) {
          held.push(value);
          heldBytes += value.length;
          if (heldBytes > maxEventBytes) return tooLong(controller);
          continue;
        }
        const events = held.length === 0 ? value.subarray(0, end) : concat([...held, value.subarray(0, end)]);
        held = end < value.length ? [value.slice(end)] : [];
        heldBytes = value.length - end;
        if (heldBytes > maxEventBytes) return tooLong(controller);
        return controller.enqueue(rewriteLines(events));
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
}

/**
 * Where the last event in `value` ends, just past its blank line (`\n\n`, `\r\r` or `\r\n\r\n`, the
 * ends the SDK looks for), or -1; `before` holds the bytes before `value` (its last 3 at least).
 */
function lastEventEnd(before: Uint8Array, value: Uint8Array): number {
  const at = (i: number) => (i >= 0 ? value[i]! : (before[before.length + i] ?? -1));
  for (let i = value.length - 1; i >= 0; i--) {
    const byte = value[i];
    if (byte === LF && (at(i - 1) === LF || (at(i - 1) === CR && at(i - 2) === LF && at(i - 3) === CR))) return i + 1;
    if (byte === CR && at(i - 1) === CR) return i + 1;
  }
  return -1;
}

/** The last 3 bytes of `before` followed by `value`. */
function lastBytes(before: Uint8Array, value: Uint8Array): Uint8Array {
  if (value.length >= 3) return value.slice(value.length - 3);
  const joined = concat([before, value]);
  return joined.slice(Math.max(0, joined.length - 3));
}

/** The failure of an answer with an event longer than any answer within the output limit takes. */
export function eventTooLong(maxEventBytes: number): ProviderStreamError {
  return new ProviderStreamError({
    code: "output_too_large",
    message: `the provider sent an event of its answer longer than ${maxEventBytes} bytes, more than an answer within the output limit takes; it was cut there`,
    retryable: false,
  });
}

/** `bytes` with each line that starts with `error:` replaced by its `data:` form; `bytes` itself when there is none. */
function rewriteLines(bytes: Uint8Array): Uint8Array {
  const starts = errorLineStarts(bytes);
  if (starts.length === 0) return bytes;
  const parts: Uint8Array[] = [];
  let copied = 0;
  for (const start of starts) {
    let end = start;
    while (end < bytes.length && bytes[end] !== LF && bytes[end] !== CR) end++;
    parts.push(bytes.subarray(copied, start), dataLine(bytes.subarray(start + ERROR_FIELD.length, end)));
    copied = end;
  }
  parts.push(bytes.subarray(copied));
  return concat(parts);
}

/** Offsets, in order, of the lines that start with `error:` (`bytes` starts at a line start). */
function errorLineStarts(bytes: Uint8Array): number[] {
  const starts: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === ERROR_FIELD[0] && (i === 0 || bytes[i - 1] === LF || bytes[i - 1] === CR) && startsWithErrorField(bytes, i))
      starts.push(i);
  }
  return starts;
}

function startsWithErrorField(bytes: Uint8Array, at: number): boolean {
  return at + ERROR_FIELD.length <= bytes.length && ERROR_FIELD.every((byte, i) => bytes[at + i] === byte);
}

/** `data: {"error": <value>}`; a value that is not JSON becomes the error's text. */
function dataLine(value: Uint8Array): Uint8Array {
  const text = new TextDecoder().decode(value).trim();
  let error: unknown = text;
  try {
    error = JSON.parse(text);
  } catch {
    // Not JSON: keep the words as they are.
  }
  return new TextEncoder().encode(`data: ${JSON.stringify({ error })}`);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
