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
    this.query = regexQuery(source, { ignoreCase: options.ignoreCase });
  }

  matches(line: string): boolean {
    return this.line.test(line);
  }

  /**
   * Matching lines in `text`. The whole-text scan finds the next line that can match: if a line
   * matches on its own, the scan started at that line's beginning finds a match starting in it
   * (with `m`, ^ and $ hold at line breaks, and without lookarounds nothing else looks past the
   * line). Every line the scan lands on is confirmed with the line matcher itself, so a match the
   * scan finds across a line break or at a lone "\r" counts only when the line matches alone.
   */
  countMatchingLines(text: string): number {
    const scan = this.scan;
    if (!scan) return lines(text).filter((line) => this.line.test(line)).length;
    let n = 0;
    for (let from = 0; from < text.length; ) {
      scan.lastIndex = from;
      const found = scan.exec(text);
      if (!found) break;
      const start = found.index === 0 ? 0 : text.lastIndexOf("\n", found.index - 1) + 1;
      // After a final "\n" there is no line (`lines` drops the empty rest).
      if (start >= text.length) break;
      let end = text.indexOf("\n", found.index);
      if (end < 0) end = text.length;
      const line = text.charCodeAt(end - 1) === 13 && end > start ? text.slice(start, end - 1) : text.slice(start, end);
      if (this.line.test(line)) n++;
      from = end + 1;
    }
    return n;
  }
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
