import type { AgentMessage, AssistantMessage, CompactionMessage } from "../domain";
import { ABORTED_MESSAGE, type ModelClient, type ModelEvent, type ModelRequest, modelError } from "./model-client";

/** Loads the messages of a recorded session, in order. */
export type MessageLoader = (sessionId: string) => Promise<AgentMessage[]>;

/** What a replay plays back of a recording: its assistant turns and compaction summaries. */
export const isRecordedTurn = (message: AgentMessage): boolean => message.kind === "assistant" || message.kind === "compaction";

/** The model name prefix that selects replay: `replay:<sessionId>`. */
export const REPLAY_MODEL_PREFIX = "replay:";

/**
 * Replays the assistant turns recorded in another session, with no network and no key, so a recorded
 * run can be re-run against the current tools.
 *
 * Which turn: the k-th call answers with the k-th recorded assistant message, where k is the larger
 * of the calls this client has answered and the assistant messages already in the request's history.
 * So one client per session and one client per run (re-created by the factory) both continue where
 * the previous call stopped, and turns the runtime recorded without a model call stay aligned.
 *
 * How: the recorded text as one `text_delta`, the recorded tool calls with their recorded ids, then
 * `done` (TOOL_CALLS when there are calls, else the recorded STOP/LENGTH; MAX_TURNS counts as a normal
 * answer) with the recorded usage. A recorded ERROR/ABORTED/TIMEOUT turn replays its text and ends with
 * `replay_recorded_error`, so the runs stay aligned. Past the last recorded turn: `replay_exhausted`.
 * A loader failure ends the call with `replay_load_failed` (and is retried on the next call).
 *
 * Compaction: `request.assistantTurns` (the whole session's count) stands in for the history's count
 * when the request holds a compacted view. A summary request (`purpose: "compaction"`) is not a turn:
 * it is answered with the recorded summary of the same point (the first compaction recorded after as
 * many assistant turns as the request's `assistantTurns`), or with a fixed placeholder when the
 * recording has none, and never moves the turn counter.
 */
export class ReplayModelClient implements ModelClient {
  private answered = 0;
  private summariesPlayed = 0;
  private turns: Promise<{ turns: AssistantMessage[]; summaries: RecordedSummary[] }> | undefined;

  constructor(
    private readonly source: AgentMessage[] | { sessionId: string; load: MessageLoader },
    /** Recorded turns to skip: a replay of a later run of the recorded session starts there. */
    private readonly offset = 0,
  ) {}

  private get label(): string {
    return Array.isArray(this.source) ? "the recording" : `the recording of session ${this.source.sessionId}`;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent> {
    if (signal.aborted) {
      yield modelError("aborted", ABORTED_MESSAGE);
      return;
    }
    let turns: AssistantMessage[];
    let summaries: RecordedSummary[];
    try {
      ({ turns, summaries } = await this.loadTurns());
    } catch (err) {
      this.turns = undefined;
      const reason = err instanceof Error ? err.message : String(err);
      yield modelError("replay_load_failed", `could not load ${this.label}: ${reason}`);
      return;
    }
    if (signal.aborted) {
      yield modelError("aborted", ABORTED_MESSAGE);
      return;
    }
    if (request.purpose === "compaction") {
      const recorded = this.summaryFor(request, summaries);
      yield { type: "text_delta", text: recorded?.summary ?? REPLAY_PLACEHOLDER_SUMMARY };
      yield { type: "done", stopReason: "STOP" };
      return;
    }
    const inHistory = request.assistantTurns ?? request.messages.filter((m) => m.kind === "assistant").length;
    const played = Math.max(this.answered, inHistory);
    this.answered = played + 1;
    const k = played + this.offset;
    const turn = turns[k];
    if (!turn) {
      yield modelError("replay_exhausted", `${this.label} has ${turns.length} assistant turn(s); turn ${k + 1} was requested`);
      return;
    }
    yield* replayTurn(turn, k + 1);
  }

  /**
   * The recorded summary for a summary request: the first compaction recorded after as many assistant
   * turns as the replay has played (`assistantTurns` counts the whole session, so a later run of the
   * replaying session finds its own; the offset shifts it as it shifts turns). Without a count, the
   * summaries in order. Past the last: the last.
   */
  private summaryFor(request: ModelRequest, summaries: RecordedSummary[]): CompactionMessage | undefined {
    if (request.assistantTurns === undefined) return summaries[Math.min(this.summariesPlayed++, summaries.length - 1)]?.record;
    const at = request.assistantTurns + this.offset;
    return (summaries.find((s) => s.assistantsBefore >= at) ?? summaries.at(-1))?.record;
  }

  /**
   * Whether the recording compacted after exactly `assistantTurns` turns (shifted by the offset), so a
   * summary request there plays back its own summary; false when the recording cannot be read.
   */
  async hasSummaryAt(assistantTurns: number): Promise<boolean> {
    try {
      const { summaries } = await this.loadTurns();
      return summaries.some((s) => s.assistantsBefore === assistantTurns + this.offset);
    } catch {
      this.turns = undefined;
      return false;
    }
  }

  private loadTurns(): Promise<{ turns: AssistantMessage[]; summaries: RecordedSummary[] }> {
    this.turns ??= (Array.isArray(this.source) ? Promise.resolve(this.source) : this.source.load(this.source.sessionId)).then(
      (messages) => {
        const turns: AssistantMessage[] = [];
        const summaries: RecordedSummary[] = [];
        for (const m of messages) {
          if (m.kind === "assistant") turns.push(m);
          else if (m.kind === "compaction") summaries.push({ record: m, assistantsBefore: turns.length });
        }
        return { turns, summaries };
      },
    );
    return this.turns;
  }
}

/** A recorded compaction and the assistant turns recorded before it. */
interface RecordedSummary {
  record: CompactionMessage;
  assistantsBefore: number;
}

/** The summary a replay gives when the recording has no compaction to play back. */
export const REPLAY_PLACEHOLDER_SUMMARY = "(replay) The recording holds no compaction summary; the earlier history was dropped.";

function* replayTurn(turn: AssistantMessage, position: number): Iterable<ModelEvent> {
  if (turn.text !== "") yield { type: "text_delta", text: turn.text };
  if (turn.stopReason === "ERROR" || turn.stopReason === "ABORTED" || turn.stopReason === "TIMEOUT") {
    yield modelError("replay_recorded_error", `recorded turn ${position} ended with ${turn.stopReason}`);
    return;
  }
  const calls = turn.toolCalls ?? [];
  for (const call of calls) yield { type: "tool_call", call: structuredClone(call) };
  const stopReason = calls.length > 0 ? "TOOL_CALLS" : turn.stopReason === "LENGTH" ? "LENGTH" : "STOP";
  yield turn.usage ? { type: "done", stopReason, usage: { ...turn.usage } } : { type: "done", stopReason };
}
