import type { Command, ExecResult } from "just-bash";
import { GREP_MAX_PATTERN_CHARS } from "../domain/limits";

/** just-bash is loaded on first use (bash.ts). */
type DefineCommand = typeof import("just-bash").defineCommand;

/** Which pattern syntax a grep reads: GNU's -G (basic, the default), -E, -F or -P. */
type Syntax = "G" | "E" | "F" | "P";

/** grep's short options that take a value: the rest of their argument, or the next one. */
const VALUE_OPTIONS = new Set(["e", "f", "m", "A", "B", "C", "d", "D"]);
/** grep's long options that take a value as the next argument when not given with "=". */
const LONG_VALUE_OPTIONS = new Set([
  "--regexp",
  "--file",
  "--max-count",
  "--after-context",
  "--before-context",
  "--context",
  "--include",
  "--exclude",
  "--exclude-dir",
  "--label",
  "--binary-files",
  "--devices",
  "--directories",
  "--group-separator",
]);
/** Long options just-bash reads only as their short form. */
const LONG_AS_SHORT: Readonly<Record<string, string>> = {
  "--max-count": "-m",
  "--after-context": "-A",
  "--before-context": "-B",
  "--context": "-C",
};
/** Long options just-bash reads only with "=" (`--include=GLOB`). */
const LONG_WITH_EQUALS = new Set(["--include", "--exclude", "--exclude-dir"]);
const LONG_SYNTAX: Readonly<Record<string, Syntax>> = {
  "--basic-regexp": "G",
  "--extended-regexp": "E",
  "--fixed-strings": "F",
  "--perl-regexp": "P",
};

/** What a grep call passes to just-bash's grep, and what is done to its answer. */
export interface GrepCall {
  args: string[];
  /** -s: messages about files that cannot be read are dropped. */
  noMessages: boolean;
  /** -c with -m N: a count is at most N (just-bash counts every match). */
  countCap: number | null;
  /** Why the call is refused before just-bash's grep sees it, if it is. */
  refusal?: string;
}

/** Refused: just-bash matches in linear time (RE2), which has no back-references. */
const BACK_REFERENCE_REFUSAL =
  "back-references (\\1 to \\9) are not supported by this shell's grep, which matches in linear time; the grep tool takes them";

/**
 * `grep` (and `egrep`, `fgrep`) as just-bash has it, with its arguments rewritten where it reads
 * them differently from GNU grep (hunts 76 and 78), which was a silent wrong answer each time:
 * - each `-e` replaced the pattern before it, so `grep -e TODO -e FIXME` found only FIXME: the
 *   patterns are passed as one `-e`, one per line, which just-bash matches as alternatives, as GNU
 *   does; basic ones each in a group, so that a `$` or `^` in one keeps anchoring it;
 * - GNU's `\+` and `\?` in a basic pattern were a literal + and ?, so `grep 'https\?://'` found
 *   nothing: they are passed as the intervals `\{1,\}` and `\{0,1\}`; `\<` never matched: it is `\b`;
 * - option clusters just-bash refuses (`-ie PATTERN`, `-nA2`), `-y`, `-NUM`, `--include GLOB` and
 *   `--context N` are passed in forms it takes; `-s` drops the messages itself; `-G`,
 *   `--basic-regexp` and `--color` (there is no terminal) are dropped;
 * - `-l`/`-L` on standard input printed its lines: `-` is named as the file; `-c` with `-m N`
 *   counted past N: the count is capped.
 */
export function grepCommand(defineCommand: DefineCommand, name: "grep" | "egrep" | "fgrep"): Command {
  const syntax: Syntax = name === "egrep" ? "E" : name === "fgrep" ? "F" : "G";
  return defineCommand(name, async (args, ctx): Promise<ExecResult> => {
    if (!ctx.origCommand) return { stdout: "", stderr: `${name}: not available\n`, exitCode: 127 };
    const call = grepCall(args, syntax);
    if (call.refusal) return { stdout: "", stderr: `${name}: ${call.refusal}\n`, exitCode: 2 };
    const result = await ctx.origCommand(call.args);
    const stdout = call.countCap === null ? result.stdout : cappedCounts(result.stdout, call.countCap);
    return { ...result, stdout, stderr: call.noMessages ? "" : result.stderr };
  });
}

/** The arguments of a grep reading `syntax` by default, as just-bash's grep must get them to answer as GNU grep. */
export function grepCall(args: readonly string[], syntax: Syntax = "G"): GrepCall {
  const patterns: string[] = [];
  const out: string[] = [];
  const operands: number[] = [];
  let patternFile = false;
  let options = true;
  let noMessages = false;
  let maxCount: number | null = null;
  let count = false;
  let listsFiles = false;
  let recursive = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!options || arg === "-" || !arg.startsWith("-")) {
      operands.push(out.length);
      out.push(arg);
      continue;
    }
    if (arg === "--") {
      options = false;
      out.push(arg);
      continue;
    }
    // -NUM: NUM lines of context.
    if (/^-\d+$/.test(arg)) {
      out.push("-C", arg.slice(1));
      continue;
    }
    if (arg.startsWith("--")) {
      const equals = arg.indexOf("=");
      const option = equals < 0 ? arg : arg.slice(0, equals);
      if (option === "--color" || option === "--colour") continue;
      if (option === "--no-messages") {
        noMessages = true;
        continue;
      }
      if (option in LONG_SYNTAX) {
        syntax = LONG_SYNTAX[option]!;
        if (option === "--basic-regexp") continue;
      }
      if (option === "--count") count = true;
      if (option === "--files-with-matches" || option === "--files-without-match") listsFiles = true;
      if (option === "--recursive" || option === "--dereference-recursive") recursive = true;
      const takesNext = equals < 0 && LONG_VALUE_OPTIONS.has(option);
      if (takesNext && i + 1 >= args.length) {
        out.push(arg); // just-bash says the value is missing
        continue;
      }
      const value = equals >= 0 ? arg.slice(equals + 1) : takesNext ? args[++i]! : undefined;
      if (option === "--regexp" && value !== undefined) patterns.push(value);
      else if (option in LONG_AS_SHORT && value !== undefined) {
        out.push(LONG_AS_SHORT[option]!, value);
        if (option === "--max-count") maxCount = Number.parseInt(value, 10);
      } else if (LONG_WITH_EQUALS.has(option) && value !== undefined) out.push(`${option}=${value}`);
      else {
        if (option === "--file") patternFile = true;
        out.push(arg);
        if (takesNext) out.push(value!);
      }
      continue;
    }
    for (let k = 1; k < arg.length; k++) {
      const flag = arg[k]!;
      if (!VALUE_OPTIONS.has(flag)) {
        if (flag === "E" || flag === "F" || flag === "G" || flag === "P") syntax = flag;
        if (flag === "c") count = true;
        if (flag === "l" || flag === "L") listsFiles = true;
        if (flag === "r" || flag === "R") recursive = true;
        if (flag === "s") noMessages = true;
        // -G is the default and -s is done here, neither known to just-bash's grep; -y is -i.
        else if (flag !== "G") out.push(flag === "y" ? "-i" : `-${flag}`);
        continue;
      }
      const attached = arg.slice(k + 1);
      if (attached === "" && i + 1 >= args.length) {
        out.push(`-${flag}`); // just-bash says the value is missing
        break;
      }
      const value = attached !== "" ? attached : args[++i]!;
      if (flag === "e") patterns.push(value);
      else {
        if (flag === "f") patternFile = true;
        if (flag === "m") maxCount = Number.parseInt(value, 10);
        out.push(`-${flag}`, value);
      }
      break;
    }
  }
  const gnu = (pattern: string) => gnuPattern(pattern, syntax);
  const fromOperand = patterns.length === 0 && !patternFile;
  if (fromOperand && operands.length > 0) out[operands[0]!] = gnu(out[operands[0]!]!);
  // Standard input named as `-`, so -l and -L name it as GNU does, "(standard input)".
  const files = operands.length - (fromOperand ? 1 : 0);
  if (listsFiles && files === 0 && !recursive && (patterns.length > 0 || patternFile || operands.length > 0)) out.push("-");
  const countCap = count && maxCount !== null && Number.isFinite(maxCount) && maxCount >= 0 ? maxCount : null;
  const given = fromOperand ? (operands.length > 0 ? out[operands[0]!]!.length : 0) : patterns.reduce((n, p) => n + p.length, 0);
  if ((syntax === "G" || syntax === "E") && given > GREP_MAX_PATTERN_CHARS) {
    const refusal = `a regular expression of ${given} characters is longer than this shell takes (${GREP_MAX_PATTERN_CHARS}); search for fixed strings with -F, or narrow the pattern`;
    return { args: out, noMessages, countCap, refusal };
  }
  const regexes = syntax === "F" ? [] : fromOperand ? operands.slice(0, 1).map((at) => out[at]!) : patterns;
  if (regexes.some(hasBackReference)) return { args: out, noMessages, countCap, refusal: BACK_REFERENCE_REFUSAL };
  if (patterns.length === 0) return { args: out, noMessages, countCap };
  // Several basic patterns are joined as alternatives, where a `$` is an anchor only at the end: each in a group.
  const grouped = syntax === "G" && patterns.length > 1;
  const joined = patterns.map((p) => (grouped ? `\\(${gnu(p)}\\)` : gnu(p))).join("\n");
  return { args: ["-e", joined, ...out], noMessages, countCap };
}

/** Counts as `-c` prints them (`N`, or `file:N`), each at most `cap`. */
function cappedCounts(stdout: string, cap: number): string {
  return stdout.replace(/(^|:)(\d+)$/gm, (_, before: string, n: string) => `${before}${Math.min(Number(n), cap)}`);
}

/** A pattern of `syntax` as just-bash reads GNU's: basic repetitions rewritten, `\<` as `\b`. */
function gnuPattern(pattern: string, syntax: Syntax): string {
  if (syntax === "G") return wordStarts(gnuBasicRepeats(pattern));
  if (syntax === "E") return wordStarts(pattern);
  return pattern;
}

/** `\1` to `\9` outside bracket expressions (in one, `[\1]` is a backslash and a 1), as the sed check of the patch reads them. */
function hasBackReference(pattern: string): boolean {
  const closers = lastClosers(pattern);
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === "[") i = bracketEnd(pattern, i, closers) - 1;
    else if (pattern[i] === "\\" && /[1-9]/.test(pattern[++i] ?? "")) return true;
  }
  return false;
}

/** `\<` (the start of a word, which just-bash never matched) as `\b`, outside bracket expressions. */
function wordStarts(pattern: string): string {
  if (!pattern.includes("\\<")) return pattern;
  const closers = lastClosers(pattern);
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "[") {
      const end = bracketEnd(pattern, i, closers);
      out += pattern.slice(i, end);
      i = end - 1;
    } else if (c === "\\" && i + 1 < pattern.length) {
      out += pattern[i + 1] === "<" ? "\\b" : pattern.slice(i, i + 2);
      i++;
    } else out += c;
  }
  return out;
}

/**
 * A basic (BRE) pattern with GNU's `\+` and `\?` written as the intervals just-bash reads,
 * `\{1,\}` and `\{0,1\}`. Where GNU reads them as plain characters (at the start of the pattern,
 * a group or an alternative, or after `^` there) they become the plain `+` and `?` a basic pattern
 * reads as themselves; inside a bracket expression they are left alone, and so are they after
 * another repetition (`a*\+`), which an interval cannot follow here.
 */
export function gnuBasicRepeats(pattern: string): string {
  const closers = lastClosers(pattern);
  let out = "";
  /** Where a repetition would have nothing to repeat. */
  let start = true;
  /** The last token was a repetition. */
  let repeated = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "[") {
      const end = bracketEnd(pattern, i, closers);
      out += pattern.slice(i, end);
      i = end - 1;
      start = repeated = false;
      continue;
    }
    if (c === "\\" && i + 1 < pattern.length) {
      const next = pattern[++i]!;
      if (next === "+" || next === "?") {
        if (start) out += next;
        else if (repeated) out += `\\${next}`;
        else out += next === "+" ? "\\{1,\\}" : "\\{0,1\\}";
        repeated = !start && !repeated;
        start = false;
        continue;
      }
      if (next === "{") {
        // Searched only when one is left: from every "\{" of a long pattern with none, it was quadratic (hunt 80).
        const close = i < closers.interval ? pattern.indexOf("\\}", i + 1) : -1;
        const end = close < 0 ? i + 1 : close + 2;
        out += `\\${pattern.slice(i, end)}`;
        i = end - 1;
        repeated = close >= 0;
        start = false;
        continue;
      }
      out += `\\${next}`;
      start = next === "(" || next === "|";
      repeated = false;
      continue;
    }
    out += c;
    if (c === "^" && start) continue;
    repeated = c === "*" && !start;
    start = false;
  }
  return out;
}

/** Where the last of each closing mark is in a pattern: a search for one past it finds nothing. */
interface Closers {
  interval: number;
  ":": number;
  "=": number;
  ".": number;
}

function lastClosers(pattern: string): Closers {
  return {
    interval: pattern.lastIndexOf("\\}"),
    ":": pattern.lastIndexOf(":]"),
    "=": pattern.lastIndexOf("=]"),
    ".": pattern.lastIndexOf(".]"),
  };
}

/** Where the bracket expression opening at `open` ends (past its "]"), or the pattern's end. */
function bracketEnd(pattern: string, open: number, closers: Closers): number {
  let i = open + 1;
  if (pattern[i] === "^") i++;
  if (pattern[i] === "]") i++;
  while (i < pattern.length && pattern[i] !== "]") {
    // [:alpha:], [=e=] and [.-.] hold a "]" of their own.
    const kind = pattern[i] === "[" ? pattern[i + 1] : undefined;
    if ((kind === ":" || kind === "=" || kind === ".") && i + 2 <= closers[kind]) {
      const close = pattern.indexOf(`${kind}]`, i + 2);
      if (close >= 0) {
        i = close + 2;
        continue;
      }
    }
    i++;
  }
  return Math.min(i + 1, pattern.length);
}
