import { plainTextFinder } from "./plain-text-finder";
import { escapeRegExp } from "./regex-source";
import { ToolError } from "./tool";

// Finders of a text in a file's text: plain, folded as V8's `i` folds, or a run of one-character items.

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
    throw new ToolError(
      "invalid_regex",
      `regular expression too large to run (${withoutSource((err as Error).message)}): write a shorter pattern`,
    );
  }
  regex.lastIndex = 0;
  return regex;
}

/** V8's message about a pattern without the pattern it quotes whole (`Invalid regular expression: /.../: why`): why. */
export function withoutSource(message: string): string {
  return message.replace(/^Invalid regular expression: \/[\s\S]*\/[a-z]*: /, "");
}

/** Finds a plain text from a position on: the index where it starts, or -1. */
export interface TextFinder {
  readonly length: number;
  find(text: string, from: number): number;
}

export function textFinder(text: string, ignoreCase: boolean): TextFinder {
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
export function regexFinder(source: string, length: number, ignoreCase: boolean): TextFinder {
  const regex = compiledRegExp(source, ignoreCase ? "gi" : "g");
  return {
    length,
    find: (haystack, from) => {
      regex.lastIndex = from;
      return regex.exec(haystack)?.index ?? -1;
    },
  };
}
