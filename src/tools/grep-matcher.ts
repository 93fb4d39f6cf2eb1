import { RE2JS } from "re2js";
import { GREP_RE2_MAX_INSTRUCTIONS } from "../domain/limits";
import type { SearchQuery } from "../workspace/search/query";
import { regexQuery } from "../workspace/search/regex-query";
import { isRareCharacter, plainTextFinder } from "./plain-text-finder";
import { javaScriptSyntax, refusalAdvice } from "./rg-syntax";
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
        `invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message}. ${refusalAdvice(source)}`,
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
      this.query = regexQuery(source, { ignoreCase, unicodeFolding: true });
      this.line = linearTimeRegex(pattern, lean, ignoreCase, "group");
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
    if (repeatsOverlappingNeighbours(picked, ignoreCase)) {
      // `-*-*-*-*-*-*y` on a line of 64 dashes held the isolate for minutes (hunt 70): each such pair
      // multiplies V8's backtracking by the line's length, and a model picks how many.
      this.engine = "re2";
      this.query = regexQuery(source, { ignoreCase, unicodeFolding: true });
      this.line = linearTimeRegex(pattern, lean, ignoreCase, "repeats");
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

/**
 * A regex V8 has compiled: it compiles on first use, for one-byte and for two-byte strings apart, and
 * a pattern past its size limit (a class repeated 100,000 times) would fail in the middle of a search.
 */
export function compiledRegExp(source: string, flags: string): RegExp {
  const regex = new RegExp(source, flags);
  try {
    regex.test("");
    regex.test("\u0100");
  } catch (err) {
    const why = (err as Error).message.replace(/^Invalid regular expression: \/[\s\S]*\/[a-z]*: /, "");
    throw new ToolError("invalid_regex", `regular expression too large to run (${why}): write a shorter pattern`);
  }
  regex.lastIndex = 0;
  return regex;
}

/** Finds a plain text from a position on: the index where it starts, or -1. */
interface TextFinder {
  readonly length: number;
  find(text: string, from: number): number;
}

function textFinder(text: string, ignoreCase: boolean): TextFinder {
  if (!ignoreCase) return { length: text.length, find: plainTextFinder(text) };
  // V8's own case folding (a regex, `i`): a matched text has the length of the pattern's text.
  const regex = compiledRegExp(escapeRegExp(text), "gi");
  return {
    length: text.length,
    find: (haystack, from) => {
      regex.lastIndex = from;
      return regex.exec(haystack)?.index ?? -1;
    },
  };
}

/** A run of `length` one-character items (classes, `.`, characters) as regex `source`: each match has that length. */
function regexFinder(source: string, length: number, ignoreCase: boolean): TextFinder {
  const regex = compiledRegExp(source, ignoreCase ? "gi" : "g");
  return {
    length,
    find: (haystack, from) => {
      regex.lastIndex = from;
      return regex.exec(haystack)?.index ?? -1;
    },
  };
}

/** Texts joined by `.*` or `.+` (lazy or not), as a regex over one line reads them. */
class TextChain {
  /** `texts[i + 1]` starts at least `gaps[i]` characters after `texts[i]` ends; every matching line holds `first`. */
  constructor(
    private readonly texts: readonly TextFinder[],
    private readonly gaps: readonly number[],
    readonly first: TextFinder,
  ) {}

  matches(line: string): boolean {
    // `.` matches no line terminator: the texts and what lies between them are in one stretch.
    if (!/[\r\u2028\u2029]/.test(line)) return this.inOrder(line);
    return line.split(/[\r\u2028\u2029]/).some((stretch) => this.inOrder(stretch));
  }

  /** Each text at its first place after the one before: the earliest end leaves the most room. */
  private inOrder(stretch: string): boolean {
    let at = 0;
    for (let i = 0; i < this.texts.length; i++) {
      if (i > 0) at += this.gaps[i - 1]!;
      const text = this.texts[i]!;
      if (text.length === 0) {
        if (at > stretch.length) return false;
        continue;
      }
      const found = text.find(stretch, at);
      if (found < 0) return false;
      at = found + text.length;
    }
    return true;
  }
}

/**
 * The pattern as a chain when it is texts joined by `.*`, `.+`, `.*?` or `.+?` (such as
 * `import.*from.*react`), with at least one join and one non-empty text; otherwise null. A text is
 * a run of characters that each match one character of a line: a character as itself (escaped
 * punctuation such as `\(` too), `.`, a class (`["@]`, `[a-z]`) or `\d \w \s \D \W \S`,
 * unquantified; one that could match a line terminator (`[^"]`, `\s`) is not taken.
 */
function textChain(source: string, ignoreCase: boolean): TextChain | null {
  /** Per text: its characters as regex source, and whether each matches only itself. */
  const texts: { source: string; plain: string | null; length: number }[] = [{ source: "", plain: "", length: 0 }];
  const gaps: number[] = [];
  let joined = false;
  const flags = ignoreCase ? "i" : "";
  // Texts are found within a stretch of the line between terminators (`.` stops at them): a
  // character of a text that could be one would be sought across stretches.
  const mayEndStretch = (atom: string, plain: string | null) =>
    plain !== null ? LINE_TERMINATORS.includes(plain) : LINE_TERMINATORS.some((t) => new RegExp(`^${atom}$`, flags).test(t));
  let items = 0;
  const add = (atom: string, plain: string | null) => {
    // A text of k such items is sought in time k times the line's (hunt 90: 5,000 `.` took 5 s over 2 MB).
    if (plain === null && ++items > CHAIN_MAX_ITEMS) return false;
    if (mayEndStretch(atom, plain)) return false;
    const text = texts[texts.length - 1]!;
    text.source += atom;
    text.plain = plain !== null && text.plain !== null ? text.plain + plain : null;
    text.length++;
    return true;
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      const escaped = source[i + 1];
      if (escaped === undefined) return null;
      // Only escaped punctuation is itself: \b, \n, \x41, \1 ... are anchors, codes, references.
      if (/[0-9A-Za-z]/.test(escaped) && !/[dDwWsS]/.test(escaped)) return null;
      if (!add(`\\${escaped}`, /[dDwWsS]/.test(escaped) ? null : escaped)) return null;
      i++;
    } else if (c === "[") {
      const end = classEnd(source, i);
      if (!add(source.slice(i, end + 1), null)) return null;
      i = end;
    } else if (c === ".") {
      const repeat = source[i + 1];
      if (repeat !== "*" && repeat !== "+") {
        if (!add(".", null)) return null;
        continue;
      }
      i += source[i + 2] === "?" ? 2 : 1;
      // `.*.+` is one join of at least one character.
      if (texts[texts.length - 1]!.length === 0 && texts.length > 1) gaps[gaps.length - 1]! += repeat === "+" ? 1 : 0;
      else {
        gaps.push(repeat === "+" ? 1 : 0);
        texts.push({ source: "", plain: "", length: 0 });
      }
      joined = true;
    } else if ("^$*+?(){}|".includes(c)) return null;
    else if (!add(escapeRegExp(c), c)) return null;
  }
  if (!joined || texts.every((t) => t.length === 0)) return null;
  const finders = texts.map((t) => (t.plain !== null ? textFinder(t.plain, ignoreCase) : regexFinder(t.source, t.length, ignoreCase)));
  // The lines to try are picked by a plain text when there is one: found from its rarest character.
  const first = texts.findIndex((t) => t.plain !== null && t.length > 0);
  return new TextChain(finders, gaps, finders[first >= 0 ? first : texts.findIndex((t) => t.length > 0)]!);
}

const LINE_TERMINATORS = ["\r", "\u2028", "\u2029"];
/** Items other than plain characters (classes, `.`, `\d` ...) a chain takes: patterns models write hold a few. */
const CHAIN_MAX_ITEMS = 64;
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

/**
 * Whether the pattern repeats a group that itself repeats or alternates (`(a+)+`, `(a|aa)*`,
 * `(\w+\s?)+`): the shapes on which a backtracking engine can take exponential time. Reads the
 * source as written: escapes and character classes are skipped, so `[(]+` or `\(a|b\)+` are not groups.
 */
export function repeatsAmbiguousGroup(source: string): boolean {
  // Per open group: whether it holds a quantifier or an alternation.
  const open: boolean[] = [];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "[") {
      i = classEnd(source, i);
      continue;
    }
    if (c === "(") {
      open.push(false);
      // Group syntax, not a quantifier: (?: (?= (?! (?<= (?<! (?<name>
      const syntax = /^\?(?::|=|!|<=|<!|<[^>]*>)/.exec(source.slice(i + 1));
      if (syntax) i += syntax[0].length;
    } else if (c === "|") {
      if (open.length > 0) open[open.length - 1] = true;
    } else if (c === ")") {
      const ambiguous = open.pop() ?? false;
      const repeat = quantifierAt(source, i + 1);
      if (ambiguous && repeat !== null && repeat > 1) return true;
      // The enclosing group holds whatever this one held, and this repetition.
      if (open.length > 0 && (ambiguous || repeat !== null)) open[open.length - 1] = true;
    } else if (quantifierAt(source, i) !== null && open.length > 0) open[open.length - 1] = true;
  }
  return false;
}

/**
 * The longest text every match holds, read from the pattern's top level: plain characters and escaped
 * punctuation in a row, outside groups and classes. "" when there is none, or when the top level
 * alternates (`a|b`).
 */
export function requiredText(source: string): string {
  let best = "";
  let run = "";
  let depth = 0;
  const end = () => {
    if (run.length > best.length) best = run;
    run = "";
  };
  for (let i = 0; i < source.length; ) {
    const c = source[i]!;
    let piece: string | null = null;
    let next = i + 1;
    if (c === "\\") {
      const escaped = source[i + 1] ?? "";
      if (/^[^0-9A-Za-z\s]$/.test(escaped)) piece = escaped;
      // Other escapes (\d, \x41, \u{...}, \p{...}, \cJ, \1) are not taken apart: the run ends there.
      next = i + escapeAt(source, i).length;
    } else if (c === "[") {
      next = classEnd(source, i) + 1;
    } else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|") {
      if (depth === 0) return "";
    } else if (c !== "^" && c !== "$" && c !== "." && quantifierAt(source, i) === null) piece = c;
    const most = quantifierAt(source, next);
    const least = most === null ? 1 : leastAt(source, next);
    if (depth > 0) piece = null;
    if (piece !== null && depth === 0 && least >= 1) run += piece;
    // A repeated character is there at least once, but what follows it may not come right after it.
    if (piece === null || most !== null) end();
    i = most === null ? next : afterQuantifier(source, next);
  }
  end();
  return best;
}

/** One item of a pattern, as `repeatsOverlappingNeighbours` reads it. */
interface Item {
  /** Its source; null for a repeated group, which may match anything. */
  atom: string | null;
  unbounded: boolean;
  /** It may match nothing (`?`, `*`, `{0,n}`, a look-around, an anchor). */
  optional: boolean;
}

/**
 * Whether two unbounded repetitions that can match a same character follow each other with only
 * optional items, or items that character can be taken for, between (`-*-*`, `\s*\s+`, `.*\s*=`,
 * `[a-z]+\w*`, `\w*a\w*`): a backtracking engine tries every
 * way to share a run of such characters between them, so each pair multiplies the time by the
 * line's length, and a model picks how many pairs (hunt 70: `-*-*-*-*-*-*y` held the isolate for
 * minutes on a 67-character line). Reads the source as written; a repeated group counts as
 * matching anything, and an alternation starts a new sequence.
 */
export function repeatsOverlappingNeighbours(source: string, ignoreCase: boolean): boolean {
  let previous: Item | null = null;
  for (const item of patternItems(source)) {
    if (item === "|") {
      previous = null;
      continue;
    }
    if (item.unbounded) {
      if (previous && mayShareCharacters(previous.atom, item.atom, ignoreCase)) return true;
      previous = item;
    } else if (!item.optional && previous && !mayShareCharacters(previous.atom, item.atom, ignoreCase)) {
      // An item the repetition's characters cannot be taken for ends its run; one they can be
      // (`\w*a\w*`: the `a` is a word character too) lets the run go on through it.
      previous = null;
    }
  }
  return false;
}

/** The pattern's items in order, groups not repeated read through (their contents are the sequence), "|" where a branch ends. */
function* patternItems(source: string): Generator<Item | "|"> {
  for (let i = 0; i < source.length; ) {
    const c = source[i]!;
    let end: number;
    let atom: string | null;
    if (c === "|") {
      yield "|";
      i++;
      continue;
    }
    if (c === ")") {
      i++;
      continue;
    }
    if (c === "^" || c === "$") {
      yield { atom: null, unbounded: false, optional: true };
      i++;
      continue;
    }
    if (c === "(") {
      const close = groupEnd(source, i);
      const lookaround = /^\(\?<?[=!]/.test(source.slice(i, i + 4));
      if (lookaround) {
        i = close + 1;
        // A quantifier on a look-around changes nothing here: it matches no character either way.
        if (quantifierAt(source, i) !== null) i = afterQuantifier(source, i);
        yield { atom: null, unbounded: false, optional: true };
        continue;
      }
      if (quantifierAt(source, close + 1) === null) {
        // Not repeated: its items are part of the sequence (the group syntax itself is skipped).
        const syntax = /^\((?:\?(?::|<[^>]*>))?/.exec(source.slice(i))![0];
        i += syntax.length;
        continue;
      }
      end = close + 1;
      atom = null;
    } else if (c === "\\") {
      const escaped = escapeAt(source, i);
      if (escaped === "\\b" || escaped === "\\B") {
        yield { atom: null, unbounded: false, optional: true };
        i += 2;
        continue;
      }
      end = i + escaped.length;
      // A back-reference matches what its group did: anything.
      atom = /^\\(?:[1-9]|k<)/.test(escaped) ? null : escaped;
    } else if (c === "[") {
      end = classEnd(source, i) + 1;
      atom = source.slice(i, end);
    } else {
      end = i + 1;
      atom = c;
    }
    const most = quantifierAt(source, end);
    const least = most === null ? 1 : leastAt(source, end);
    yield { atom, unbounded: most === Number.POSITIVE_INFINITY, optional: least === 0 };
    i = most === null ? end : afterQuantifier(source, end);
  }
}

/**
 * The pattern with its repeated first item cut to the least count, again while there is one
 * (`[a-z]+_x` -> `[a-z]_x`, `\s*\w+=` -> `\w=`, `\d{2,}` -> `\d{2}`). A line holds a match of one
 * exactly when it holds a match of the other: the run's last characters match the cut item, and
 * what follows can start wherever it could (look-behinds see the same text). V8 tried the whole run
 * from each of its characters: `[a-z]+_[a-z]+` took 222 ms over the grep bench's tree, rg 57. Not
 * with an alternation at the top (the cut would apply to its first branch only, which is still
 * right but is left alone), nor for a group, an anchor or a back-reference first. Without
 * `cutCounted`, only the items that may be absent go (`\s*\w+=` -> `\w+=`): what the engine is
 * picked on, since `\w+\w+=` cut to `\w\w+=` is as slow on V8 as it was (hunt 91), and only the
 * pair shows it.
 */
export function withoutLeadingRepetition(source: string, cutCounted = true): string {
  if (hasTopLevelAlternation(source)) return source;
  let lean = source;
  for (;;) {
    const end = leadingAtomEnd(lean);
    if (end <= 0 || quantifierAt(lean, end) === null) return lean;
    // The least count as written: `{1000000000000000000000,}` as a number prints as 1e+21, which
    // V8 would read as text (hunt 91).
    const least = /^\{(\d+)/.exec(lean.slice(end))?.[1] ?? (lean[end] === "+" ? "1" : "0");
    const rest = lean.slice(afterQuantifier(lean, end));
    if (Number(least) === 0) {
      lean = rest;
      continue;
    }
    if (!cutCounted) return lean;
    const atom = lean.slice(0, end);
    return (Number(least) === 1 ? atom : `${atom}{${least}}`) + rest;
  }
}

/** The end of the pattern's first item when it is one character (a character, `.`, a class, `\w`, `\x41` ...), else -1. */
function leadingAtomEnd(source: string): number {
  const c = source[0];
  if (c === undefined || "^$()|*+?{}".includes(c)) return -1;
  if (c === "[") return classEnd(source, 0) + 1;
  if (c !== "\\") return 1;
  const written = escapeAt(source, 0);
  // Not an assertion (\b), a back-reference (\1, \k<a>) or an escape that is not one character.
  return /^\\(?:[dDwWsS]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|c[A-Za-z]|0|[^0-9A-Za-z])$/.test(written) ? written.length : -1;
}

function hasTopLevelAlternation(source: string): boolean {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[") i = classEnd(source, i);
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|" && depth === 0) return true;
  }
  return false;
}

/** Where the class opened at `open` ends (its "]"): in JavaScript at the first unescaped "]" ("[]" is empty, "[^]" any character). */
function classEnd(source: string, open: number): number {
  let i = open + (source[open + 1] === "^" ? 2 : 1);
  for (; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
  return i;
}

/** The escape at `i` (a backslash there) as written: `\x41`, `\u{1F600}`, `\p{L}`, `\cJ`, `\k<name>`, `\12`, or one character. */
function escapeAt(source: string, i: number): string {
  return ESCAPE.exec(source.slice(i, i + 64))?.[0] ?? "\\";
}

// `\0` takes up to two more octal digits (Annex B: `\033` is ESC, not NUL and "33", hunt 87); `\1`-`\9`
// take every digit after them (a back-reference, or an octal escape and plain digits: counting them
// in the escape only ever leaves text out of `requiredText`).
const ESCAPE = /^\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|c[A-Za-z]|[pP]\{[^}]*\}|k<[^>]*>|0[0-7]{0,2}|[1-9]\d*|[\s\S])/;

/** Where the group opened at `open` closes (its ")"), or the source's end. */
function groupEnd(source: string, open: number): number {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[") i = classEnd(source, i);
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i;
  }
  return source.length;
}

/** The fewest times the quantifier at `i` repeats. */
function leastAt(source: string, i: number): number {
  const c = source[i];
  if (c === "*" || c === "?") return 0;
  if (c === "+") return 1;
  return Number(/^\{(\d+)/.exec(source.slice(i))?.[1] ?? 1);
}

/** Past the quantifier at `i` (and its lazy `?`). */
function afterQuantifier(source: string, i: number): number {
  const braced = source[i] === "{" ? /^\{\d+(,\d*)?\}/.exec(source.slice(i)) : null;
  const next = i + (braced ? braced[0].length : 1);
  return source[next] === "?" ? next + 1 : next;
}

/** Characters that tell apart the atoms grep patterns use: Latin-1, a few scripts' letters, spaces and line separators. */
const PROBE_CHARACTERS = [
  ...Array.from({ length: 256 }, (_, n) => String.fromCharCode(n)),
  ..."\u0100\u017f\u0391\u03b1\u0410\u0430\u05d0\u0627\u0905\u0e01\u3042\u30a2\u4e00\u4e2d\uac00\u1680\u2000\u2028\u2029\u202f\u205f\u3000\ufeff\u212a\u2126",
];

/** Whether two single-character atoms (null: a group, anything) can match a same character: tried on probes and on the characters they name. */
function mayShareCharacters(a: string | null, b: string | null, ignoreCase: boolean): boolean {
  if (a === null || b === null) return true;
  let first: RegExp;
  let second: RegExp;
  try {
    first = new RegExp(`^(?:${a})$`, ignoreCase ? "i" : "");
    second = new RegExp(`^(?:${b})$`, ignoreCase ? "i" : "");
  } catch {
    return true;
  }
  const named = [...a, ...b].flatMap((ch) => [ch, ch.toLowerCase(), ch.toUpperCase()]);
  return [...PROBE_CHARACTERS, ...named].some((ch) => first.test(ch) && second.test(ch));
}

/** The most times the quantifier at `i` repeats (Infinity when unbounded), or null when there is none. */
function quantifierAt(source: string, i: number): number | null {
  const c = source[i];
  if (c === "*" || c === "+") return Number.POSITIVE_INFINITY;
  if (c === "?") return 1;
  const braced = c === "{" ? /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i)) : null;
  if (!braced) return null;
  if (braced[2] === undefined) return Number(braced[1]);
  return braced[3] === "" ? Number.POSITIVE_INFINITY : Number(braced[3]);
}

/** The pattern on RE2 (linear time), or invalid_regex naming what RE2 cannot do. */
function linearTimeRegex(pattern: string, source: string, ignoreCase: boolean, why: "group" | "repeats"): { test(line: string): boolean } {
  let re2: RE2JS;
  try {
    // RE2 reads \1 as an octal escape: a back-reference would silently mean something else.
    if (/(?:^|[^\\])(?:\\\\)*\\(?:[1-9]|k<)/.test(source)) throw new Error("back-references are not supported");
    re2 = RE2JS.compile(re2Syntax(source), ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    throw new ToolError(
      "invalid_regex",
      why === "group"
        ? `regular expression ${JSON.stringify(pattern)} repeats a group that itself repeats or alternates, which can take exponential time; such patterns run on RE2, which refuses it (${(err as Error).message}): rewrite it without look-arounds or back-references, or without the nested repetition`
        : `regular expression ${JSON.stringify(pattern)} has unbounded repetitions next to each other that can match the same characters (as in \`a*a*\` or \`\\s*\\s+\`), which can take time growing with a power of the line's length; such patterns run on RE2, which refuses it (${(err as Error).message}): rewrite it without look-arounds or back-references, or with one repetition there`,
    );
  }
  const instructions = re2.programSize();
  if (instructions > GREP_RE2_MAX_INSTRUCTIONS) {
    throw new ToolError(
      "invalid_regex",
      `regular expression ${JSON.stringify(pattern)} ${why === "group" ? "repeats a group that itself repeats or alternates" : "has unbounded repetitions next to each other that can match the same characters"}, so it runs on RE2, where it compiles to ${instructions} instructions, more than ${GREP_RE2_MAX_INSTRUCTIONS}: RE2's time per character grows with them. Write smaller counted repetitions ({n}), or fewer of them`,
    );
  }
  // Not `re2.test(line)`: RE2JS's DFA, 10-40x faster on lines of code, caches a transition per
  // state and non-ASCII character without bound (398 MB after six 8 MiB files in one grep), and
  // walks every character where `find` jumps to the pattern's prefix (hunt 89).
  return { test: (line) => re2.matcher(line).find() };
}

/**
 * A JavaScript pattern (no `u` flag) in RE2's syntax, with the same meaning: `.` excludes every line
 * terminator (RE2's excludes only \n), and what RE2 spells differently or reads otherwise is
 * rewritten: `\uXXXX` (a surrogate pair as one code point), `\xHH`, `\cX`, `\0`, `[\b]`, `[^]` and
 * `[]`, a `[` inside a class (RE2 would start a POSIX class), `\s` (RE2's is ASCII and leaves out
 * `\v`), and the escapes JavaScript takes as the character itself (`\e`, `\A`, `\z`, an incomplete
 * `\x4` ...), which RE2 refuses or reads as anchors.
 */
export function re2Syntax(source: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      const [text, length] = re2Escape(source, i, inClass);
      out += text;
      i += length - 1;
    } else if (!inClass && c === "[") {
      if (source.startsWith("[^]", i)) {
        out += "[\\s\\S]";
        i += 2;
      } else if (source.startsWith("[]", i)) {
        out += "[^\\x{0}-\\x{10FFFF}]";
        i += 1;
      } else {
        inClass = true;
        out += source[i + 1] === "^" ? "[^" : "[";
        if (source[i + 1] === "^") i++;
      }
    } else if (inClass && c === "]") {
      inClass = false;
      out += c;
    } else if (inClass && c === "[") out += "\\[";
    else out += !inClass && c === "." ? "[^\\n\\r\\x{2028}\\x{2029}]" : c;
  }
  return out;
}

/** Escapes both engines read alike. */
const SHARED_ESCAPES = new Set([..."dDwWnrtfv123456789"]);
/** What JavaScript's `\s` matches, listed for RE2. */
const JS_SPACES = "\\t\\n\\x{b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}";

/** The escape at `i` in RE2's syntax, and how many characters of `source` it took. */
function re2Escape(source: string, i: number, inClass: boolean): [string, number] {
  const next = source[i + 1] ?? "";
  const hex = (n: number) => new RegExp(`^[0-9a-fA-F]{${n}}`).exec(source.slice(i + 2))?.[0];
  const code = (n: number) => `\\x{${n.toString(16)}}`;
  if (next === "u") {
    const digits = hex(4);
    if (!digits) return ["u", 2];
    const unit = Number.parseInt(digits, 16);
    // A surrogate pair written as two escapes is one character to RE2, which has no halves.
    const low = unit >= 0xd800 && unit < 0xdc00 ? /^\\u(d[c-f][0-9a-f]{2})/i.exec(source.slice(i + 6))?.[1] : undefined;
    if (low) return [code(0x10000 + ((unit - 0xd800) << 10) + (Number.parseInt(low, 16) - 0xdc00)), 12];
    return [code(unit), 6];
  }
  if (next === "x") {
    const digits = hex(2);
    return digits ? [code(Number.parseInt(digits, 16)), 4] : ["x", 2];
  }
  if (next === "c") {
    // Inside a class JavaScript also takes a digit or _ after \c.
    const control = (inClass ? /^[A-Za-z0-9_]/ : /^[A-Za-z]/).exec(source.slice(i + 2))?.[0];
    return control ? [code(control.charCodeAt(0) % 32), 3] : ["\\\\c", 2];
  }
  if (next === "s") return [inClass ? JS_SPACES : `[${JS_SPACES}]`, 2];
  // Inside a class RE2 cannot subtract JavaScript's set: its own (ASCII) \S stands there.
  if (next === "S") return [inClass ? "\\S" : `[^${JS_SPACES}]`, 2];
  if (next === "0" && !/^[0-9]/.test(source.slice(i + 2))) return [code(0), 2];
  if (next === "b") return [inClass ? code(8) : "\\b", 2];
  if (next === "B") return [inClass ? "B" : "\\B", 2];
  if (SHARED_ESCAPES.has(next) || next === "0") return [`\\${next}`, 2];
  // Punctuation escaped stays escaped; any other character after a backslash is itself in JavaScript.
  if (/^[!-/:-@[-`{-~]$/.test(next)) return [`\\${next}`, 2];
  return [next, 2];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
