import { MAX_PROVIDER_LINE_BYTES } from "../domain/limits";
import { ProviderStreamError } from "./provider-errors";
import { cancelledOnAbort } from "./stream-cancellation";

const LF = 0x0a;
const CR = 0x0d;
const ERROR_FIELD = new TextEncoder().encode("error:");

/**
 * Older llama.cpp servers report a failure inside a 200 event stream as an SSE field named `error`
 * (`error: {"code":400,"message":...}`), which SSE parsers, the SDK's included, silently drop. This
 * rewrites each line that starts with `error:` into `data: {"error": ...}`, the form the SDK raises as
 * an error; every other byte passes unchanged. The unfinished last line of a read waits for its end
 * (the SDK cannot act on half a line either), so a field split across reads is still seen.
 */
export function rewriteLegacyErrorLines(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal | null,
  maxLineBytes = MAX_PROVIDER_LINE_BYTES,
): ReadableStream<Uint8Array> {
  const { reader, release } = cancelledOnAbort(body, signal);
  // The unfinished line's reads, joined once it ends: joining (and searching) them on every read
  // took time growing with the square of one line's length (hunt 72: 4 MB of tool-call arguments).
  let held: Uint8Array[] = [];
  let heldBytes = 0;
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
        const end = Math.max(value.lastIndexOf(LF), value.lastIndexOf(CR)) + 1;
        if (end === 0) {
          held.push(value);
          heldBytes += value.length;
          if (heldBytes > maxLineBytes) {
            release();
            reader.cancel().catch(() => {});
            return controller.error(lineTooLong(maxLineBytes));
          }
          continue;
        }
        const lines = held.length === 0 ? value.subarray(0, end) : concat([...held, value.subarray(0, end)]);
        held = end < value.length ? [value.slice(end)] : [];
        heldBytes = value.length - end;
        return controller.enqueue(rewriteLines(lines));
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
}

/**
 * The failure of an answer with a line longer than any answer within the output limit takes. Only
 * the unfinished line is measured: a read that ends lines is passed on as it is.
 */
export function lineTooLong(maxLineBytes: number): ProviderStreamError {
  return new ProviderStreamError({
    code: "output_too_large",
    message: `the provider sent a line of its answer longer than ${maxLineBytes} bytes, more than an answer within the output limit takes; it was cut there`,
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
