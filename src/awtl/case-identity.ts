import { clipText, MAX_PREVENTION_HINT_CHARS } from "../domain";
import { type HintFacts, keepEnd } from "./prevention-hints";

/**
 * `text` on one line: line breaks and other control characters become `\uXXXX`. A hint is one
 * bullet of the brief, and what fills it (a judge's name, a path: a file name may hold a line
 * break) must not add lines to a system prompt.
 */
function oneLine(text: string): string {
  return text.replace(/[\p{Cc}\u2028\u2029]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

const list = (paths: string[]) =>
  paths.length === 0 ? "the files it names" : paths.slice(0, 3).join(", ") + (paths.length > 3 ? ", ..." : "");

const TEMPLATES: Record<string, (f: HintFacts) => string> = {
  not_found: (f) => `Check that ${list(f.paths)} exists (with ls or find) before calling ${f.tool ?? "a tool"} on it.`,
  is_directory: (f) => `Treat ${list(f.paths)} as a directory: list it with ls instead of calling ${f.tool ?? "read"} on it.`,
  not_a_directory: (f) => `Do not put files under ${list(f.paths)}: part of that path is a file.`,
  no_match: (f) => `Read ${list(f.paths)} again right before editing it, and copy the text to replace exactly.`,
  ambiguous_match: (f) => `Give edit a longer oldText that occurs exactly once in ${list(f.paths)}.`,
  no_change: (f) => `Make sure an edit of ${list(f.paths)} actually changes the text.`,
  overlapping_edits: (f) => `Give each edit of ${list(f.paths)} in one call its own text: edits must not overlap.`,
  binary_file: (f) => `Do not read ${list(f.paths)} as text: it is a binary file.`,
  file_too_large: (f) => `Keep ${list(f.paths)} under the file size limit.`,
  content_too_large: (f) => `Keep what you write to ${list(f.paths)} under the file size limit.`,
  invalid_regex: () => "Escape regular-expression characters in grep patterns, or search for a literal.",
  invalid_glob: () => "Use a valid glob pattern with find.",
  offset_out_of_range: (f) => `Read ${list(f.paths)} from an offset inside the file (check its length first).`,
  exit_status: (f) =>
    `Check the command's output before relying on it: it exited with an error${f.paths.length ? ` on ${list(f.paths)}` : ""}.`,
  bash_timeout: () => "Keep bash commands short: avoid commands that run longer than the bash timeout.",
  write_not_allowed: () => "Do not call write or edit in a read-only run: describe the change instead.",
  bash_not_allowed: () => "Do not call bash unless the run allows it: use read, grep, find and ls.",
  path_escape: () => "Use paths relative to the workspace root: never absolute paths or .. that leave it.",
  path_too_long: () => "Use paths shorter than the path length limit.",
  unknown_tool: () => "Call only the tools this run offers.",
  invalid_arguments: (f) => `Call ${f.tool ?? "tools"} with exactly the arguments its schema describes.`,
  tool_budget_exhausted: () => "Plan your tool calls: batch searches and read only what you need, within the tool budget.",
  max_turns_reached: () => "Answer within the turn budget: plan the steps first and stop when the question is answered.",
  run_timeout: () => "Finish within the run's time budget: avoid long searches and commands.",
  output_too_large: () => "Keep answers and written files under the output limit; split large files into several writes.",
  context_overflow: () => "Read only the parts of files you need (use offset and limit), to keep the conversation small.",
};

/** Widths long paths are shortened to, in turn, until the hint fits (a judge's name is at most 100 characters). */
const PATH_WIDTHS = [80, 40, 20];

/**
 * The hint as cases were identified when the loop was built: part of every case id (see buildCase),
 * so it is frozen. The hint a brief shows is `preventionHint` (quoted, rebuilt since hunt 30); if
 * this changed, every recurrence of a stored failure would become a second case beside the first.
 */
export function caseIdentityHint(facts: HintFacts): string {
  let hint = oneLine(hintOf(facts));
  for (const width of PATH_WIDTHS) {
    if (hint.length <= MAX_PREVENTION_HINT_CHARS) return hint;
    hint = oneLine(hintOf({ ...facts, paths: facts.paths.map((p) => keepEnd(p, width)) }));
  }
  return clipText(hint, MAX_PREVENTION_HINT_CHARS);
}

function hintOf(facts: HintFacts): string {
  // Own keys only: a failure kind named like an Object method ("constructor") has no template.
  const template = Object.hasOwn(TEMPLATES, facts.failureKind) ? TEMPLATES[facts.failureKind] : undefined;
  if (template) return template(facts);
  if (facts.failureKind === "external" || !facts.builtIn) {
    return `Run ${facts.judgeName} again on ${list(facts.paths)} after changing ${facts.paths.length === 1 ? "it" : "them"}: it failed after such a change.`;
  }
  const where = facts.paths.length > 0 ? ` on ${list(facts.paths)}` : "";
  return `Avoid the failure ${facts.failureKind} seen when calling ${facts.tool ?? "tools"}${where}.`;
}
