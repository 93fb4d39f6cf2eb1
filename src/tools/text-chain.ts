import { classEnd, escapeRegExp } from "./regex-source";
import { regexFinder, type TextFinder, textFinder } from "./text-finder";

/** Texts joined by `.*` or `.+` (lazy or not), as a regex over one line reads them. */
export class TextChain {
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
export function textChain(source: string, ignoreCase: boolean): TextChain | null {
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
