/** True for a plain object (as `JSON.parse` makes them): not null, not an array. Narrows to a record of unknowns. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Lone UTF-16 surrogates (in `u` mode a valid pair is one code point, so only unpaired halves match). */
const LONE_SURROGATES = /\p{Cs}/gu;

/**
 * `text` with each lone surrogate replaced by U+FFFD, as a UTF-8 encoder would write it: what is
 * stored then reads back the same, and an export of it imports again (the API refuses lone halves).
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATES, "\uFFFD");
}

/**
 * A value as `JSON.parse` makes them, with every string and key made well-formed, in place (a key
 * that changes moves to the end). Iterative: the value may be as deep as the parser allowed.
 */
export function wellFormedJson<T>(value: T): T {
  if (typeof value === "string") return wellFormed(value) as T;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const child = record[key];
      const fixedKey = wellFormed(key);
      if (fixedKey !== key) delete record[key];
      record[fixedKey] = typeof child === "string" ? wellFormed(child) : child;
      stack.push(child);
    }
  }
  return value;
}

/** `text` in at most `maxChars` UTF-16 units, cut with "…" between characters (never inside a surrogate pair). */
export function clipText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${sliceWhole(text, maxChars - 1)}…`;
}

/** The first `end` UTF-16 units of `text`, one fewer where the cut would split a surrogate pair (half an emoji cannot be stored or sent). */
export function sliceWhole(text: string, end: number): string {
  if (end <= 0) return "";
  const last = text.charCodeAt(end - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? end - 1 : end);
}

/** `text` from UTF-16 unit `start` on, one later where the cut would split a surrogate pair. */
export function sliceWholeFrom(text: string, start: number): string {
  const first = text.charCodeAt(start);
  return text.slice(first >= 0xdc00 && first <= 0xdfff && start > 0 ? start + 1 : start);
}

/**
 * Whether JSON text nests arrays and objects more than `max` levels deep (the outermost is level 1),
 * strings skipped. Checked before `JSON.parse` of a large line: the parser builds every level before
 * a check of the value could refuse it (16 MiB of `[` took 4.5 s). Malformed text is left for the
 * parser to name.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && escaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) return false;
      i = end;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) depth--;
  }
  return false;
}

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;

/** Whether the character at `at` follows an odd run of backslashes. */
function escaped(text: string, at: number): boolean {
  let backslashes = 0;
  for (let j = at - 1; j >= 0 && text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
  return backslashes % 2 === 1;
}
