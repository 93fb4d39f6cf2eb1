import { type IdGenerator, isRecord, MAX_JSON_DEPTH, nestsDeeperThan, sliceWhole, type ToolCall, type Usage } from "../domain";
import {
  MAX_IMPORTED_ID_CHARS,
  MAX_IMPORTED_TOKENS,
  MAX_MODEL_OUTPUT_CHARS,
  MAX_TOOL_CALL_EXTRA_CHARS,
  MAX_TOOL_CALLS_PER_ANSWER,
  MAX_TOOL_NAME_CHARS,
} from "../domain/limits";
import { ArgumentsText, isCompleteJson } from "./arguments-text";
import type { InvalidToolCall, ModelEvent, ModelStopReason } from "./model-client";
import { modelError } from "./model-client";
import { ProviderStreamError, streamChunkFailure } from "./provider-errors";

/** Name given to a call whose provider sent arguments but no function name. */
export const UNKNOWN_TOOL_NAME = "unknown_tool";

/** One tool call being assembled from its fragments. */
interface CallSlot {
  /** The provider's `index`, when it sent one. */
  index: number | undefined;
  /** Position of the first fragment; orders calls that have no index. */
  seen: number;
  id: string;
  name: string;
  args: ArgumentsText;
  /** The call's `extra_content` (Gemini's thought signature), the first one sent. */
  extra: Record<string, unknown> | undefined;
}

function nonEmptyString(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** A tool call's id or name: one of only spaces is as good as none (the log refuses blank ones). */
function identifier(value: unknown): string {
  return typeof value === "string" && value.trim() !== "" ? value : "";
}

/** A token count as stored: whole, at least 0, and at most what an import of the session takes back. */
function tokenCount(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? Math.min(MAX_IMPORTED_TOKENS, Math.max(0, Math.round(value))) : undefined;
}

/**
 * Reads OpenAI (`prompt_tokens`) and Anthropic-style (`input_tokens`) usage objects, with cached input
 * tokens (`prompt_tokens_details.cached_tokens`, `input_tokens_details.cached_tokens`, DeepSeek's
 * `prompt_cache_hit_tokens`, `cache_read_input_tokens`, `cached_tokens`) and reasoning tokens
 * (`completion_tokens_details.reasoning_tokens`, `output_tokens_details.reasoning_tokens`, `reasoning_tokens`).
 */
export function normaliseUsage(raw: unknown): Usage | undefined {
  if (!isRecord(raw)) return undefined;
  const input = tokenCount(raw.prompt_tokens) ?? tokenCount(raw.input_tokens);
  const output = tokenCount(raw.completion_tokens) ?? tokenCount(raw.output_tokens);
  const total = tokenCount(raw.total_tokens);
  if (input === undefined && output === undefined && total === undefined) return undefined;
  const inputTokens = input ?? 0;
  const outputTokens = output ?? 0;
  const usage: Usage = { inputTokens, outputTokens, totalTokens: total ?? Math.min(MAX_IMPORTED_TOKENS, inputTokens + outputTokens) };
  const details = (key: string) => (isRecord(raw[key]) ? (raw[key] as Record<string, unknown>) : {});
  const cached =
    tokenCount(details("prompt_tokens_details").cached_tokens) ??
    tokenCount(details("input_tokens_details").cached_tokens) ??
    tokenCount(raw.prompt_cache_hit_tokens) ??
    tokenCount(raw.cache_read_input_tokens) ??
    tokenCount(raw.cached_tokens);
  const reasoning =
    tokenCount(details("completion_tokens_details").reasoning_tokens) ??
    tokenCount(details("output_tokens_details").reasoning_tokens) ??
    tokenCount(raw.reasoning_tokens);
  if (cached !== undefined) usage.cachedInputTokens = cached;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}

/**
 * Assembles chat-completion stream chunks into ModelEvents, tolerating what OpenAI-compatible servers
 * really send. `push` returns the events a chunk produces at once (text and reasoning deltas) and
 * throws a ProviderStreamError when the chunk is an error object; `finish` returns the tool calls and
 * the terminal `done`/`error` once the stream has ended. Only choice 0 is read.
 *
 * Tool-call fragments are matched to a call by `index` when present, otherwise by `id`, otherwise to
 * the latest call. A fragment starts a new call, even under a reused index, when it carries a name, the
 * current call's arguments are already complete JSON, and its non-empty id differs, or its name
 * differs, or neither has an id and it brings arguments of its own. A name that arrives in pieces
 * before the arguments is put together; later `id`/`name` repeats never overwrite or append; a repeat
 * of a whole call's arguments is dropped.
 */
export class ChatChunkAccumulator {
  private readonly calls: CallSlot[] = [];
  private finishReason: string | undefined;
  private usage: Usage | undefined;
  private textChars = 0;
  /** A delta carried `reasoning_content` (even null: DeepSeek sends it beside every content delta in thinking mode). */
  private reasoningContent = false;
  /** Characters counted against `maxOutputChars`: text, reasoning, tool-call names and arguments. */
  private outputChars = 0;

  constructor(
    private readonly ids: IdGenerator,
    private readonly maxOutputChars = MAX_MODEL_OUTPUT_CHARS,
    private readonly maxToolCalls = MAX_TOOL_CALLS_PER_ANSWER,
  ) {}

  push(chunk: unknown): ModelEvent[] {
    const events: ModelEvent[] = [];
    const failure = streamChunkFailure(chunk);
    if (failure) throw new ProviderStreamError(failure);
    if (!isRecord(chunk)) return events;
    const usage = normaliseUsage(chunk.usage);
    if (usage) this.usage = usage;
    const choices = chunk.choices;
    if (!Array.isArray(choices)) return events;
    for (const choice of choices) {
      if (!isRecord(choice) || (choice.index !== undefined && choice.index !== 0)) continue;
      const choiceUsage = normaliseUsage(choice.usage);
      if (choiceUsage) this.usage = choiceUsage;
      if (typeof choice.finish_reason === "string" && choice.finish_reason !== "") this.finishReason = choice.finish_reason;
      const delta = choice.delta;
      if (!isRecord(delta)) continue;
      if ("reasoning_content" in delta) this.reasoningContent = true;
      const reasoning = nonEmptyString(delta.reasoning_content) || nonEmptyString(delta.reasoning) || nonEmptyString(delta.reasoning_text);
      if (reasoning) {
        // Reasoning is streamed, logged and kept as the message's thinking: it counts like text.
        this.countOutput(reasoning.length);
        events.push({ type: "reasoning_delta", text: reasoning });
      }
      // OpenAI sends a refusal in its own member; it is the answer the user gets.
      for (const text of [delta.content, delta.refusal]) {
        if (typeof text !== "string" || text === "") continue;
        this.countOutput(text.length);
        this.textChars += text.length;
        events.push({ type: "text_delta", text });
      }
      if (Array.isArray(delta.tool_calls)) for (const fragment of delta.tool_calls) this.addFragment(fragment);
    }
    return events;
  }

  /** Refuses output past `maxOutputChars` (the chunk that would pass it is not taken). */
  private countOutput(chars: number): void {
    if (this.outputChars + chars <= this.maxOutputChars) {
      this.outputChars += chars;
      return;
    }
    throw new ProviderStreamError({
      code: "output_too_large",
      message: `the model's answer passed ${this.maxOutputChars} characters of text, reasoning and tool calls; it was cut there (${this.textChars} characters of text kept)`,
      retryable: false,
    });
  }

  /** Tool calls the provider has begun sending (emitted only once the answer ends). */
  get begunCalls(): number {
    return this.calls.length;
  }

  /** The provider said how the answer ended: it is whole, whatever happens to the connection after. */
  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  /** The terminal events after the stream ended cleanly. */
  finish(): ModelEvent[] {
    const reason = this.finishReason;
    if (reason === undefined) {
      return [
        modelError(
          "stream_incomplete",
          `the provider's stream ended without a finish reason (after ${this.textChars} characters of text and ${this.calls.length} tool call(s))`,
        ),
      ];
    }
    if (reason === "content_filter")
      return [modelError("content_filtered", "the provider stopped the answer with finish_reason 'content_filter'")];
    if (reason === "error") return [modelError("provider_error", "the provider ended the stream with finish_reason 'error'")];
    // DeepSeek's word for an answer it cut short for want of capacity: what came is not the answer.
    if (reason === "insufficient_system_resource")
      return [
        modelError(
          "provider_error",
          "the provider cut the answer short: finish_reason 'insufficient_system_resource' (it ran out of capacity)",
        ),
      ];
    const events: ModelEvent[] = this.completedCalls();
    // Providers disagree on the word for a normal end (stop, end, eos, end_turn, tool_calls without
    // calls, ...); anything but the reasons above and length ended a usable answer: STOP.
    const stopReason: ModelStopReason = events.length > 0 ? "TOOL_CALLS" : reason === "length" ? "LENGTH" : "STOP";
    events.push({
      type: "done",
      stopReason,
      ...(this.usage ? { usage: this.usage } : {}),
      ...(this.reasoningContent ? { thinkingField: "reasoning_content" as const } : {}),
    });
    return events;
  }

  private addFragment(fragment: unknown): void {
    if (!isRecord(fragment)) return;
    const fn = isRecord(fragment.function) ? fragment.function : {};
    const id = identifier(fragment.id);
    const name = identifier(fn.name);
    // Some servers send the arguments as an already-parsed object.
    const args = isRecord(fn.arguments) ? JSON.stringify(fn.arguments) : nonEmptyString(fn.arguments);
    const index = typeof fragment.index === "number" ? fragment.index : undefined;

    let slot = this.findSlot(index, id);
    if (slot && this.startsNewCall(slot, id, name, args)) slot = undefined;
    // An empty fragment begins no call (it is skipped at the end too), so it does not count as one.
    if (!slot && id === "" && name === "" && args === "") return;
    if (!slot) {
      // Each call is answered, logged and judged: a flood of them in one answer would hold the isolate.
      if (this.calls.length >= this.maxToolCalls) {
        throw new ProviderStreamError({
          code: "output_too_large",
          message: `the model's answer held more than ${this.maxToolCalls} tool calls; it was cut there (${this.textChars} characters of text kept)`,
          retryable: false,
        });
      }
      slot = { index, seen: this.calls.length, id: "", name: "", args: new ArgumentsText(), extra: undefined };
      this.calls.push(slot);
    }
    if (slot.id === "") slot.id = id;
    if (slot.extra === undefined && isRecord(fragment.extra_content)) {
      const extra = fragment.extra_content;
      const chars = JSON.stringify(extra).length;
      // Sent back whole or not at all: one cut would be refused as a forged signature.
      if (chars <= MAX_TOOL_CALL_EXTRA_CHARS) {
        this.countOutput(chars);
        slot.extra = extra;
      }
    }
    if (name !== "" && name !== slot.name && slot.args.text === "" && slot.name.length < MAX_TOOL_NAME_CHARS) {
      // Before the arguments, another name is the rest of this one: LM Studio and Gemini stream a name
      // in pieces ("re" + "ad"); a server that resends the name so far ("re", "read") replaces it.
      const whole = name.startsWith(slot.name) ? name : slot.name + name;
      this.countOutput(whole.length - slot.name.length);
      // No tool has a longer name; one that is would be stored, streamed and sent back every turn.
      slot.name = whole.length > MAX_TOOL_NAME_CHARS ? `${sliceWhole(whole, MAX_TOOL_NAME_CHARS)}…` : whole;
    }
    // A whole call sent again (some proxies end with an aggregate chunk): appended, it would be invalid JSON.
    if (args !== "" && args === slot.args.text && isCompleteJson(args)) return;
    this.countOutput(args.length);
    slot.args.append(args);
  }

  private findSlot(index: number | undefined, id: string): CallSlot | undefined {
    for (let i = this.calls.length - 1; i >= 0; i--) {
      const slot = this.calls[i]!;
      if (index !== undefined ? slot.index === index : id !== "" && slot.id === id) return slot;
    }
    return index === undefined ? this.calls.at(-1) : undefined;
  }

  private startsNewCall(slot: CallSlot, id: string, name: string, args: string): boolean {
    if (name === "" || slot.name === "") return false;
    // The same call sent again whole (with or without its id) is that call.
    if (name === slot.name && args !== "" && args === slot.args.text && (id === "" || id === slot.id)) return false;
    const idDiffers = id !== "" && slot.id !== "" && id !== slot.id;
    const anonymousWholeCall = id === "" && args !== "" && slot.args.hasContent;
    // Once a call has its arguments, another name is another call (before, it may be a name sent in pieces).
    const nameDiffers = name !== slot.name && slot.args.hasContent;
    return (idDiffers || anonymousWholeCall || nameDiffers) && slot.args.isWholeObject;
  }

  private completedCalls(): ModelEvent[] {
    const ordered = [...this.calls].sort((a, b) => (a.index ?? a.seen) - (b.index ?? b.seen) || a.seen - b.seen);
    const usedIds = new Set<string>();
    const events: ModelEvent[] = [];
    for (const slot of ordered) {
      if (slot.name === "" && !slot.args.hasContent) continue; // a stray empty fragment, not a call
      // Keep the provider's id verbatim; make one up when it is missing, already taken, or longer
      // than an import of the session takes back.
      const keep = slot.id !== "" && !usedIds.has(slot.id) && slot.id.length <= MAX_IMPORTED_ID_CHARS;
      const id = keep ? slot.id : this.ids.next("toolCall");
      usedIds.add(id);
      const parsed = parseArguments(slot.args.text);
      const call: ToolCall = {
        id,
        name: slot.name || UNKNOWN_TOOL_NAME,
        arguments: parsed.arguments,
        ...(slot.extra ? { extraContent: slot.extra } : {}),
      };
      let invalid: InvalidToolCall | undefined = parsed.invalid;
      if (slot.name === "") {
        invalid = {
          code: "missing_tool_name",
          message: "the model sent a tool call without a function name",
          rawArguments: slot.args.text,
        };
      }
      events.push(invalid ? { type: "tool_call", call, invalid } : { type: "tool_call", call });
    }
    return events;
  }
}

/** Empty or missing argument text means `{}`; anything that is not a JSON object is reported, not thrown. */
export function parseArguments(raw: string): { arguments: Record<string, unknown>; invalid?: InvalidToolCall } {
  if (raw.trim() === "") return { arguments: {} };
  // Stored and exported as they are, deeper arguments would overflow the stack that writes the log
  // (hunt 70: 20,000 levels ended the run with internal_error) and fail the import of the export.
  if (nestsDeeperThan(raw, MAX_JSON_DEPTH)) {
    return {
      arguments: {},
      invalid: {
        code: "invalid_arguments",
        message: `tool call arguments nest arrays and objects deeper than ${MAX_JSON_DEPTH} levels; they were ${quoteStart(raw)}`,
        rawArguments: raw,
      },
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    // The call goes back to the model with `{}` for arguments, so the error quotes what it sent, after
    // the first sentence: the trace keeps only that (the arguments may hold a file's text, a secret).
    return {
      arguments: {},
      invalid: {
        code: "invalid_arguments",
        message: `tool call arguments are not valid JSON. The parser said: ${reason}; they were ${quoteStart(raw)}`,
        rawArguments: raw,
      },
    };
  }
  if (!isRecord(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    return {
      arguments: {},
      invalid: { code: "invalid_arguments", message: `tool call arguments must be a JSON object, got ${kind}`, rawArguments: raw },
    };
  }
  return { arguments: value };
}

/** The first RAW_ARGUMENTS_QUOTED characters of `raw` as a JSON string, marked when cut. */
function quoteStart(raw: string): string {
  if (raw.length <= RAW_ARGUMENTS_QUOTED) return JSON.stringify(raw);
  return `${JSON.stringify(raw.slice(0, RAW_ARGUMENTS_QUOTED))} (first ${RAW_ARGUMENTS_QUOTED} of ${raw.length} characters)`;
}

const RAW_ARGUMENTS_QUOTED = 200;
