import type { PieceSet, SearchText } from "../workspace/search/search-text";
import type { LineMatcher } from "./grep-matcher";
import { truncateLine } from "./truncate";

/**
 * Prints one file's matching lines (`path:N: text`) with `context` lines around them
 * (`path-N- text`), at most `limit` matches after the first `skip`; blocks that do not touch are
 * separated by "--" (also from the previous file's, when `separate`). A skipped match is not shown,
 * not even as context: the page before showed it. `matchLines` are the indexes of the match lines
 * in `lines`. Only the lines it prints are cut out of the text: the matcher jumps from match to
 * match, so a large file costs little when few lines match.
 */
export function formatFileMatches(
  path: string,
  text: SearchText,
  matcher: LineMatcher,
  options: { context: number; limit: number; separate: boolean; pieces?: PieceSet; skip?: number },
): { lines: string[]; matches: number; matchLines: number[]; linesCut: boolean } {
  const { context } = options;
  const skip = options.skip ?? 0;
  // Matches after the last one printed matter only inside its trailing context.
  const matching = matchingLineNumbers(text, options.pieces ?? "all", matcher, skip + options.limit + context);
  const isMatch = new Set(matching);
  const out: string[] = [];
  const matchLines: number[] = [];
  let linesCut = false;
  let lastPrinted = skip > 0 ? (matching[skip - 1] ?? -1) : -1; // number of the last line printed (or skipped) for this file
  let printed = 0;
  for (const i of matching.slice(skip)) {
    if (printed === options.limit) break;
    printed++;
    const from = Math.max(0, i - context, lastPrinted + 1);
    if (context > 0 && (options.separate || out.length > 0) && (lastPrinted < 0 || from > lastPrinted + 1)) out.push("--");
    let to = i + context;
    for (let j = from; j <= to; j++) {
      const line = text.line(j);
      if (line === undefined || (j > i && isMatch.has(j) && printed < options.limit)) {
        // Past the end, or a later match: that one is printed when the loop reaches it (after the
        // limit's last match none is, so its trailing context goes on over them, as GNU grep -m).
        to = j - 1;
        break;
      }
      const cut = truncateLine(line);
      linesCut ||= cut.truncated;
      if (j === i) matchLines.push(out.length);
      out.push(j === i ? `${path}:${j + 1}: ${cut.text}` : `${path}-${j + 1}- ${cut.text}`);
    }
    lastPrinted = to;
  }
  return { lines: out, matches: printed, matchLines, linesCut };
}

/** 0-based numbers of the first `limit` matching lines, looking in `pieces` only (the others cannot match). */
function matchingLineNumbers(text: SearchText, pieces: PieceSet, matcher: LineMatcher, limit: number): number[] {
  const numbers: number[] = [];
  const count = pieces === "all" ? text.pieces.length : pieces.length;
  for (let i = 0; i < count && numbers.length < limit; i++) {
    const k = pieces === "all" ? i : pieces[i]!;
    for (const start of matcher.matchingLineStarts(text.pieces[k]!, limit - numbers.length)) numbers.push(text.lineNumber(k, start));
  }
  return numbers;
}
