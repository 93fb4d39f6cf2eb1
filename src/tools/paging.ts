import { z } from "zod";
import { TOOL_OUTPUT_MAX_LINES } from "../domain/limits";
import { ToolError } from "./tool";
import { cutToFit, formatSize, utf8Length, withNotices } from "./truncate";

/**
 * A 1-based `offset` (read's line, grep's match, find's result, ls's entry). 0, which models that
 * count from zero send, is read as 1, as pi reads it (refused, it cost a turn: hunt 79).
 */
export function oneBasedOffset(description: string) {
  return z
    .number()
    .int()
    .min(0)
    .transform((n) => Math.max(n, 1))
    .optional()
    .describe(description);
}

/**
 * One page of a sorted listing (ls, find): the `limit` items from number `offset` on (1-based), cut
 * at `maxBytes`. When items are left, the notice says which were shown and the offset that
 * continues; a larger limit only when the limit (not the byte cap) ended the page, the maximum
 * allows it, and the next item would fit.
 */
export function listPage(
  items: readonly string[],
  args: { offset?: number; limit: number },
  options: { maxBytes: number; maxLimit: number; noun: string; narrow?: string; notices?: readonly string[] },
): string {
  const more = options.notices ?? [];
  const first = args.offset ?? 1;
  if (first > items.length) {
    throw new ToolError("offset_out_of_range", `Offset ${first} is beyond the last of the ${items.length} ${options.noun}`);
  }
  const listed = items.slice(first - 1, first - 1 + args.limit);
  let shown = linesWithin(listed, options.maxBytes);
  let text = listed.slice(0, shown.count).join("\n");
  // An item longer than the whole budget is shown cut: a page always moves the offset on.
  if (shown.count === 0) {
    text = cutToFit(listed[0]!, options.maxBytes);
    shown = { count: 1, bytes: utf8Length(text) };
  }
  const last = first - 1 + shown.count;
  if (last === items.length) return withNotices(text, more);
  const cutByBytes = shown.count < listed.length;
  const larger = Math.min(args.limit * 2, options.maxLimit);
  const raise = !cutByBytes && larger > args.limit && shown.bytes + 1 + utf8Length(items[last]!) <= options.maxBytes;
  const cut = cutByBytes ? outputCut(shown.count, options.maxBytes) : `limit=${args.limit}`;
  const notice = `Showing ${options.noun} ${first}-${last} of ${items.length} (${cut}). ${continuation(last + 1, raise ? larger : null, options.narrow)}`;
  return withNotices(text, [notice, ...more]);
}

/**
 * How many of `lines` (from the first) fit in `maxBytes` joined by "\n" and in the tool output's
 * lines, and their bytes. Counted per item, not per "\n": a file name may hold a line break.
 */
export function linesWithin(lines: readonly string[], maxBytes: number): { count: number; bytes: number } {
  let bytes = 0;
  let count = 0;
  for (const line of lines) {
    const more = utf8Length(line) + (count > 0 ? 1 : 0);
    if (bytes + more > maxBytes || count === TOOL_OUTPUT_MAX_LINES) break;
    bytes += more;
    count++;
  }
  return { count, bytes };
}

/** What ended a page that the output limits cut: `2000 lines limit` or `50.0KB limit`. */
export function outputCut(shownLines: number, maxBytes: number): string {
  return shownLines === TOOL_OUTPUT_MAX_LINES ? `${TOOL_OUTPUT_MAX_LINES} lines limit` : `${formatSize(maxBytes)} limit`;
}

/** "Use offset=N to continue, limit=M for more, or narrow ...": the ways on from a cut page. */
export function continuation(offset: number, limit: number | null, narrow: string | undefined): string {
  const ways = [`offset=${offset} to continue`];
  if (limit !== null) ways.push(`limit=${limit} for more`);
  if (narrow !== undefined) ways.push(narrow);
  return `Use ${ways.length === 1 ? ways[0] : `${ways.slice(0, -1).join(", ")}, or ${ways.at(-1)}`}`;
}
