import type { Command, ExecResult } from "just-bash";

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
const LONG_SYNTAX: Readonly<Record<string, Syntax>> = {
  "--basic-regexp": "G",
  "--extended-regexp": "E",
  "--fixed-strings": "F",
  "--perl-regexp": "P",
};

/**
 * `grep` (and `egrep`, `fgrep`) as just-bash has it, with its arguments rewritten where it reads
 * them differently from GNU grep (hunt 76), which was a silent wrong answer each time:
 * - each `-e` replaced the pattern before it, so `grep -e TODO -e FIXME` found only FIXME: the
 *   patterns are passed as one `-e`, one per line, which just-bash matches as alternatives, as GNU does;
 * - GNU's `\+` and `\?` in a basic pattern were a literal + and ?, so `grep 'https\?://'` found
 *   nothing: they are passed as the intervals `\{1,\}` and `\{0,1\}`;
 * - option clusters just-bash refuses (`-ie PATTERN`, `-nA2`) are passed as separate options, and
 *   `-G`, `--basic-regexp` and `--color` (there is no terminal) are dropped.
 */
export function grepCommand(defineCommand: DefineCommand, name: "grep" | "egrep" | "fgrep"): Command {
  const syntax: Syntax = name === "egrep" ? "E" : name === "fgrep" ? "F" : "G";
  return defineCommand(name, async (args, ctx): Promise<ExecResult> => {
    if (!ctx.origCommand) return { stdout: "", stderr: `${name}: not available\n`, exitCode: 127 };
    return ctx.origCommand(grepArgs(args, syntax));
  });
}

/** `args` of a grep reading `syntax` by default, as just-bash's grep reads them the way GNU grep does. */
export function grepArgs(args: readonly string[], syntax: Syntax = "G"): string[] {
  const patterns: string[] = [];
  const out: string[] = [];
  /** Where the first operand is in `out`: the pattern, when no -e or -f gave one. */
  let firstOperand = -1;
  let patternFile = false;
  let options = true;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!options || arg === "-" || !arg.startsWith("-")) {
      if (firstOperand < 0) firstOperand = out.length;
      out.push(arg);
      continue;
    }
    if (arg === "--") {
      options = false;
      out.push(arg);
      continue;
    }
    if (arg.startsWith("--")) {
      const equals = arg.indexOf("=");
      const option = equals < 0 ? arg : arg.slice(0, equals);
      if (option === "--color" || option === "--colour") continue;
      if (option in LONG_SYNTAX) {
        syntax = LONG_SYNTAX[option]!;
        if (option === "--basic-regexp") continue;
      }
      const takesNext = equals < 0 && LONG_VALUE_OPTIONS.has(option) && i + 1 < args.length;
      if (option === "--regexp" && (equals >= 0 || takesNext)) {
        patterns.push(equals >= 0 ? arg.slice(equals + 1) : args[++i]!);
        continue;
      }
      if (option === "--file") patternFile = true;
      out.push(arg);
      if (takesNext) out.push(args[++i]!);
      continue;
    }
    for (let k = 1; k < arg.length; k++) {
      const flag = arg[k]!;
      if (!VALUE_OPTIONS.has(flag)) {
        if (flag === "E" || flag === "F" || flag === "G" || flag === "P") syntax = flag;
        // -G is the default, which just-bash's grep does not know as an option.
        if (flag !== "G") out.push(`-${flag}`);
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
        out.push(`-${flag}`, value);
      }
      break;
    }
  }
  const basic = syntax === "G";
  if (patterns.length > 0) return ["-e", patterns.map((p) => (basic ? gnuBasicRepeats(p) : p)).join("\n"), ...out];
  if (basic && !patternFile && firstOperand >= 0) out[firstOperand] = gnuBasicRepeats(out[firstOperand]!);
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
  let out = "";
  /** Where a repetition would have nothing to repeat. */
  let start = true;
  /** The last token was a repetition. */
  let repeated = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "[") {
      const end = bracketEnd(pattern, i);
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
        const close = pattern.indexOf("\\}", i + 1);
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

/** Where the bracket expression opening at `open` ends (past its "]"), or the pattern's end. */
function bracketEnd(pattern: string, open: number): number {
  let i = open + 1;
  if (pattern[i] === "^") i++;
  if (pattern[i] === "]") i++;
  while (i < pattern.length && pattern[i] !== "]") {
    // [:alpha:], [=e=] and [.-.] hold a "]" of their own.
    const kind = pattern[i] === "[" ? pattern[i + 1] : undefined;
    if (kind === ":" || kind === "=" || kind === ".") {
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
