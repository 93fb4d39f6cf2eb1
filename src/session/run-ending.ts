import type { AgentEvent, AgentMessage, RunErrorCode, TraceDraft } from "../domain";
import { type LogLevel, logLine } from "../log";
import type { RunOutcome } from "../runtime/agent-runtime";
import type { RunLog, RunRecord } from "../runtime/run-log";

/** What a run used, counted from what it appended: model turns, tool calls run or refused, tokens the provider reported. */
export interface RunCounts {
  turns: number;
  toolCalls: number;
  /** Only when the provider reported usage for at least one of the run's model calls. */
  tokens?: number;
}

/** How a run ended, with what its log line needs besides the outcome. */
export interface RunEnding extends RunOutcome {
  /** Absent when the run ended before the agent loop began (its history could not be read). */
  counts?: RunCounts;
  /** The stack of an internal error that no other line logged: for the log only, never for an event. */
  cause?: string;
}

/**
 * The level of a run's end in the log, by its `agent_error` code: info when the run ended as its
 * user or its own limits decided, warn when the provider (or the model's configuration) failed it,
 * error when the harness did. A record, so a new run code has to be placed here.
 */
const ENDING_LEVEL: Record<RunErrorCode, LogLevel> = {
  run_timeout: "info",
  max_turns_reached: "info",
  run_aborted: "info",
  output_too_large: "info",
  replay_exhausted: "info",
  replay_load_failed: "info",
  replay_recorded_error: "info",
  script_exhausted: "info",
  auth_failed: "warn",
  provider_error: "warn",
  rate_limited: "warn",
  context_overflow: "warn",
  content_filtered: "warn",
  stream_incomplete: "warn",
  bad_request: "warn",
  network_error: "warn",
  model_not_configured: "warn",
  run_interrupted: "warn",
  workspace_not_found: "warn",
  history_unreadable: "error",
  internal_error: "error",
};

/**
 * Counts a run's records as they are appended (see `RunCounts`); `observe` wraps the run's log.
 * It keeps numbers only, never content.
 */
export class RunTally {
  private turns = 0;
  private toolCalls = 0;
  private tokens: number | undefined;

  /** The run's log, counting what goes through it. */
  observe(log: RunLog): RunLog {
    return {
      appendMessage: (message) => {
        log.appendMessage(message);
        this.message(message);
      },
      appendEvent: (event) => {
        log.appendEvent(event);
        this.event(event);
      },
      appendTogether: (records) => {
        log.appendTogether(records);
        for (const record of records) this.record(record);
      },
      appendTrace: (draft) => {
        log.appendTrace(draft);
        this.trace(draft);
      },
    };
  }

  get counts(): RunCounts {
    return { turns: this.turns, toolCalls: this.toolCalls, ...(this.tokens === undefined ? {} : { tokens: this.tokens }) };
  }

  private record(record: RunRecord): void {
    if (record.stream === "messages") this.message(record.record);
    else this.event(record.record);
  }

  private message(message: AgentMessage): void {
    if ((message.kind === "assistant" || message.kind === "compaction") && message.usage)
      this.tokens = (this.tokens ?? 0) + message.usage.totalTokens;
  }

  private event(event: AgentEvent): void {
    if (event.type === "tool_call_finished" || event.type === "tool_call_denied") this.toolCalls++;
  }

  private trace(draft: TraceDraft): void {
    if (draft.type === "span_start" && draft.kind === "turn") this.turns++;
  }
}

/**
 * The one log line of a run's end: `run ended` with its session, run, outcome, code or stop reason,
 * duration and counts. No prompt, answer, file or error text; an internal error's stack only when
 * no other line logged it (`cause`).
 */
export function runEndLine(
  sessionId: string,
  runId: string,
  ending: RunEnding,
  ms: number,
): { level: LogLevel; msg: string; fields: Record<string, unknown> } {
  const code = ending.error?.code;
  const fields: Record<string, unknown> = {
    sessionId,
    runId,
    outcome: code ? "error" : "completed",
    ...(code ? { code } : {}),
    stopReason: ending.stopReason,
    ms,
    ...ending.counts,
    ...(ending.cause ? { error: ending.cause } : {}),
  };
  return { level: code ? ENDING_LEVEL[code] : "info", msg: "run ended", fields };
}

/** Writes `runEndLine`. */
export function logRunEnd(sessionId: string, runId: string, ending: RunEnding, ms: number): void {
  const { level, msg, fields } = runEndLine(sessionId, runId, ending, ms);
  logLine(level, msg, fields);
}
