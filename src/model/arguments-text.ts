import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE } from "../domain/json";

/**
 * A tool call's argument text as its fragments arrive, with what the stream reader asks of it after
 * each one, answered in time linear in the text: whether it holds anything but whitespace, and whether
 * it is one whole JSON object (what `JSON.parse(text.trim())` of a text ending in "}" says, parsed
 * once, when the object's last brace comes). Asking the text itself after each fragment copied all of
 * it each time (trim flattens a string grown by `+=`): a call of 800,000 characters streamed in
 * 16-character fragments, each repeating the call's name, took 64 s to read (hunt 93).
 */
export class ArgumentsText {
  private value = "";
  /** Brackets open outside strings, and where a string is (after a backslash in it). */
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Something but whitespace came (whitespace as `trim` reads it). */
  private started = false;
  /** The text cannot be one whole object whatever follows: it does not start with "{", or goes on past its end. */
  private broken = false;
  /** Null until the top-level object closes; then whether the text to there parsed. */
  private parsed: boolean | null = null;

  get text(): string {
    return this.value;
  }

  /** Whether the text holds anything but whitespace. */
  get hasContent(): boolean {
    return this.started;
  }

  /** Whether the text is blank or one whole JSON object (with whitespace around it). */
  get isWholeObject(): boolean {
    return !this.started || (this.parsed === true && !this.broken);
  }

  append(fragment: string): void {
    this.value += fragment;
    if (this.broken) return;
    let closed = false;
    for (let i = 0; i < fragment.length; i++) {
      const c = fragment.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === QUOTE) this.inString = false;
        continue;
      }
      if (isWhitespace(c)) continue;
      const first = !this.started;
      this.started = true;
      if (this.parsed !== null || (first && c !== OPEN_BRACE)) {
        this.broken = true;
        return;
      }
      if (c === QUOTE) this.inString = true;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) this.depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        this.depth--;
        if (this.depth === 0) closed = true;
        if (this.depth <= 0) this.parsed = false;
      }
    }
    // Once, at the close: what follows it can only be whitespace, which changes nothing.
    if (closed) this.parsed = isCompleteJson(this.value);
  }
}

/** What `trim` removes: `\s`. */
function isWhitespace(code: number): boolean {
  if (code === 0x20 || (code >= 0x09 && code <= 0x0d)) return true;
  return code >= 0xa0 && /\s/.test(String.fromCharCode(code));
}

/** True when `text` already holds a whole JSON object, or nothing but whitespace (cheap test first: objects end with `}`). */
export function isCompleteJson(text: string): boolean {
  const trimmed = text.trim();
  if (trimmed === "") return true;
  if (!trimmed.endsWith("}")) return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}
