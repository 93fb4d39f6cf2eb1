import { clipText, MAX_PREVENTION_HINT_CHARS } from "../domain";
import { artifactPath } from "./artifacts";
import { JUDGE_IDENTIFIER } from "./builtin-judges";
import type { FailedTurnCase } from "./failed-turn-case";

/**
 * One imperative sentence per failure kind, filled from the case's facts (tool, paths, judge) and
 * never from raw logs: what the next run should do so the failure does not recur.
 */
export interface HintFacts {
  judgeName: string;
  /** The harness's own judge (a tool or model failure it saw), not a verdict posted from outside. */
  builtIn: boolean;
  failureKind: string;
  tool: string | null;
  paths: string[];
}

/**
 * `text` on one line: line breaks, other control characters and format characters (zero-width,
 * bidi overrides) become `\uXXXX`. A hint is one bullet of the brief, and what fills it must not
 * add lines to a system prompt or hide text in it.
 */
export function oneLine(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, (c) => {
    const code = c.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * Letters and digits of the alphabets file names are mostly written in (each one must also be a
 * letter or a digit), leaving out those drawn as punctuation or as nothing: the Latin clicks `ǀ ǁ ǂ ǃ`,
 * the Arabic high hamza, the CJK strokes `丨 丶 丿` and the Hangul fillers.
 */
const SHOWN_LETTERS = [
  "\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u01BF\\u01C4-\\u024F\\u1E00-\\u1EFF", // Latin with accents, ẞ, Vietnamese
  "\\u0386\\u0388-\\u03FF\\u1F00-\\u1FFF", // Greek, polytonic
  "\\u0400-\\u052F", // Cyrillic
  "\\u05D0-\\u05EA", // Hebrew
  "\\u0620-\\u064A\\u0660-\\u0669\\u0671-\\u0673\\u0675-\\u06D3\\u06F0-\\u06F9", // Arabic, Persian, Urdu
  "\\u0904-\\u0939\\u0958-\\u0961\\u0966-\\u096F", // Devanagari
  "\\u0E01-\\u0E30\\u0E32\\u0E33\\u0E40-\\u0E45\\u0E50-\\u0E59", // Thai
  "\\u3005\\u3041-\\u3096\\u30A1-\\u30FA\\u30FC\\uFF66-\\uFF9F", // kana, half-width too
  "\\u3400-\\u4DBF\\u4E00-\\u4E27\\u4E29-\\u4E35\\u4E37-\\u4E3E\\u4E40-\\u9FFF\\uF900-\\uFAFF\\u{20000}-\\u{2FA1F}", // CJK
  "\\u1100-\\u115E\\u1161-\\u11FF\\u3131-\\u3163\\u3165-\\u318E\\uAC00-\\uD7A3", // Hangul, its jamo too (macOS names)
].join("");

/**
 * Marks drawn on the letter before them (accents, points, vowel signs), leaving out those drawn as
 * punctuation or as nothing: a comma above (U+0313-U+0315), a slash or stroke through (U+0334-U+0338),
 * the grapheme joiner U+034F, Devanagari's visarga `ः` (a colon), variation selectors.
 */
const SHOWN_MARKS = [
  "\\u0300-\\u0312\\u0316-\\u0333\\u0339-\\u034E\\u0350-\\u036F",
  "\\u05B0-\\u05BD\\u05BF\\u05C1\\u05C2\\u05C4\\u05C5\\u05C7",
  "\\u064B-\\u065F\\u0670",
  "\\u0900-\\u0902\\u093A-\\u094F\\u0951-\\u0957\\u0962\\u0963",
  "\\u0E31\\u0E34-\\u0E3A\\u0E47-\\u0E4E",
  "\\u3099\\u309A",
].join("");

/**
 * Characters a path segment is shown with as it is: ASCII letters and digits, `_ . - @ + ~ ( ) [ ]`,
 * SHOWN_LETTERS, and SHOWN_MARKS after a letter. A segment with any other character is shown as `…`,
 * keeping a plain extension: a file name is workspace data, and such a name could read as a sentence
 * of the prompt: a space, a quote, a backtick, `;`, `<`, a control or format character, and letters
 * or marks drawn blank or as punctuation (hunts 98, 100 and 102: the Hangul filler U+3164 as spaces,
 * `ˋ` U+02CB as a backtick, `ǃ` `ꞌ` `ꓽ` `ᐸ` `ᐳ` as `! ' : < >`, `ः` as a colon).
 */
const SHOWN_CHARACTER = `[A-Za-z0-9_.@+~()[\\]-]|(?=[\\p{L}\\p{N}])[${SHOWN_LETTERS}]`;
const PLAIN_SEGMENT = new RegExp(`^(?:${SHOWN_CHARACTER})(?:${SHOWN_CHARACTER}|(?<=[\\p{L}\\p{N}\\p{M}])[${SHOWN_MARKS}])*$`, "u");
const PLAIN_EXTENSION = /\.[A-Za-z0-9]{1,10}$/;

/** Widths paths are shortened to, in turn, until the hint fits: at most the first even when it does. */
const PATH_WIDTHS = [80, 40, 20];

/** Tools that only look: a verdict blamed on one judged what the run concluded, not a change. */
const READING_TOOLS = ["read", "grep", "find", "ls"];

/** Data in a hint: in backticks, which what is shown can never hold (see PLAIN_SEGMENT and JUDGE_IDENTIFIER). */
const data = (text: string) => `\`${text}\``;

/** A path as a hint shows it: plain segments as they are, others as `…`, at most `width` characters (its end kept). */
function shownPath(path: string, width: number): string {
  const segments = path.split("/").map((s) => (PLAIN_SEGMENT.test(s) ? s : `…${PLAIN_EXTENSION.exec(s)?.[0] ?? ""}`));
  return data(keepEnd(segments.join("/"), width));
}

/** A name (a judge's, a tool's, a failure kind) in backticks when it is a plain identifier, else `otherwise`. */
function shownName(name: string | null, otherwise: string): string {
  return name !== null && JUDGE_IDENTIFIER.test(name) ? data(name) : otherwise;
}

/** The paths of a hint: the first three, then how many more. */
function list(paths: string[], width: number): string {
  if (paths.length === 0) return "the files it names";
  const shown = paths.slice(0, 3).map((p) => shownPath(p, width));
  return paths.length > 3 ? `${shown.join(", ")} and ${paths.length - 3} more` : shown.join(", ");
}

/** A hint's facts as they are shown: every one of them quoted as data or replaced by plain words. */
interface Shown {
  paths: string;
  count: number;
  tool: (otherwise: string) => string;
  /** Whether the tool is one of `names`: it picks the sentence, and is never shown itself. */
  toolIn: (...names: string[]) => boolean;
  judge: string;
  kind: string;
}

const TEMPLATES: ReadonlyMap<string, (f: Shown) => string> = new Map([
  ["not_found", (f) => `Check that ${f.paths} exists (with ls or find) before calling ${f.tool("a tool")} on it.`],
  ["is_directory", (f) => `Treat ${f.paths} as a directory: list it with ls instead of calling ${f.tool("read")} on it.`],
  ["not_a_directory", (f) => `Do not put files under ${f.paths}: part of that path is a file.`],
  ["no_match", (f) => `Read ${f.paths} again right before editing it, and copy the text to replace exactly.`],
  ["ambiguous_match", (f) => `Give edit a longer oldText that occurs exactly once in ${f.paths}.`],
  ["no_change", (f) => `Make sure an edit of ${f.paths} actually changes the text.`],
  ["overlapping_edits", (f) => `Give each edit of ${f.paths} in one call its own text: edits must not overlap.`],
  ["binary_file", (f) => `Do not read ${f.paths} as text: it is a binary file.`],
  ["file_too_large", (f) => `Keep ${f.paths} under the file size limit.`],
  ["content_too_large", (f) => `Keep what you write to ${f.paths} under the file size limit.`],
  ["invalid_regex", () => "Escape regular-expression characters in grep patterns, or search for a literal."],
  ["invalid_glob", () => "Use a valid glob pattern with find."],
  [
    "offset_out_of_range",
    (f) =>
      f.toolIn("grep", "find", "ls")
        ? `Call ${f.tool("it")} with an offset within the results it reported${f.count > 0 ? ` on ${f.paths}` : ""}: its notice names the offset to continue from.`
        : `Read ${f.paths} from an offset inside the file (check its length first).`,
  ],
  ["exit_status", (f) => `Check the command's output before relying on it: it exited with an error${f.count > 0 ? ` on ${f.paths}` : ""}.`],
  [
    "command_not_found",
    () => "Use only the commands the bash tool's description lists: a command the failed attempt called does not exist in this shell.",
  ],
  ["bash_timeout", () => "Keep bash commands short: avoid commands that run longer than the bash timeout."],
  ["write_not_allowed", () => "Do not call write or edit in a read-only run: describe the change instead."],
  ["bash_not_allowed", () => "Do not call bash unless the run allows it: use read, grep, find and ls."],
  ["path_escape", () => "Use paths relative to the workspace root: never absolute paths or .. that leave it."],
  ["path_too_long", () => "Use paths shorter than the path length limit."],
  ["unknown_tool", () => "Call only the tools this run offers."],
  ["invalid_arguments", (f) => `Call ${f.tool("tools")} with exactly the arguments its schema describes.`],
  ["tool_budget_exhausted", () => "Plan your tool calls: batch searches and read only what you need, within the tool budget."],
  ["max_turns_reached", () => "Answer within the turn budget: plan the steps first and stop when the question is answered."],
  ["run_timeout", () => "Finish within the run's time budget: avoid long searches and commands."],
  ["output_too_large", () => "Keep answers and written files under the output limit; split large files into several writes."],
  ["context_overflow", () => "Read only the parts of files you need (use offset and limit), to keep the conversation small."],
]);

/**
 * The hint for a failure; a verdict from an external judge names the judge and the artifacts. Every
 * fact in it is data from a past run, shown in backticks (a path at most 80 characters, its end kept;
 * a name only when it is a plain identifier), or replaced by plain words. At most
 * MAX_PREVENTION_HINT_CHARS: long paths are shortened further until it fits, and past that it is cut.
 */
export function preventionHint(facts: HintFacts): string {
  let hint = "";
  for (const width of PATH_WIDTHS) {
    hint = oneLine(hintOf(facts, width));
    if (hint.length <= MAX_PREVENTION_HINT_CHARS) return hint;
  }
  return clipText(hint, MAX_PREVENTION_HINT_CHARS);
}

/**
 * A case's hint as written today, from its facts: what a brief bullet and a promoted memory rule show,
 * so a hint stored before today's quoting rules (or altered in storage) is never shown as it was.
 * The same text as the stored hint of a case built today.
 */
export function caseHint(c: FailedTurnCase): string {
  return preventionHint({
    judgeName: c.origin.judgeName,
    builtIn: c.origin.builtIn,
    failureKind: c.origin.failureKind,
    tool: c.applicability.tools[0] ?? null,
    paths: c.artifactRefs.map(artifactPath).filter((p): p is string => p !== null && p !== ""),
  });
}

/** `text` in at most `width` UTF-16 units, its end kept after "…/" (from a directory boundary when one is near); pairs stay whole. */
export function keepEnd(text: string, width: number): string {
  if (text.length <= width) return text;
  const chars = Array.from(text);
  const tail: string[] = [];
  let units = 2;
  for (let i = chars.length - 1; i >= 0 && units + chars[i]!.length <= width; i--) {
    tail.unshift(chars[i]!);
    units += chars[i]!.length;
  }
  const kept = tail.join("");
  const slash = kept.indexOf("/");
  return `…/${slash >= 0 && slash < kept.length - 1 ? kept.slice(slash + 1) : kept}`;
}

function hintOf(facts: HintFacts, width: number): string {
  const shown: Shown = {
    paths: list(facts.paths, width),
    count: facts.paths.length,
    tool: (otherwise) => shownName(facts.tool, otherwise),
    toolIn: (...names) => facts.tool !== null && names.includes(facts.tool),
    judge: shownName(facts.judgeName, "the check that failed"),
    kind: shownName(facts.failureKind, ""),
  };
  const template = TEMPLATES.get(facts.failureKind);
  if (template) return template(shown);
  if (facts.failureKind === "external" || !facts.builtIn) {
    // A case without paths reaches only a retry of the failed run.
    if (shown.count === 0) return `Check your work against ${shown.judge} before you finish: it failed the attempt this run retries.`;
    if (shown.toolIn(...READING_TOOLS))
      return `Check what you conclude from ${shown.paths} against ${shown.count === 1 ? "it" : "them"} before you answer: ${shown.judge} failed a run that read ${shown.count === 1 ? "it" : "them"}.`;
    // Not "after such a change": the run may have changed nothing (its edit failed, or it only
    // answered), and the case does not keep whether it did (hunt 113).
    const them = shown.count === 1 ? "it" : "them";
    return `Run ${shown.judge} again on ${shown.paths} after any change to ${them}: it failed a run on ${them}.`;
  }
  const where = shown.count > 0 ? ` on ${shown.paths}` : "";
  return `Avoid the failure${shown.kind && ` ${shown.kind}`} seen when calling ${shown.tool("tools")}${where}.`;
}
