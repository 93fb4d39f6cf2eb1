import type { SearchQuery } from "../workspace/search/query";
import { regexQuery } from "../workspace/search/regex-query";
import { ToolError } from "./tool";

/**
 * grep's matcher: a line matches when the pattern matches somewhere in it. Lines are split on "\n"
 * with a trailing "\r" removed. `query` is what the search index needs to narrow the files.
 */
export class LineMatcher {
  readonly query: SearchQuery;
  private readonly line: RegExp;
  /**
   * The same pattern over a whole file (`gm`), to jump from match to match instead of testing every
   * line. Null for lookarounds, which can see across a line break in the whole text.
   */
  private readonly scan: RegExp | null;
  /**
   * The text itself when the pattern is plain text matched case-sensitively with no line break in
   * it: then `indexOf` finds the same places as the regex, faster, and a hit is a matching line.
   */
  private readonly needle: string | null;

  constructor(pattern: string, options: { literal?: boolean; ignoreCase?: boolean }) {
    const source = options.literal ? escapeRegExp(pattern) : pattern;
    const flags = options.ignoreCase ? "i" : "";
    try {
      this.line = new RegExp(source, flags);
    } catch (err) {
      throw new ToolError(
        "invalid_regex",
        `invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message}. Fix the pattern, or pass literal=true to search for the text as written`,
      );
    }
    this.scan = /\(\?<?[=!]/.test(source) ? null : new RegExp(source, `${flags}gm`);
    const plain = options.literal || !/[\\^$.*+?()[\]{}|]/.test(pattern);
    this.needle = plain && !options.ignoreCase && !/[\r\n]/.test(pattern) ? pattern : null;
    this.query = regexQuery(source, { ignoreCase: options.ignoreCase });
  }

  matches(line: string): boolean {
    return this.line.test(line);
  }

  /** Matching lines in `text`. */
  countMatchingLines(text: string): number {
    let n = 0;
    this.eachMatchingLine(text, () => {
      n++;
      return true;
    });
    return n;
  }

  /** Where the first `limit` matching lines of `text` start, in order. */
  matchingLineStarts(text: string, limit = Number.POSITIVE_INFINITY): number[] {
    const starts: number[] = [];
    this.eachMatchingLine(text, (start) => {
      starts.push(start);
      return starts.length < limit;
    });
    return starts;
  }

  /**
   * Calls `visit` with the start of each matching line, until it returns false. The whole-text scan finds the next line that
   * can match: if a line matches on its own, the scan started at that line's beginning finds a match
   * starting in it (with `m`, ^ and $ hold at line breaks, and without lookarounds nothing else looks
   * past the line). Every line the scan lands on is confirmed with the line matcher itself, so a match
   * the scan finds across a line break or at a lone "\r" counts only when the line matches alone.
   */
  private eachMatchingLine(text: string, visit: (start: number) => boolean | undefined): void {
    const scan = this.scan;
    const needle = this.needle;
    for (let from = 0; from < text.length; ) {
      let start: number;
      if (needle !== null) {
        const at = text.indexOf(needle, from);
        if (at < 0) return;
        start = at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
        let end = text.indexOf("\n", at);
        if (end < 0) end = text.length;
        if (visit(start) === false) return;
        from = end + 1;
        continue;
      }
      if (scan) {
        scan.lastIndex = from;
        const found = scan.exec(text);
        if (!found) return;
        start = found.index === 0 ? 0 : text.lastIndexOf("\n", found.index - 1) + 1;
        // After a final "\n" there is no line (`lines` drops the empty rest).
        if (start >= text.length) return;
      } else start = from;
      let end = text.indexOf("\n", Math.max(start, from));
      if (end < 0) end = text.length;
      if (this.line.test(lineAt(text, start, end)) && visit(start) === false) return;
      from = end + 1;
    }
  }
}

/** The line `text[start, end)` without a trailing "\r". */
function lineAt(text: string, start: number, end: number): string {
  return end > start && text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
}

/** The lines of a file as grep sees them. */
export function lines(text: string): string[] {
  const all = text.split("\n");
  if (all[all.length - 1] === "") all.pop();
  if (!text.includes("\r")) return all;
  for (let i = 0; i < all.length; i++) {
    const line = all[i] ?? "";
    if (line.endsWith("\r")) all[i] = line.slice(0, -1);
  }
  return all;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
