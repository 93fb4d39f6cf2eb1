import { RE2JS } from "re2js";
import { GREP_RE2_MAX_INSTRUCTIONS, GREP_V8_MAX_CHOICES, GREP_V8_MAX_WAYS } from "../domain/limits";
import { namesGroups } from "../workspace/search/regex-parser";
import { quotedPattern, quotedRefusal } from "./regex-source";
import { ToolError } from "./tool";

/** Why a pattern runs on RE2 (regex-shape.ts judges it), as its refusals say. */
const WHY_ON_RE2 = {
  group: {
    shape: "repeats a group that itself repeats or alternates",
    risk: "exponential time",
    otherwise: "without the nested repetition",
    tooLarge: "Write smaller counted repetitions ({n}), or fewer of them",
  },
  repeats: {
    shape: "has unbounded repetitions next to each other that can match the same characters (as in `a*a*` or `\\s*\\s+`)",
    risk: "time growing with a power of the line's length",
    otherwise: "with one repetition there",
    tooLarge: "Write smaller counted repetitions ({n}), or fewer of them",
  },
  ways: {
    shape: `has items next to each other (bounded repetitions, optional items, alternatives) that can share a stretch of a line in more than ${GREP_V8_MAX_WAYS} ways (as in \`\\w{0,40}\\w{0,40}\\w{0,40}\` or \`(?:a|\\w)?(?:a|\\w)?...\`)`,
    risk: "time growing with their product",
    otherwise: "with fewer of them in a row",
    tooLarge: "Write smaller counted repetitions ({n}), or fewer of them",
  },
  choices: {
    shape: `has more than ${GREP_V8_MAX_CHOICES} repeated items and groups of alternatives in a row`,
    risk: "V8 seconds to compile",
    otherwise: "with fewer of them in a row",
    tooLarge: "Write fewer of them in a row, or search for the parts in separate calls",
  },
} as const;

/** The pattern on RE2 (linear time), or invalid_regex naming what RE2 cannot do. */
export function linearTimeRegex(
  pattern: string,
  source: string,
  ignoreCase: boolean,
  why: keyof typeof WHY_ON_RE2,
): { test(line: string): boolean } {
  let re2: RE2JS;
  try {
    // RE2 reads \1 as an octal escape: a back-reference would silently mean something else.
    if (backReference(source)) throw new Error("back-references are not supported");
    re2 = RE2JS.compile(re2Syntax(source), ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    const { shape, risk, otherwise } = WHY_ON_RE2[why];
    throw new ToolError(
      "invalid_regex",
      `regular expression ${quotedPattern(pattern)} ${shape}, which can take ${risk}; such patterns run on RE2, which refuses it (${quotedRefusal((err as Error).message)}): rewrite it without look-arounds or back-references, or ${otherwise}`,
    );
  }
  const instructions = re2.programSize();
  if (instructions > GREP_RE2_MAX_INSTRUCTIONS) {
    throw new ToolError(
      "invalid_regex",
      `regular expression ${quotedPattern(pattern)} ${WHY_ON_RE2[why].shape}, so it runs on RE2, where it compiles to ${instructions} instructions, more than ${GREP_RE2_MAX_INSTRUCTIONS}: RE2's time per character grows with them. ${WHY_ON_RE2[why].tooLarge}`,
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
function re2Syntax(source: string): string {
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

/** Whether the source holds a back-reference: `\1` to `\9`, or `\k<name>` where the pattern names a group. */
function backReference(source: string): boolean {
  return (namesGroups(source) ? /(?:^|[^\\])(?:\\\\)*\\(?:[1-9]|k<)/ : /(?:^|[^\\])(?:\\\\)*\\[1-9]/).test(source);
}
