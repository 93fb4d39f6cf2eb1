import { z } from "zod";
import type { JudgeResult, TraceAction, TraceObservation, TraceRecord } from "../domain";
import { artifactPath } from "./artifacts";
import { isPolicyCode, LIMIT_CODES } from "./failure-classes";
import type { RunTraceView } from "./run-view";

/** The harness's own judges; each turns a failure it can see into a judge_result at once. */
export const BUILT_IN_JUDGES = {
  toolError: "tool-error",
  policy: "policy",
  limit: "run-limit",
  model: "model-error",
} as const;

/**
 * What a judge may be called (a verdict's or an imported trace's `judgeName`, a case's `approvedBy`):
 * one line without control or format characters (zero-width, bidi); no space or blank letter (the
 * Hangul fillers and the blank braille pattern, drawn as a space) at either end, also behind marks
 * (a variation selector after a filler, hunt 116), and no mark first; at least one character that
 * is drawn (not only blanks, variation selectors or combining marks: a name nobody could read); and
 * no look-alike of the harness's own judges' names (`isBuiltInLookalike`). Names judges were given before (`unit tests`,
 * `GitHub Actions`) stay valid: a replay is settled by its case's judge, under the same name. Briefs
 * quote a name only when it is a `JUDGE_IDENTIFIER`, and describe any other in words.
 */
export const JUDGE_NAME =
  /^(?![\p{M}\s\u115F\u1160\u3164\uFFA0\u2800])(?=.*[^\s\u115F\u1160\u3164\uFFA0\u2800\p{Default_Ignorable_Code_Point}\p{M}])[^\p{Cc}\p{Cf}\u2028\u2029]*(?<![\s\u115F\u1160\u3164\uFFA0\u2800]\p{M}*)$/u;
export const JUDGE_NAME_RULE =
  "must be one line without control or format characters, show at least one visible character, and not start or end with a space or a blank letter";
/** A judge's name of at most `maxChars`, checked as JUDGE_NAME and isBuiltInLookalike say (a verdict's, an imported trace's). */
export function judgeNameSchema(maxChars: number) {
  return (
    z
      .string()
      .min(1)
      .max(maxChars)
      // A refinement, not a `pattern`: JSON Schema validators read `\p{...}` differently (without the u flag).
      .refine((name) => JUDGE_NAME.test(name), { message: JUDGE_NAME_RULE })
      .refine((name) => !isBuiltInLookalike(name), { message: "reads as the name of one of the harness's own judges" })
  );
}

/** A judge name a brief shows as it is (in backticks): a short identifier such as `ci`, `pytest`, `github/ci:unit`. */
export const JUDGE_IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,99}$/;

/** True for a name that is not one of the harness's own judges' names but reads as one (`Tool-Error`, full-width letters). */
export function isBuiltInLookalike(name: string): boolean {
  const folded = name.normalize("NFKC").toLowerCase();
  return folded !== name && (Object.values(BUILT_IN_JUDGES) as string[]).includes(folded);
}

/** A verdict before the log gives it its seq. */
export type JudgeDraft = Omit<JudgeResult, "writerSeq" | "judgeId" | "taskId" | "attemptId" | "createdAt" | "type">;

/**
 * The built-in verdict on a trace record, if it shows a failure: a tool call that failed or was denied
 * (policy), a tool budget or a run limit hit (run-limit), a model call that failed (model-error).
 * Called after the record is added to `run`.
 */
export function judgeRecord(record: TraceRecord, run: RunTraceView): JudgeDraft | null {
  if (record.type === "observation" && record.status === "error") return judgeObservation(record, run);
  if (record.type === "span_end" && record.kind === "run" && record.status === "error" && LIMIT_CODES.has(record.stopReason)) {
    return {
      runId: record.runId,
      judgeName: BUILT_IN_JUDGES.limit,
      builtIn: true,
      result: "fail",
      sourceActionId: null,
      verifierActionId: null,
      artifactRefs: [],
      failureKind: record.stopReason,
      detail: `the run ended with ${record.stopReason}`,
      turnId: run.actions.at(-1)?.turnId ?? null,
    };
  }
  return null;
}

function judgeObservation(observation: TraceObservation, run: RunTraceView): JudgeDraft | null {
  const action = run.action(observation.actionId);
  if (!action || observation.code === null || observation.code === "aborted") return null;
  const bashExit = observation.code === "exit_status" && action.tool === "bash";
  const command = bashExit ? commandOf(action) : null;
  if (command !== null && observation.exitCode === 1 && answersWithExitOne(command)) return null;
  // 127: the shell has no such command (node, python, ...). The files the line names worked; the
  // case is about the command, and reaches retries of the run only.
  const notFound = bashExit && observation.exitCode === COMMAND_NOT_FOUND_EXIT;
  const kind = notFound ? "command_not_found" : observation.code;
  const judgeName =
    action.actor === "model"
      ? BUILT_IN_JUDGES.model
      : LIMIT_CODES.has(kind)
        ? BUILT_IN_JUDGES.limit
        : isPolicyCode(kind)
          ? BUILT_IN_JUDGES.policy
          : BUILT_IN_JUDGES.toolError;
  const touched = run.touches(action);
  const refs = notFound ? [] : bashExit ? commandArtifacts(command, touched, run) : [...touched.writes, ...touched.reads];
  return {
    runId: observation.runId,
    judgeName,
    builtIn: true,
    result: "fail",
    sourceActionId: action.actionId,
    verifierActionId: action.actionId,
    // The workspace root ("", as `read .` names it) is no artifact: a case about it would warn of nothing.
    artifactRefs: [...new Set(refs)].filter((ref) => ref !== ""),
    failureKind: kind,
    // Summaries only: the observation's summary says how the call ended, never what it printed.
    detail: `${action.tool} ${action.argsSummary}: ${observation.summary}`.slice(0, 2000),
    turnId: action.turnId,
  };
}

/**
 * The artifacts of a bash command that exited with an error: the files it wrote; else the words of
 * its command line that name a file it read (`cat .env; exit 3` names `.env`); else none, and the
 * case reaches only a retry of the run. A word counts when it looks like a file name (`a.ts`, `.env`)
 * and nothing the run touched lies under it: a directory a command walked (`grep -r TODO src`) or
 * every file it happened to read would make a case about a whole tree.
 */
function commandArtifacts(command: string | null, touched: { reads: string[]; writes: string[] }, run: RunTraceView): string[] {
  if (touched.writes.length > 0) return touched.writes;
  if (command === null) return [];
  const read = new Set(touched.reads);
  const seen = run.actions.flatMap((a) => {
    const t = run.touches(a);
    return [...t.reads, ...t.writes];
  });
  const named = shellSegments(command).flatMap((segment) => segment.words.slice(1));
  return named
    .map((word) => artifactPath(word))
    .filter(
      (path): path is string => path !== null && read.has(path) && FILE_NAME.test(path) && !seen.some((p) => p.startsWith(`${path}/`)),
    );
}

/** The exit code a shell gives a command it cannot find. */
const COMMAND_NOT_FOUND_EXIT = 127;

/** A last path segment with an extension (`a.ts`) or a dot file (`.env`). */
const FILE_NAME = /(?:^|\/)[^/]*\.[^/.]+$/;

/** The command of a bash action, as its argument summary quotes it (a long one is summarised away: null). */
function commandOf(action: TraceAction): string | null {
  const quoted = /(?:^| )command=("(?:[^"\\]|\\.)*")/.exec(action.argsSummary)?.[1];
  if (quoted === undefined) return null;
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return null;
  }
}

/** Commands whose exit code 1 is an answer ("no match", "differs", "false"), not a failure. */
const ANSWERS_WITH_EXIT_ONE: ReadonlySet<string> = new Set(["grep", "egrep", "fgrep", "rg", "diff", "cmp", "test", "["]);

/**
 * Whether exit code 1 is the command line's answer: the line is one command or one pipeline (a bash
 * pipeline exits with its last command's code) and its last command is grep, rg, diff, cmp, test or
 * `[`. A list (`;`, `&&`, `||`) or a subshell could have exited with another command's 1: judged.
 */
function answersWithExitOne(command: string): boolean {
  const segments = shellSegments(command);
  if (segments.length === 0 || segments.some((s, i) => (i < segments.length - 1 ? s.end !== "|" : s.end !== null))) return false;
  const words = segments.at(-1)!.words;
  const name = words.find((w) => !/^[A-Za-z_]\w*=/.test(w));
  return name !== undefined && ANSWERS_WITH_EXIT_ONE.has(name.slice(name.lastIndexOf("/") + 1));
}

/**
 * A command line cut into simple commands: each one's words (quotes and backslashes removed) and the
 * operator that ends it (`|`, `||`, `&&`, `;`, `&`, a newline, a parenthesis; null at the end).
 * Redirections end a word (`>out.txt` gives `out.txt`). Enough to find file arguments and the last
 * command, not a shell parser: expansions stay as written.
 */
function shellSegments(command: string): { words: string[]; end: string | null }[] {
  const segments: { words: string[]; end: string | null }[] = [];
  let words: string[] = [];
  let word: string | null = null;
  const endWord = () => {
    if (word !== null) words.push(word);
    word = null;
  };
  const endSegment = (op: string | null) => {
    endWord();
    if (words.length > 0 || op !== null) segments.push({ words, end: op });
    words = [];
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "'") {
      const close = command.indexOf("'", i + 1);
      const to = close < 0 ? command.length : close;
      word = (word ?? "") + command.slice(i + 1, to);
      i = to;
    } else if (c === '"') {
      word ??= "";
      for (i++; i < command.length && command[i] !== '"'; i++) {
        if (command[i] === "\\" && '"\\$`'.includes(command[i + 1] ?? "")) i++;
        word += command[i] ?? "";
      }
    } else if (c === "\\") {
      word = (word ?? "") + (command[++i] ?? "");
    } else if (c === " " || c === "\t") {
      endWord();
    } else if (c === "<" || c === ">" || (c === "&" && (command[i - 1] === ">" || command[i + 1] === ">"))) {
      endWord(); // a redirection (`>&2` and `&>` included): its target is the next word
    } else if ("|&;\n()".includes(c)) {
      const two = command.slice(i, i + 2);
      const op = two === "||" || two === "&&" ? two : c;
      i += op.length - 1;
      endSegment(op);
    } else {
      word = (word ?? "") + c;
    }
  }
  endSegment(null);
  return segments;
}
