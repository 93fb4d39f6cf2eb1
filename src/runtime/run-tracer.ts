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
    const summary = outcome.error ?? (outcome.calls > 0 ? `${outcome.calls} tool call(s)` : firstLine(outcome.text) || "(empty answer)");
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
        summary: firstLine(execution.text),
        reads: [],
        writes: [],
      });
      return;
    }
    this.observe(turn, actionId, {
      status: execution.error ? "error" : "ok",
      code: execution.error ? (execution.code ?? "tool_failed") : null,
      exitCode: execution.exitCode ?? null,
      summary: firstLine(execution.text),
      reads: execution.touched?.reads ?? [],
      writes: execution.touched?.writes ?? [],
    });
  }

  /** The run was handed a Failure Prevention Brief built from these cases. */
  memoryRead(caseIds: string[], promotedCaseIds: string[], briefChars: number): void {
    this.write({ type: "memory_read", caseIds, promotedCaseIds, briefChars });
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

/** The first line of a text, at most 200 characters. */
export function firstLine(text: string): string {
  const line = text.split("\n", 1)[0]!.trim();
  return clipText(line, ARGS_SUMMARY_CHARS);
}

/** `path=src/a.ts content=<1204 chars>`: short values kept, long strings and objects summarised. */
export function summarizeArgs(args: Record<string, unknown>): string {
  const parts = Object.entries(args).map(([key, value]) => {
    if (typeof value === "string")
      return `${key}=${value.length > 80 || value.includes("\n") ? `<${value.length} chars>` : JSON.stringify(value)}`;
    if (typeof value === "number" || typeof value === "boolean" || value === null) return `${key}=${String(value)}`;
    return `${key}=<${Array.isArray(value) ? `${value.length} items` : "object"}>`;
  });
  return clipText(parts.join(" "), ARGS_SUMMARY_CHARS);
}
