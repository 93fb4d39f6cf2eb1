import { GREP_V8_MAX_CHOICES } from "../domain/limits";
import type { SearchQuery } from "../workspace/search/query";
import { regexQuery } from "../workspace/search/regex-query";
import { isRareCharacter } from "./plain-text-finder";
import { linearTimeRegex } from "./re2-regex";
import {
  compiledChoices,
  repeatsAmbiguousGroup,
  repeatsOverlappingNeighbours,
  requiredText,
  sharesStretchManyWays,
  withoutLeadingRepetition,
} from "./regex-shape";
import { escapeRegExp, quotedPattern } from "./regex-source";
import { javaScriptSyntax, refusalAdvice } from "./rg-syntax";
import { type TextChain, textChain } from "./text-chain";
import { compiledRegExp, type TextFinder, textFinder, withoutSource } from "./text-finder";
import { ToolError } from "./tool";

/**
 * grep's matcher: a line matches when the pattern matches somewhere in it. Lines are split on "\n"
 * with a trailing "\r" removed. `query` is what the search index needs to narrow the files.
 */
export class LineMatcher {
  readonly query: SearchQuery;
  /**
   * Which engine confirms lines: V8's (backtracking); RE2 (linear time) for ambiguous repeated
   * groups; plain texts found in order (linear time) for texts joined by `.*` or `.+`.
   */
  readonly engine: "regexp" | "re2" | "chain";
  private readonly line: { test(line: string): boolean };
  /**
   * The same pattern over a whole file (`gm`), to jump from match to match instead of testing every
   * line. Null for lookarounds, which can see across a line break in the whole text.
   */
  private readonly scan: RegExp | null;
  /**
   * When the pattern is plain text matched case-sensitively with no line break in it: finds the
   * same places as the regex, faster, and a hit is a matching line.
   */
  private readonly needle: TextFinder | null;
  /** The texts of a `.*` chain, each found with `find`; the first non-empty one picks the lines to try. */
  private readonly chain: TextChain | null = null;
  /**
   * A text every matching line holds (`requiredText`), when there is one worth finding: only lines
   * holding it are tried. On V8, dropped for the scan once it picks lines densely that do not match
   * (`anchorMissed`).
   */
  private anchor: TextFinder | null = null;
  /** Lines the anchor picked that did not match, and the characters of the texts given so far. */
  private anchorMisses = 0;
  private searched = 0;

  constructor(pattern: string, options: { literal?: boolean; ignoreCase?: boolean }) {
    // Every engine and the index's query get one JavaScript source.
    const { source, ignoreCase } = options.literal
      ? { source: escapeRegExp(pattern), ignoreCase: options.ignoreCase === true }
      : javaScriptSyntax(pattern, options.ignoreCase === true);
    const flags = ignoreCase ? "i" : "";
    try {
      this.line = new RegExp(source, flags);
    } catch (err) {
      throw new ToolError(
        "invalid_regex",
        `invalid regular expression ${quotedPattern(pattern)}: ${withoutSource((err as Error).message)}. ${refusalAdvice(source)}`,
      );
    }
    // Lines are matched by the pattern with a repeated first item cut (`withoutLeadingRepetition`):
    // the same lines. The engine is picked for what is left once items that may be absent are gone
    // (`picked`), and the index's query reads the pattern whole.
    const lean = withoutLeadingRepetition(source);
    const picked = withoutLeadingRepetition(source, false);
    if (repeatsAmbiguousGroup(picked)) {
      // V8 backtracks: (a|aa)+c on a line of 60 a's would hold the isolate for minutes. RE2 runs in
      // linear time; its syntax is JavaScript's but for look-arounds and back-references, and its
      // ignoreCase folds as Unicode does (the index's query must too).
      this.engine = "re2";
      this.line = linearTimeRegex(pattern, lean, ignoreCase, "group");
      this.query = regexQuery(source, { ignoreCase, unicodeFolding: true });
      this.scan = null;
      this.needle = null;
      return;
    }
    this.query = regexQuery(source, { ignoreCase });
    const chain = options.literal ? null : textChain(lean, ignoreCase);
    if (chain) {
      // V8 backtracks on these in time that grows with the square of the line: `.*foo.*bar` took
      // 5 s on a 40 KB minified line. Found in order they take time linear in the line.
      this.engine = "chain";
      this.chain = chain;
      this.line = { test: (line) => chain.matches(line) };
      this.scan = null;
      this.needle = null;
      return;
    }
    const overlapping = repeatsOverlappingNeighbours(picked, ignoreCase)
      ? "repeats"
      : sharesStretchManyWays(picked, ignoreCase)
        ? "ways"
        : compiledChoices(lean) > GREP_V8_MAX_CHOICES
          ? "choices"
          : null;
    if (overlapping) {
      // `-*-*-*-*-*-*y` on a line of 64 dashes held the isolate for minutes (hunt 70): each such pair
      // multiplies V8's backtracking by the line's length, and a model picks how many. Bounded
      // repetitions and alternatives in a row multiply it by their counts (hunt 98). And V8 took
      // seconds to compile a pattern of thousands of choices before matching anything.
      this.engine = "re2";
      // Before the query: a pattern RE2 refuses is refused without building it.
      this.line = linearTimeRegex(pattern, lean, ignoreCase, overlapping);
      this.query = regexQuery(source, { ignoreCase, unicodeFolding: true });
      this.scan = null;
      this.needle = null;
      // RE2 is given a line at a time, cut out of the piece: only the lines holding the text every
      // match holds are tried (case folded as V8's `i` does; RE2 also folds k to the Kelvin sign, so
      // not under ignoreCase).
      const required = ignoreCase ? "" : requiredText(lean);
      this.anchor = required === "" ? null : textFinder(required, false);
      return;
    }
    this.engine = "regexp";
    this.line = compiledRegExp(lean, flags);
    this.scan = /\(\?<?[=!]/.test(lean) ? null : compiledRegExp(lean, `${flags}gm`);
    const plain = options.literal || !/[\\^$.*+?()[\]{}|]/.test(pattern);
    this.needle = plain && !ignoreCase && !/[\r\n]/.test(pattern) ? textFinder(pattern, false) : null;
    // A text of two characters or more that every match holds, found from its rarest character,
    // picks the lines to try: V8's scan tries a pattern that starts with a class at every position.
    // Over 36 MB of .js/.ts: `[a-zA-Z]+Error\(` 277 -> 24 ms, `[A-Z][a-z]+Service` 42 -> 7,
    // `export (const|function)` 25 -> 8. One character only when it is as rare as "-" or rarer
    // (`[0-9a-f]{8}-[0-9a-f]{4}` 209 -> 48 ms, `\d{4}-\d{2}-\d{2}` 52 -> 20): `e[0-9]+` took 25 -> 65.
    const required = this.needle || ignoreCase ? "" : requiredText(lean);
    this.anchor = required.length >= 2 || isRareCharacter(required) ? textFinder(required, false) : null;
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
    const chain = this.chain;
    let anchor = this.anchor;
    const before = this.searched;
    this.searched += text.length;
    for (let from = 0; from < text.length; ) {
      let start: number;
      if (chain !== null || anchor !== null) {
        // A matching line holds the chain's first text (or the required text): jump to the next one, try its line.
        const at = (chain?.first ?? anchor)!.find(text, from);
        if (at < 0) return;
        start = at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
      } else if (needle !== null) {
        const at = needle.find(text, from);
        if (at < 0) return;
        start = at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
        let end = text.indexOf("\n", at);
        if (end < 0) end = text.length;
        if (visit(start) === false) return;
        from = end + 1;
        continue;
      } else if (scan) {
        scan.lastIndex = from;
        const found = scan.exec(text);
        if (!found) return;
        start = found.index === 0 ? 0 : text.lastIndexOf("\n", found.index - 1) + 1;
        // After a final "\n" there is no line (`lines` drops the empty rest).
        if (start >= text.length) return;
      } else start = from;
      let end = text.indexOf("\n", Math.max(start, from));
      if (end < 0) end = text.length;
      const matches = this.line.test(lineAt(text, start, end));
      if (!matches && anchor !== null && scan !== null && this.anchorMissed(before + end)) anchor = null;
      if (matches && visit(start) === false) return;
      from = end + 1;
    }
  }

  /**
   * Counts a line the anchor picked in vain, `searched` characters into the texts searched with it;
   * true when the scan takes over from now on. A line tried costs about what V8's scan costs for 64
   * characters: an anchor in most lines that the pattern rejects at once (`[0-9]+ab` over lines of
   * `ab`) made the search 41 times slower than the scan (hunt 87), where a line picked per thousand
   * characters (`return [a-z]+;` over code) is faster.
   */
  private anchorMissed(searched: number): boolean {
    this.anchorMisses++;
    if (this.anchorMisses < ANCHOR_MISSES_TRIED || this.anchorMisses * SCAN_CHARS_PER_LINE_TRIED <= searched) return false;
    this.anchor = null;
    return true;
  }
}

/** Misses of the anchor before it may be dropped for the scan, and what one costs in characters scanned (`anchorMissed`). */
const ANCHOR_MISSES_TRIED = 1024;

const SCAN_CHARS_PER_LINE_TRIED = 64;

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
