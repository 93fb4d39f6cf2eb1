import type { Usage } from "../../src/domain";
import {
  ABORTED_MESSAGE,
  type ModelClient,
  type ModelErrorCode,
  type ModelEvent,
  type ModelRequest,
  type ModelStopReason,
  modelError,
} from "../../src/model";

/** A tool call in a scripted turn; the id defaults to `tc_<turn>_<n>` (both 1-based). */
export interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments?: Record<string, unknown>;
}

/** The short way to write a turn: text (one delta, or one per array item), then tool calls, then done. */
export interface ScriptedTurnShorthand {
  text?: string | string[];
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  /** Defaults to TOOL_CALLS when there are tool calls, else STOP. */
  stopReason?: ModelStopReason;
  usage?: Usage;
  /** End the turn with this error instead of `done` (after any text). */
  error?: { code: ModelErrorCode; message?: string };
  /** Held after the text until it settles or the signal aborts (abort then ends the turn with `aborted`). */
  pause?: Promise<unknown>;
}

/** A turn: exact events, the shorthand, or a function of the request (to answer from what was sent). */
export type ScriptedTurn =
  | ModelEvent[]
  | ScriptedTurnShorthand
  | ((request: ModelRequest, call: number) => ModelEvent[] | ScriptedTurnShorthand);

/**
 * A ModelClient for tests: the k-th call plays the k-th turn and records a deep copy of the request,
 * so tests can assert the history the runtime sent. Past the last turn it ends with `script_exhausted`.
 * An event list is played as given (nothing is added), so a test can also play a broken stream.
 */
export class ScriptedModelClient implements ModelClient {
  readonly requests: ModelRequest[] = [];
  private readonly turns: ScriptedTurn[];

  constructor(turns: ScriptedTurn[]) {
    this.turns = [...turns];
  }

  /** How many turns have been played (or attempted past the end). */
  get calls(): number {
    return this.requests.length;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    const call = this.requests.length + 1;
    this.requests.push(structuredClone(request));
    if (signal.aborted) {
      yield modelError("aborted", ABORTED_MESSAGE);
      return;
    }
    const scripted = this.turns[call - 1];
    if (scripted === undefined) {
      yield modelError("script_exhausted", `the scripted model has ${this.turns.length} turn(s); call ${call} has none`);
      return;
    }
    const turn = typeof scripted === "function" ? scripted(request, call) : scripted;
    if (Array.isArray(turn)) {
      for (const event of turn) {
        if (signal.aborted) {
          yield modelError("aborted", ABORTED_MESSAGE);
          return;
        }
        yield event;
      }
      return;
    }
    yield* playShorthand(turn, call, signal);
  }
}

async function* playShorthand(turn: ScriptedTurnShorthand, call: number, signal: AbortSignal): AsyncIterable<ModelEvent> {
  if (turn.reasoning) yield { type: "reasoning_delta", text: turn.reasoning };
  const texts = turn.text === undefined ? [] : Array.isArray(turn.text) ? turn.text : [turn.text];
  for (const text of texts) if (text !== "") yield { type: "text_delta", text };
  if (turn.pause) await untilSettledOrAborted(turn.pause, signal);
  if (signal.aborted) {
    yield modelError("aborted", ABORTED_MESSAGE);
    return;
  }
  if (turn.error) {
    yield modelError(turn.error.code, turn.error.message ?? `scripted ${turn.error.code}`);
    return;
  }
  const calls = turn.toolCalls ?? [];
  for (const [i, c] of calls.entries()) {
    yield { type: "tool_call", call: { id: c.id ?? `tc_${call}_${i + 1}`, name: c.name, arguments: c.arguments ?? {} } };
  }
  const stopReason = turn.stopReason ?? (calls.length > 0 ? "TOOL_CALLS" : "STOP");
  yield turn.usage ? { type: "done", stopReason, usage: turn.usage } : { type: "done", stopReason };
}

function untilSettledOrAborted(pause: Promise<unknown>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    pause.then(done, done);
  });
}
