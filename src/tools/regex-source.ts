import { namesGroups } from "../workspace/search/regex-parser";

// A JavaScript regex source read as written: where its classes, escapes, groups and quantifiers end.

/** Characters of a pattern an error message quotes: one of 16 Ki characters made a message that long. */
const QUOTED_PATTERN_CHARS = 200;

/** A pattern as error messages quote it: in JSON quotes, its first 200 characters and how many more. */
export function quotedPattern(pattern: string): string {
  if (pattern.length <= QUOTED_PATTERN_CHARS) return JSON.stringify(pattern);
  return `${JSON.stringify(pattern.slice(0, QUOTED_PATTERN_CHARS))}${more(pattern)}`;
}

/** An engine's refusal as a message quotes it: it names the part it refuses, which can be most of a long pattern, rewritten. */
export function quotedRefusal(message: string): string {
  return message.length <= QUOTED_PATTERN_CHARS ? message : `${message.slice(0, QUOTED_PATTERN_CHARS)}${more(message)}`;
}

function more(text: string): string {
  return `… (${text.length - QUOTED_PATTERN_CHARS} more characters)`;
}

/** `text` as a regex source that matches exactly it. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Where the class opened at `open` ends (its "]"): in JavaScript at the first unescaped "]" ("[]" is empty, "[^]" any character). */
export function classEnd(source: string, open: number): number {
  let i = open + (source[open + 1] === "^" ? 2 : 1);
  for (; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
  return i;
}

/**
 * The escape at `i` (a backslash there) as written, read without the u flag: `\x41`, `\u0041`, `\cJ`,
 * `\12`, a back-reference `\k<name>` (in a pattern that names a group; else `\k` is the letter k,
 * hunt 94), or one character (`\u{41}` and `\p{L}` are "u" and "p", then text or a count).
 */
export function escapeAt(source: string, i: number): string {
  if (source[i + 1] === "k") {
    const end = source[i + 2] === "<" && namesGroupsMemo(source) ? source.indexOf(">", i) : -1;
    return end < 0 ? "\\k" : source.slice(i, end + 1);
  }
  return ESCAPE.exec(source.slice(i, i + 64))?.[0] ?? "\\";
}

/** `namesGroups` of the source last asked about: its escapes are read one after the other. */
let lastAsked = { source: "", namesGroups: false };
function namesGroupsMemo(source: string): boolean {
  if (source !== lastAsked.source) lastAsked = { source, namesGroups: namesGroups(source) };
  return lastAsked.namesGroups;
}

// `\0` takes up to two more octal digits (Annex B: `\033` is ESC, not NUL and "33", hunt 87); `\1`-`\9`
// take every digit after them (a back-reference, or an octal escape and plain digits: counting them
// in the escape only ever leaves text out of `requiredText`).
const ESCAPE = /^\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|c[A-Za-z]|0[0-7]{0,2}|[1-9]\d*|[\s\S])/;

/** Where the group opened at `open` closes (its ")"), or the source's end. */
export function groupEnd(source: string, open: number): number {
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

/** The most times the quantifier at `i` repeats (Infinity when unbounded), or null when there is none. */
export function quantifierAt(source: string, i: number): number | null {
  const c = source[i];
  if (c === "*" || c === "+") return Number.POSITIVE_INFINITY;
  if (c === "?") return 1;
  const braced = c === "{" ? /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i)) : null;
  if (!braced) return null;
  if (braced[2] === undefined) return Number(braced[1]);
  return braced[3] === "" ? Number.POSITIVE_INFINITY : Number(braced[3]);
}

/** The fewest times the quantifier at `i` repeats. */
export function leastAt(source: string, i: number): number {
  const c = source[i];
  if (c === "*" || c === "?") return 0;
  if (c === "+") return 1;
  return Number(/^\{(\d+)/.exec(source.slice(i))?.[1] ?? 1);
}

/** Past the quantifier at `i` (and its lazy `?`). */
export function afterQuantifier(source: string, i: number): number {
  const braced = source[i] === "{" ? /^\{\d+(,\d*)?\}/.exec(source.slice(i)) : null;
  const next = i + (braced ? braced[0].length : 1);
  return source[next] === "?" ? next + 1 : next;
}

/** The end of the pattern's first item when it is one character (a character, `.`, a class, `\w`, `\x41` ...), else -1. */
export function leadingAtomEnd(source: string): number {
  const c = source[0];
  if (c === undefined || "^$()|*+?{}".includes(c)) return -1;
  if (c === "[") return classEnd(source, 0) + 1;
  if (c !== "\\") return 1;
  const written = escapeAt(source, 0);
  // Not an assertion (\b), a back-reference (\1, \k<a>) or an escape that is not one character.
  return /^\\(?:[dDwWsS]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|c[A-Za-z]|0|[^0-9A-Za-z])$/.test(written) ? written.length : -1;
}

export function hasTopLevelAlternation(source: string): boolean {
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
