import type { IdGenerator, ToolCall, TraceDraft } from "../domain";
import { clipText, nowIso } from "../domain";
import type { ToolExecution } from "../tools/execution-service";

/** The longest argument summary kept in a trace action. */
export const ARGS_SUMMARY_CHARS = 200;

export interface RunTracerContext {
  sessionId: string;
  runId: string;
  retryOf: string | null;
  ids: IdGenerator;
  clock: () => number;
  append(draft: TraceDraft): void;
}

/** An open turn: its id and span. */
export interface TurnTrace {
  turnId: string;
  spanId: string;
}

/**
 * Writes a run's trace (AWTL): spans for the run and each turn, one action per model call and per
 * tool call with the paths it read or wrote, and one observation per action. The agent loop calls it
 * at each step; summaries only, never file contents.
 */
export class RunTracer {
  private readonly runSpan: string;
  /** The tool of each tool action, for its observation's summary. */
  private readonly tools = new Map<string, string>();

  constructor(private readonly ctx: RunTracerContext) {
    this.runSpan = ctx.ids.next("span");
  }

  runStarted(): void {
    this.write({ type: "span_start", spanId: this.runSpan, kind: "run", parentSpanId: null, turnId: null, retryOf: this.ctx.retryOf });
  }

  runEnded(stopReason: string, failed: boolean): void {
    this.write({ type: "span_end", spanId: this.runSpan, kind: "run", turnId: null, status: failed ? "error" : "ok", stopReason });
  }

  turnStarted(): TurnTrace {
    const turn = { turnId: this.ctx.ids.next("turn"), spanId: this.ctx.ids.next("span") };
    this.write({ type: "span_start", spanId: turn.spanId, kind: "turn", parentSpanId: this.runSpan, turnId: turn.turnId, retryOf: null });
    return turn;
  }

  turnEnded(turn: TurnTrace, stopReason: string, failed: boolean): void {
    this.write({ type: "span_end", spanId: turn.spanId, kind: "turn", turnId: turn.turnId, status: failed ? "error" : "ok", stopReason });
  }

  /** The model is called with `messages` messages and `tools` tools on offer; returns the action id. */
  modelCalled(turn: TurnTrace, messages: number, tools: number): string {
    const actionId = this.ctx.ids.next("action");
    const argsSummary = `${messages} message(s), ${tools} tool(s) offered`;
    this.write({
      type: "action",
      spanId: turn.spanId,
      turnId: turn.turnId,
      actionId,
      actor: "model",
      tool: "model",
      callId: null,
      argsSummary,
      reads: [],
      writes: [],
    });
    return actionId;
  }

  modelAnswered(turn: TurnTrace, actionId: string, outcome: { error: string | null; text: string; calls: number }): void {
    // The answer's size, not its text: it may quote what the model read.
    const summary = outcome.error ?? (outcome.calls > 0 ? `${outcome.calls} tool call(s)` : `answer: ${size(outcome.text)}`);
    this.observe(turn, actionId, {
      status: outcome.error ? "error" : "ok",
      code: outcome.error,
      exitCode: null,
      summary,
      reads: [],
      writes: [],
    });
  }

  /** A tool call is about to run, with the paths its arguments name; returns the action id. */
  toolCalled(turn: TurnTrace, call: ToolCall, planned: { reads: string[]; writes: string[] }): string {
    const actionId = this.ctx.ids.next("action");
    this.tools.set(actionId, call.name);
    this.write({
      type: "action",
      spanId: turn.spanId,
      turnId: turn.turnId,
      actionId,
      actor: "tool",
      tool: call.name,
      callId: call.id,
      argsSummary: summarizeArgs(call.arguments),
      reads: planned.reads,
      writes: planned.writes,
    });
    return actionId;
  }

  toolFinished(turn: TurnTrace, actionId: string, execution: ToolExecution): void {
    if (execution.outcome === "denied") {
      this.observe(turn, actionId, {
        status: "error",
        code: execution.reason,
        exitCode: null,
        summary: toolSummary(this.toolOf(actionId), execution),
        reads: [],
        writes: [],
      });
      return;
    }
    this.observe(turn, actionId, {
      status: execution.error ? "error" : "ok",
      code: execution.error ? (execution.code ?? "tool_failed") : null,
      exitCode: execution.exitCode ?? null,
      summary: toolSummary(this.toolOf(actionId), execution),
      reads: execution.touched?.reads ?? [],
      writes: execution.touched?.writes ?? [],
    });
  }

  /** The run was handed a Failure Prevention Brief built from these cases. */
  memoryRead(caseIds: string[], promotedCaseIds: string[], briefChars: number): void {
    this.write({ type: "memory_read", caseIds, promotedCaseIds, briefChars });
  }

  private toolOf(actionId: string): string {
    const tool = this.tools.get(actionId) ?? "tool";
    this.tools.delete(actionId);
    return tool;
  }

  private observe(
    turn: TurnTrace,
    actionId: string,
    o: { status: "ok" | "error"; code: string | null; exitCode: number | null; summary: string; reads: string[]; writes: string[] },
  ): void {
    this.write({ type: "observation", spanId: turn.spanId, turnId: turn.turnId, actionId, ...o });
  }

  private write(body: Record<string, unknown>): void {
    const base = { taskId: this.ctx.sessionId, runId: this.ctx.runId, attemptId: this.ctx.runId, createdAt: nowIso(this.ctx.clock) };
    this.ctx.append({ ...base, ...body } as TraceDraft);
  }
}

/**
 * What an observation says of a tool call's result, never what it printed (the trace is exported and
 * imported elsewhere; a file's text, secrets included, must stay out of it):
 * - a denial or a failure: its code and the first sentence of the harness's own message
 *   (`not_found: no file at 'src/a.ts'`); later sentences may quote the file (edit's no_match names
 *   the nearest line), and an unexpected error's message (`tool_failed`) is not the harness's;
 * - bash: its exit code and how many lines it printed (`bash: exit 3, 1 line of output`);
 * - write and edit: the first sentence of their own report (`Successfully wrote 12 bytes to a.ts`);
 * - grep: how many matches in how many files; any other tool: how many lines and bytes it returned
 *   (`read: 12 lines, 340 bytes`), a notice after them and a stand-in such as `(empty file)` not counted.
 */
export function toolSummary(tool: string, execution: ToolExecution): string {
  if (execution.outcome === "denied") return firstSentence(execution.text);
  const { text, error, code } = execution;
  if (tool === "bash" && (!error || code === "exit_status" || code === "bash_timeout")) {
    const status = code === "bash_timeout" ? "timed out" : `exit ${execution.exitCode ?? 0}`;
    return `bash: ${status}, ${plural(lines(bodyOf(text)), "line")} of output`;
  }
  if (error) return code === "tool_failed" || !code ? "tool_failed" : firstSentence(text);
  if (tool === "write" || tool === "edit") return firstSentence(text);
  const body = bodyOf(text);
  if (tool === "grep") {
    const files = new Set<string>();
    let matches = 0;
    for (const line of body.split("\n")) {
      const match = /^(.+?):\d+: /.exec(line);
      if (!match) continue;
      matches++;
      files.add(match[1]!);
    }
    return `grep: ${plural(matches, "match", "matches")} in ${plural(files.size, "file")}`;
  }
  return `${tool}: ${size(body)}`;
}

/** Texts the tools put in place of an empty result: nothing was returned. */
const STAND_INS: ReadonlySet<string> = new Set([
  "(empty file)",
  "(empty directory)",
  "(no output)",
  "No matches found",
  "No files found matching pattern",
]);

/** A tool's result without the notice the tools put after it (`\n\n[...]`), and empty for a stand-in. */
function bodyOf(text: string): string {
  const body = text.replace(/\n\n\[[^\n]*\]$/, "");
  return STAND_INS.has(body) ? "" : body;
}

const lines = (text: string) => (text === "" ? 0 : text.split("\n").length);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
/** `2 lines, 64 bytes` (UTF-8). */
const size = (text: string) => `${plural(lines(text), "line")}, ${plural(new TextEncoder().encode(text).byteLength, "byte")}`;

/** The first sentence of a text's first line (up to its first ". "), at most 200 characters. */
function firstSentence(text: string): string {
  const line = firstLine(text);
  const end = line.indexOf(". ");
  return end < 0 ? line : line.slice(0, end + 1);
}

/** The first line of a text, at most 200 characters. */
export function firstLine(text: string): string {
  const line = text.split("\n", 1)[0]!.trim();
  return clipText(line, ARGS_SUMMARY_CHARS);
}

/**
 * The string arguments quoted when short: the tools' paths, patterns and commands. Any other string
 * (write's content, edit's old and new text, and what other agents' tools call them, such as
 * `contents`, `file_text` or `new_string`, which models send) may be a file's text: only its length
 * is kept.
 */
export const QUOTED_ARGS: ReadonlySet<string> = new Set(["path", "pattern", "glob", "command"]);
/** The longest string argument kept as it is; a bash command up to the longer one (its words name the files it is about). */
const ARG_CHARS = 80;
const COMMAND_CHARS = 180;

/**
 * `path=src/a.ts content=<1204 chars>`: short paths, patterns and commands kept, other strings, long
 * ones and objects summarised. A string with a line break is summarised too (a heredoc is a file's text).
 */
export function summarizeArgs(args: Record<string, unknown>): string {
  const parts = Object.entries(args).map(([key, value]) => {
    if (typeof value === "string") {
      const kept = QUOTED_ARGS.has(key) && !value.includes("\n") && value.length <= (key === "command" ? COMMAND_CHARS : ARG_CHARS);
      return `${key}=${kept ? JSON.stringify(value) : `<${value.length} chars>`}`;
    }
    if (typeof value === "number" || typeof value === "boolean" || value === null) return `${key}=${String(value)}`;
    return `${key}=<${Array.isArray(value) ? `${value.length} items` : "object"}>`;
  });
  return clipText(parts.join(" "), ARGS_SUMMARY_CHARS);
}
