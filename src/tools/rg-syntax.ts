import { quotedPattern } from "./regex-source";
import { ToolError } from "./tool";

// The ripgrep and grep habits models bring, read as JavaScript regex syntax.

/**
 * ASCII members of the POSIX classes ripgrep takes inside brackets (`[[:space:]]`), in JavaScript's
 * class syntax. JavaScript alone reads `[[:space:]]` as the class `[[:space]` followed by "]".
 */
const POSIX_CLASSES: ReadonlyMap<string, string> = new Map([
  ["alnum", "0-9A-Za-z"],
  ["alpha", "A-Za-z"],
  ["ascii", "\\x00-\\x7f"],
  ["blank", "\\t "],
  ["cntrl", "\\x00-\\x1f\\x7f"],
  ["digit", "0-9"],
  ["graph", "!-~"],
  ["lower", "a-z"],
  ["print", " -~"],
  ["punct", "!-\\/:-@\\[-`{-~"],
  ["space", "\\t\\n\\v\\f\\r "],
  ["upper", "A-Z"],
  ["word", "0-9A-Za-z_"],
  ["xdigit", "0-9A-Fa-f"],
]);

/**
 * The pattern in JavaScript's syntax, from the grep and ripgrep habits models bring: a leading `(?i)`
 * is ignoreCase, a POSIX class inside brackets stands for its ASCII members, and `\x{...}` for the
 * character it names, as in ripgrep. ripgrep's Unicode classes (`\p{L}`) are refused: JavaScript
 * reads them as the text "p{L}", which found nothing, without a word (hunt 73).
 */
export function javaScriptSyntax(pattern: string, ignoreCase: boolean): { source: string; ignoreCase: boolean } {
  const flagged = pattern.startsWith("(?i)");
  const body = flagged ? pattern.slice(4) : pattern;
  let source = "";
  let inClass = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === "\\") {
      const translated = rgEscape(pattern, body, i, inClass);
      source += translated.source;
      i += translated.length - 1;
    } else if (!inClass && c === "[") {
      inClass = true;
      // JavaScript: a class ends at the first unescaped "]" ("[]" is empty, "[^]" any character).
      const start = body[i + 1] === "^" ? 2 : 1;
      source += body.slice(i, i + start);
      i += start - 1;
    } else if (inClass && c === "]") {
      inClass = false;
      source += c;
    } else if (inClass && body.startsWith("[:", i)) {
      const named = /^\[:(\^?)(\w+):\]/.exec(body.slice(i));
      if (!named) source += c;
      else {
        source += posixMembers(pattern, named[0], named[1] === "^", named[2]!);
        i += named[0].length - 1;
      }
    } else source += c;
  }
  return { source, ignoreCase: ignoreCase || flagged };
}

/** The escape at `i` of `body` (a backslash) in JavaScript's syntax, and how many characters it took. */
function rgEscape(pattern: string, body: string, i: number, inClass: boolean): { source: string; length: number } {
  const c = body[i + 1];
  // ripgrep's forms: \p{Name} and \pL (a bare \p is JavaScript's "p").
  const unicodeClass = c === "p" || c === "P" ? /^\\[pP](?:\{[^}]*\}|[A-Za-z])/.exec(body.slice(i)) : null;
  if (unicodeClass) {
    const written = unicodeClass[0];
    throw refusal(
      pattern,
      `Unicode classes such as ${written} are not supported (the pattern is a JavaScript regular expression without the u flag, where it would be the text "${written.slice(1)}"); ` +
        "name the characters instead, with a range such as [\\u0400-\\u04ff], or . for any character",
    );
  }
  const braced = c === "x" ? /^\\x\{([0-9A-Fa-f]{1,6})\}/.exec(body.slice(i)) : null;
  if (!braced) return { source: body.slice(i, i + 2), length: 2 };
  const code = Number.parseInt(braced[1]!, 16);
  if (code > 0x10ffff) throw refusal(pattern, `${braced[0]} is past the last Unicode character (\\x{10FFFF})`);
  if (code <= 0xffff) return { source: codeUnit(code), length: braced[0].length };
  // Past U+FFFF a character is two code units to JavaScript without the u flag: as text they match
  // it, inside a class they would be two characters.
  if (inClass)
    throw refusal(
      pattern,
      `${braced[0]} inside a class is not supported (past U+FFFF); write it outside, as an alternative: (?:${braced[0]}|[...])`,
    );
  const pair = String.fromCodePoint(code);
  return { source: `(?:${codeUnit(pair.charCodeAt(0))}${codeUnit(pair.charCodeAt(1))})`, length: braced[0].length };
}

/** A UTF-16 code unit as a `\\uXXXX` escape. */
const codeUnit = (unit: number) => `\\u${unit.toString(16).padStart(4, "0")}`;

function refusal(pattern: string, why: string): ToolError {
  return new ToolError("invalid_regex", `invalid regular expression ${quotedPattern(pattern)}: ${why}`);
}

function posixMembers(pattern: string, written: string, negated: boolean, name: string): string {
  const members = POSIX_CLASSES.get(name);
  if (members === undefined) {
    throw refusal(
      pattern,
      `${written} is not a POSIX class; the known ones are ${[...POSIX_CLASSES.keys()].map((n) => `[:${n}:]`).join(", ")}`,
    );
  }
  if (negated) throw refusal(pattern, `negated POSIX classes such as ${written} are not supported; write [^[:${name}:]] instead`);
  return members;
}

/** What to do about a pattern JavaScript refused: inline flags other than a leading `(?i)` are named. */
export function refusalAdvice(source: string): string {
  const flags = /(?:^|[^\\])(\(\?[a-zA-Z]*-?[a-zA-Z]*\))/.exec(source)?.[1];
  if (flags === undefined) return "Fix the pattern, or pass literal=true to search for the text as written";
  return (
    `Inline flags such as ${flags} are not supported, only a leading (?i), which means ignoreCase=true: ` +
    "for a case-insensitive search pass ignoreCase=true; (?s) and (?m) are not needed, as every line is matched on its own"
  );
}
