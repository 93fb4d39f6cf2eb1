import { sliceWhole } from "../domain/json";
import { TOOL_OUTPUT_MAX_BYTES, TOOL_OUTPUT_MAX_LINES } from "../domain/limits";
/**
 * The one output limit every tool shares (as pi does): 2000 lines or 50 KB, whichever comes first.
 * Head truncation (read, grep, find, ls) keeps the start and never returns a partial line; tail
 * truncation (bash) keeps the end, where errors usually are.
 */

/** grep cuts each printed line to this many characters. */
export const GREP_MAX_LINE_CHARS = 500;

export interface TruncationLimits {
  maxLines?: number;
  maxBytes?: number;
}

export interface TruncationResult {
  /** The kept text, lines joined with "\n" (no trailing newline added). */
  content: string;
  truncated: boolean;
  /** Which limit cut the text, or null when nothing was cut. */
  truncatedBy: "lines" | "bytes" | null;
  totalLines: number;
  totalBytes: number;
  outputLines: number;
  outputBytes: number;
  /** Tail truncation only: the first kept line is the end of a line longer than maxBytes. */
  lastLinePartial: boolean;
  /** Head truncation only: the first line alone exceeds maxBytes, so nothing is returned. */
  firstLineExceedsLimit: boolean;
  maxLines: number;
  maxBytes: number;
}

const encoder = new TextEncoder();

export function utf8Length(text: string): number {
  // Fast path: pure ASCII has one byte per character.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
  return /^[\x00-\x7f]*$/.test(text) ? text.length : encoder.encode(text).byteLength;
}

/**
 * The lines of `text` from line `start` (0-based), at most `count`, and how many lines it has; a
 * final "\n" ends the last line rather than starting an empty one. Only those lines are cut out: a
 * file of millions of short lines split whole took hundreds of MB (hunt 72).
 */
export function linesFrom(
  text: string,
  start: number,
  count: number,
  options: { crlfAsLf?: boolean } = {},
): { lines: string[]; total: number } {
  const lines: string[] = [];
  let total = 0;
  for (let at = 0; at < text.length; total++) {
    const newline = text.indexOf("\n", at);
    const end = newline < 0 ? text.length : newline;
    if (total >= start && lines.length < count) {
      // With `crlfAsLf`, a "\r" that ends a line before its "\n" is not part of it.
      const cr = options.crlfAsLf && newline > at && text.charCodeAt(newline - 1) === 13;
      lines.push(text.slice(at, cr ? end - 1 : end));
    }
    at = end + 1;
  }
  return { lines, total };
}

/** How many times `part` occurs in `text`, not overlapping. */
export function occurrences(text: string, part: string): number {
  let n = 0;
  for (let at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length)) n++;
  return n;
}

/** Keeps the first lines of `content` that fit both limits; never a partial line. */
export function truncateHead(content: string, limits: TruncationLimits = {}): TruncationResult {
  const maxLines = limits.maxLines ?? TOOL_OUTPUT_MAX_LINES;
  const maxBytes = limits.maxBytes ?? TOOL_OUTPUT_MAX_BYTES;
  const totalBytes = utf8Length(content);
  const lines = content.split("\n");
  const base = { totalLines: lines.length, totalBytes, maxLines, maxBytes, lastLinePartial: false };
  if (lines.length <= maxLines && totalBytes <= maxBytes) {
    return {
      ...base,
      content,
      truncated: false,
      truncatedBy: null,
      outputLines: lines.length,
      outputBytes: totalBytes,
      firstLineExceedsLimit: false,
    };
  }
  if (utf8Length(lines[0] ?? "") > maxBytes) {
    return { ...base, content: "", truncated: true, truncatedBy: "bytes", outputLines: 0, outputBytes: 0, firstLineExceedsLimit: true };
  }
  const kept: string[] = [];
  let bytes = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  for (const line of lines) {
    if (kept.length >= maxLines) break;
    const lineBytes = utf8Length(line) + (kept.length > 0 ? 1 : 0);
    if (bytes + lineBytes > maxBytes) {
      truncatedBy = "bytes";
      break;
    }
    kept.push(line);
    bytes += lineBytes;
  }
  return {
    ...base,
    content: kept.join("\n"),
    truncated: true,
    truncatedBy,
    outputLines: kept.length,
    outputBytes: bytes,
    firstLineExceedsLimit: false,
  };
}

/** Keeps the last lines of `content` that fit both limits; a single huge last line is cut to its end. */
export function truncateTail(content: string, limits: TruncationLimits = {}): TruncationResult {
  const maxLines = limits.maxLines ?? TOOL_OUTPUT_MAX_LINES;
  const maxBytes = limits.maxBytes ?? TOOL_OUTPUT_MAX_BYTES;
  const totalBytes = utf8Length(content);
  const lines = content.split("\n");
  const base = { totalLines: lines.length, totalBytes, maxLines, maxBytes, firstLineExceedsLimit: false };
  if (lines.length <= maxLines && totalBytes <= maxBytes) {
    return {
      ...base,
      content,
      truncated: false,
      truncatedBy: null,
      outputLines: lines.length,
      outputBytes: totalBytes,
      lastLinePartial: false,
    };
  }
  const kept: string[] = [];
  let bytes = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  let lastLinePartial = false;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (kept.length >= maxLines) break;
    const line = lines[i] ?? "";
    const lineBytes = utf8Length(line) + (kept.length > 0 ? 1 : 0);
    if (bytes + lineBytes > maxBytes) {
      truncatedBy = "bytes";
      if (kept.length === 0) {
        const tail = tailBytes(line, maxBytes);
        kept.unshift(tail);
        bytes = utf8Length(tail);
        lastLinePartial = true;
      }
      break;
    }
    kept.unshift(line);
    bytes += lineBytes;
  }
  return { ...base, content: kept.join("\n"), truncated: true, truncatedBy, outputLines: kept.length, outputBytes: bytes, lastLinePartial };
}

/** Cuts one line to `maxChars` characters, marking the cut. */
export function truncateLine(line: string, maxChars = GREP_MAX_LINE_CHARS): { text: string; truncated: boolean } {
  if (line.length <= maxChars) return { text: line, truncated: false };
  return { text: `${sliceWhole(line, maxChars)}${CUT_MARK}`, truncated: true };
}

/** 512B, 50.0KB, 1.5MB: the sizes the notices show. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

/** Appends notices as pi does: a blank line, then `[first. second]`. */
export function withNotices(body: string, notices: readonly string[]): string {
  if (notices.length === 0) return body;
  return `${body}\n\n[${notices.join(". ")}]`;
}

/** The start of `text` that fits in `maxBytes` of UTF-8, cut on a character boundary. */
export function headBytes(text: string, maxBytes: number): string {
  // encodeInto writes whole characters only, so `read` ends on a boundary (a surrogate pair included).
  const { read } = encoder.encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}

/** Marks a line shown cut (grep's long lines, read's and a page's lines longer than the budget). */
export const CUT_MARK = "... [truncated]";

/** `line` in at most `maxBytes` of UTF-8 with CUT_MARK, for one line longer than a whole budget. */
export function cutToFit(line: string, maxBytes: number): string {
  return `${headBytes(line, Math.max(0, maxBytes - CUT_MARK.length))}${CUT_MARK}`;
}

/** The end of `text` that fits in `maxBytes` of UTF-8, cut on a character boundary. */
function tailBytes(text: string, maxBytes: number): string {
  const bytes = encoder.encode(text);
  let start = Math.max(0, bytes.byteLength - maxBytes);
  while (start < bytes.byteLength && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
  return new TextDecoder().decode(bytes.subarray(start));
}
