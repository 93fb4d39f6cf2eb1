import { MAX_PROVIDER_EVENT_BYTES } from "../domain/limits";
import { ProviderStreamError } from "./provider-errors";
import { cancelledOnAbort } from "./stream-cancellation";

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const TAB = 0x09;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
/** Whitespace, and the bytes of a UTF-8 byte order mark (EF BB BF), which a decoder drops. */
const LEADING = new Set([SPACE, TAB, LF, CR, 0xef, 0xbb, 0xbf]);
const ERROR_FIELD = new TextEncoder().encode("error:");
const DATA_FIELD = new TextEncoder().encode("data");
const EVENT_FIELD = new TextEncoder().encode("event");

/** A body whose first reads were taken to look at (`held`, handed on first), and the reader of the rest. */
export interface PeekedBody {
  readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly release: () => void;
  readonly held: Uint8Array[];
}

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
 *
 * An event that holds no data (`event: ping` alone, or empty `data:` lines) is dropped, as the SSE
 * standard does: the SDK hands it on and fails parsing its empty data as JSON (hunt 109).
 *
 * A gateway may answer an error as a 200 JSON body `{"error": ...}` under the event stream's label.
 * If nothing but blank lines came before it and it is such an object (read whole when the body
 * ends, or at a blank line after it), it is handed on as one `data:` event, which the SDK raises as
 * the error it is. (Not read as JSON before the stream is handed on: waiting for a first byte inside the
 * SDK's wait for headers made a silent provider end as stream_incomplete instead of the run's timeout.)
 */
export function rewriteLegacyErrorLines(
  body: ReadableStream<Uint8Array> | PeekedBody,
  signal?: AbortSignal | null,
  maxEventBytes = MAX_PROVIDER_EVENT_BYTES,
): ReadableStream<Uint8Array> {
  const { reader, release, held: first } = body instanceof ReadableStream ? { ...cancelledOnAbort(body, signal), held: [] } : body;
  // The unfinished event's reads, joined once it ends.
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  // The last bytes before the next read: a blank line may straddle two reads.
  let before: Uint8Array = new Uint8Array(0);
  // Whether an event was handed on (a body's only event may be a JSON error).
  let handedOn = false;
  const tooLong = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    release();
    reader.cancel().catch(() => {});
    controller.error(eventTooLong(maxEventBytes));
  };
  // A pull source rather than pipeThrough: a pipe costs several promises per read, on every token.
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value } = first.length > 0 ? { done: false as const, value: first.shift()! } : await reader.read();
        if (done) {
          if (held.length > 0) {
            const last = concat(held);
            controller.enqueue((handedOn ? null : jsonErrorEvent(last)) ?? rewriteEvents(last));
          }
          release();
          return controller.close();
        }
        const end = lastEventEnd(before, value);
        // The read's first event goes on from the held ones; only when they may pass the bound
        // together is each of its events measured (hunt 109: one byte over went through).
        const over = end >= 0 && heldBytes + end > maxEventBytes && longestEvent(before, value, end, heldBytes) > maxEventBytes;
        before = lastBytes(before, value);
        if (over) return tooLong(controller);
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
        if (!handedOn) {
          // Blank lines before or after a JSON error end an "event" too (hunt 116): look at the first that holds anything.
          const error = jsonErrorEvent(events);
          if (error) return controller.enqueue(error);
          handedOn = firstContentByte(events) !== null;
        }
        return controller.enqueue(rewriteEvents(events));
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
  for (let i = value.length - 1; i >= 0; i--) if (endsEvent(before, value, i)) return i + 1;
  return -1;
}

/** The longest event that ends in `value` up to `end`, its first going on from `heldBytes` held before. */
function longestEvent(before: Uint8Array, value: Uint8Array, end: number, heldBytes: number): number {
  let longest = 0;
  let start = -heldBytes;
  for (let i = 0; i < end; i++) {
    if (!endsEvent(before, value, i)) continue;
    longest = Math.max(longest, i + 1 - start);
    start = i + 1;
  }
  return longest;
}

/** Whether the byte at `i` of `value` ends a blank line that closes an event. Runs on every byte of a long event's reads. */
function endsEvent(before: Uint8Array, value: Uint8Array, i: number): boolean {
  const byte = value[i];
  if (byte === CR) return byteAt(before, value, i - 1) === CR;
  if (byte !== LF) return false;
  const previous = byteAt(before, value, i - 1);
  return previous === LF || (previous === CR && byteAt(before, value, i - 2) === LF && byteAt(before, value, i - 3) === CR);
}

/** The byte at `j` of `value`, or of `before` for a negative `j`; -1 before both. */
function byteAt(before: Uint8Array, value: Uint8Array, j: number): number {
  return j >= 0 ? value[j]! : (before[before.length + j] ?? -1);
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

/**
 * `bytes`, whole events, with each line that starts with `error:` in its `data:` form and each event
 * that holds no data left out; `bytes` itself when there is neither. Lines end at LF, CR or CRLF.
 */
function rewriteEvents(bytes: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  let copied = 0;
  let event = { start: 0, named: false, data: false, emptyData: false };
  // The next LF and CR, found natively and kept until passed: an indexOf per line for a byte the
  // stream never sends would read to its end each time.
  let lf = bytes.indexOf(LF);
  let cr = bytes.indexOf(CR);
  for (let line = 0; line < bytes.length; ) {
    if (lf !== -1 && lf < line) lf = bytes.indexOf(LF, line);
    if (cr !== -1 && cr < line) cr = bytes.indexOf(CR, line);
    const end = Math.min(lf === -1 ? bytes.length : lf, cr === -1 ? bytes.length : cr);
    const next = bytes[end] === CR && bytes[end + 1] === LF ? end + 2 : end + 1;
    if (end === line) {
      // A blank line: the event ends. One without data is not an event the SDK can parse.
      if (!event.data && (event.named || event.emptyData)) {
        parts.push(bytes.subarray(copied, event.start));
        copied = next;
      }
      event = { start: next, named: false, data: false, emptyData: false };
    } else if (startsWith(bytes, line, ERROR_FIELD)) {
      parts.push(bytes.subarray(copied, line), dataLine(bytes.subarray(line + ERROR_FIELD.length, end)));
      copied = end;
      event.data = true;
    } else if (isField(bytes, line, end, DATA_FIELD)) {
      if (hasValue(bytes, line + DATA_FIELD.length, end)) event.data = true;
      else event.emptyData = true;
    } else if (isField(bytes, line, end, EVENT_FIELD) && hasValue(bytes, line + EVENT_FIELD.length, end)) {
      event.named = true;
    }
    line = next;
  }
  if (copied === 0) return bytes;
  parts.push(bytes.subarray(copied));
  return concat(parts);
}

/** The first byte of `bytes` that is not whitespace or part of a byte order mark; null when there is none. */
export function firstContentByte(bytes: Uint8Array): number | null {
  return bytes.find((byte) => !LEADING.has(byte)) ?? null;
}

/**
 * A whole body that is a JSON error object (`{"error": ...}`, or Gemini's array of one) as the one
 * `data:` event the SDK raises; null for anything else. A byte order mark and whitespace may lead.
 */
function jsonErrorEvent(bytes: Uint8Array): Uint8Array | null {
  const start = firstContentByte(bytes);
  if (start !== OPEN_BRACE && start !== OPEN_BRACKET) return null;
  let json: unknown;
  try {
    // The decoder drops a leading byte order mark; JSON.parse, whitespace.
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
  const first = Array.isArray(json) ? json[0] : json;
  if (typeof first !== "object" || first === null || !("error" in first) || first.error === null || first.error === undefined) return null;
  return new TextEncoder().encode(`data: ${JSON.stringify(json)}\n\n`);
}

/** Whether the line from `at` to `end` is the field `name` (`name`, or `name:` and a value). */
function isField(bytes: Uint8Array, at: number, end: number, name: Uint8Array): boolean {
  return startsWith(bytes, at, name) && (at + name.length === end || bytes[at + name.length] === COLON);
}

/** Whether a field whose name ends at `at` has a value: more than its `:` and one space. */
function hasValue(bytes: Uint8Array, at: number, end: number): boolean {
  const value = at + 1 < end && bytes[at + 1] === SPACE ? at + 2 : at + 1;
  return value < end;
}

function startsWith(bytes: Uint8Array, at: number, prefix: Uint8Array): boolean {
  if (at + prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
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
