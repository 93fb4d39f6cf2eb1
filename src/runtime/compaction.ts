import {
  type AgentMessage,
  CHARS_PER_TOKEN,
  type CompactionMessage,
  clipText,
  type ErrorCode,
  sliceWhole,
  type ToolCall,
  type Usage,
} from "../domain";
import { costOf, type ModelClient, type ModelPrice, type ModelRequest } from "../model";
import {
  type CompactionCut,
  type ContextBudget,
  chooseCut,
  cutMiddle,
  estimateContextTokens,
  estimateMessageTokens,
  estimateTextTokens,
  type ModelView,
  maxSummaryChars,
  modelView,
} from "./context-window";

/** Why a compaction ran: the estimate passed the threshold, the provider said the request overflowed, or a client asked. */
export type CompactionReason = "threshold" | "overflow" | "manual";

/** A tool result is cut to this many characters in the text the summariser reads (pi's figure). */
export const SUMMARY_TOOL_RESULT_CHARS = 2_000;

export const SUMMARY_SYSTEM_PROMPT = [
  "You summarise the conversation of a coding agent so that the agent can continue the work from the summary alone.",
  "Write markdown with exactly these sections: ## Goal, ## Decisions, ## Files (each file read or changed, with its path and what matters about it), ## Open problems, ## Next steps.",
  "Keep paths, names, commands and error messages exact. Be concise; do not continue the conversation or answer it.",
].join("\n");

export interface CompactionInput {
  /** Every message of the session, in log order (earlier compaction records included). */
  history: readonly AgentMessage[];
  model: ModelClient;
  budget: ContextBudget;
  /** The system prompt and tool schemas of the agent's requests, in estimated tokens. */
  fixedTokens: number;
  /** Extra instructions for the summary (a manual compaction's `instructions`). */
  instructions?: string;
  signal: AbortSignal;
  /** The model's prices, when known: the record then carries the summary call's cost. */
  price?: ModelPrice | null;
  /**
   * Assistant turns of the whole session so far (`history` may start at a compaction): a replay
   * plays the recorded summary of this point (see ReplayModelClient).
   */
  assistantTurns?: number;
  /**
   * How an abort of `signal` is logged: the code of its `compaction_failed` (a run's abort or
   * timeout). Without it, or when it gives null (a manual compaction cut off by its session's
   * deletion: nothing is left to log to), an abort logs nothing.
   */
  abortedAs?: () => "run_aborted" | "run_timeout" | null;
}

/** A compaction record without its envelope (id, session, parent, time), or why there is none. */
export type CompactionResult =
  | {
      ok: true;
      record: Omit<CompactionMessage, "id" | "sessionId" | "parentId" | "createdAt">;
    }
  | { ok: false; code: ErrorCode | "aborted"; message: string };

/**
 * Summarises the older part of the model's view of `history` (`view`, cut at `cut`) with the model,
 * keeping the newest ~`keepRecentTokens` word for word (see `chooseCut`). The summary is the model's structured text plus
 * the lists of files read and changed, taken from the tool calls themselves. Never throws.
 */
async function summarise(input: CompactionInput, view: ModelView, cut: CompactionCut): Promise<CompactionResult> {
  const tokensBefore = estimateContextTokens(view, input.fixedTokens);
  const request = summaryRequest(input, cut.previous?.summary ?? null, cut.older);

  let text = "";
  let usage: Usage | undefined;
  for await (const event of input.model.stream(request, input.signal)) {
    if (event.type === "text_delta") text += event.text;
    else if (event.type === "done") usage = event.usage;
    else if (event.type === "error") return { ok: false, code: event.code, message: `the summary failed: ${event.message}` };
  }
  if (text.trim() === "") return { ok: false, code: "provider_error", message: "the model answered the summary request with no text" };

  const firstKept = cut.kept[0]!;
  // The previous summary lists the files of everything before it: a history that starts at a
  // compaction (MessageHistory) no longer holds those messages.
  const files = filesTouched(
    input.history.slice(0, input.history.indexOf(firstKept)),
    cut.previous ? listedFiles(cut.previous.summary) : undefined,
  );
  // The file lists come from the tool calls themselves; any the model (or a replayed recording) wrote are replaced.
  const body = text.replace(/\n*<(read-files|modified-files)>[\s\S]*?<\/\1>/g, "").trim();
  // Bounded (see COMPACTION_SUMMARY_RESERVE_SHARE): the lists take at most a quarter, the text the rest.
  const maxChars = maxSummaryChars(input.budget);
  const lists = boundedFileLists(files, Math.floor(maxChars / 4));
  const summary = `${cutMiddle(body, maxChars - lists.length)}${lists}`;
  const draft = { kind: "compaction" as const, summary, firstKeptMessageId: firstKept.id, tokensBefore, tokensAfter: 0 };
  const tokensAfter =
    input.fixedTokens + estimateMessageTokens({ ...draft, id: "-", sessionId: "-", parentId: null, createdAt: "" }) + sumTokens(cut.kept);
  const cost = usage && input.price ? { cost: costOf(usage, input.price) } : {};
  return { ok: true, record: { ...draft, tokensAfter, ...(usage ? { usage } : {}), ...cost } };
}

/** Where a compaction writes: its events, and the record (the log gives it id, parent and time). */
export interface CompactionLog {
  event(
    body:
      | { type: "compaction_started"; reason: CompactionReason }
      | { type: "compaction_finished"; messageId: string; tokensBefore: number; tokensAfter: number }
      | { type: "compaction_failed"; code: ErrorCode; message: string },
  ): void;
  append(record: Extract<CompactionResult, { ok: true }>["record"]): CompactionMessage;
}

/**
 * One compaction with its events: `compaction_started`, then the record and `compaction_finished`, or
 * `compaction_failed` (for an abort only as `abortedAs` says). The runtime and a manual compaction share it.
 */
export async function compact(
  input: CompactionInput,
  reason: CompactionReason,
  log: CompactionLog,
): Promise<{ ok: true; message: CompactionMessage } | { ok: false; code: ErrorCode | "aborted"; message: string }> {
  const view = modelView(input.history, input.budget);
  const cut = chooseCut(view.messages, input.budget.keepRecentTokens) ?? (reason === "manual" ? summaryOnly(input, view) : null);
  // Nothing to summarise is a refusal, not a compaction that failed: the log gets no record of it.
  if (!cut) return { ok: false, code: "nothing_to_compact", message: "the history is too short to compact" };
  log.event({ type: "compaction_started", reason });
  const result = await summarise(input, view, cut);
  if (!result.ok) {
    if (result.code !== "aborted") log.event({ type: "compaction_failed", code: result.code, message: result.message });
    else {
      const code = input.abortedAs?.();
      if (!code) return result;
      // A manual compaction has no run: it is the compaction that was aborted or ran out of time.
      const why =
        reason === "manual"
          ? `the compaction ${code === "run_timeout" ? "timed out" : "was aborted"}`
          : `the run ${code === "run_timeout" ? "timed out" : "was aborted"} during the compaction`;
      log.event({ type: "compaction_failed", code, message: `${why}; nothing was compacted` });
    }
    return result;
  }
  const message = log.append(result.record);
  log.event({ type: "compaction_finished", messageId: message.id, tokensBefore: message.tokensBefore, tokensAfter: message.tokensAfter });
  return { ok: true, message };
}

/**
 * A cut that only rewrites the summary, for a client that asks: the latest summary is longer than one
 * made under this budget (stored before summaries were bounded, or under a larger window; requests
 * send it cut in the middle) and nothing older than the kept messages is left to summarise. Null
 * otherwise: a run never asks for it, so a history that stays large is not summarised turn after turn.
 */
function summaryOnly(input: CompactionInput, view: ModelView): CompactionCut | null {
  const [first, ...kept] = view.messages;
  if (first?.kind !== "compaction" || kept.length === 0) return null;
  const stored = input.history.find((m): m is CompactionMessage => m.id === first.id);
  return stored && stored.summary.length > maxSummaryChars(input.budget) ? { previous: first, older: [], kept } : null;
}

/** The request that asks for the summary: one user message holding the conversation as plain text. */
function summaryRequest(input: CompactionInput, previousSummary: string | null, older: readonly AgentMessage[]): ModelRequest {
  // A summary stored before summaries were bounded, or under a larger window, is cut as a new one would be.
  const previous = previousSummary === null ? null : cutMiddle(previousSummary, maxSummaryChars(input.budget));
  // The summary request must fit the window too: keep the newest lines that do, and say so.
  const room = input.budget.contextWindow - input.budget.reserveTokens - estimateTextTokens(SUMMARY_SYSTEM_PROMPT) - 200;
  const lines = older.map(serialise);
  const parts: string[] = [];
  let tokens = estimateTextTokens(previous ?? "") + estimateTextTokens(input.instructions ?? "");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    const lineTokens = estimateTextTokens(line) + 1;
    if (tokens + lineTokens <= room) {
      tokens += lineTokens;
      parts.unshift(line);
      continue;
    }
    if (parts.length > 0) parts.unshift(omitted(i + 1));
    else {
      // The newest message alone is larger than the window (an import, or a session that ran with a
      // larger one): its start and end stand for it, or no summary request would ever fit.
      parts.unshift(cutMiddle(line, Math.max(0, room - tokens - OMISSION_TOKENS) * CHARS_PER_TOKEN));
      if (i > 0) parts.unshift(omitted(i));
    }
    break;
  }
  const sections = [
    ...(previous
      ? [`<previous-summary>\n${previous}\n</previous-summary>`, "Update the previous summary with the conversation below."]
      : []),
    `<conversation>\n${parts.join("\n")}\n</conversation>`,
    ...(input.instructions ? [`Additional instructions: ${input.instructions}`] : []),
  ];
  const user: AgentMessage = {
    kind: "user",
    id: "m_summary_request",
    sessionId: input.history[0]?.sessionId ?? "s_summary",
    parentId: null,
    createdAt: new Date(0).toISOString(),
    text: sections.join("\n\n"),
  };
  return {
    system: SUMMARY_SYSTEM_PROMPT,
    messages: [user],
    tools: [],
    purpose: "compaction",
    ...(input.assistantTurns !== undefined ? { assistantTurns: input.assistantTurns } : {}),
  };
}

/** Room kept for the omission notes of a summary request. */
const OMISSION_TOKENS = 40;

const omitted = (messages: number) => `[${messages} earlier message(s) omitted: they did not fit the summary request]`;

function serialise(message: AgentMessage): string {
  switch (message.kind) {
    case "user":
      return `[User]: ${message.text}`;
    case "assistant": {
      const calls = (message.toolCalls ?? []).map(callLine).join("; ");
      return [message.text ? `[Assistant]: ${message.text}` : "", calls ? `[Assistant tool calls]: ${calls}` : ""]
        .filter(Boolean)
        .join("\n");
    }
    case "tool_result": {
      const text = message.resultText;
      const cut =
        text.length > SUMMARY_TOOL_RESULT_CHARS ? `${sliceWhole(text, SUMMARY_TOOL_RESULT_CHARS)}... [${text.length} characters]` : text;
      return `[Tool result${message.error ? " (error)" : ""} ${message.toolName}]: ${cut}`;
    }
    case "compaction":
      return `[Earlier summary]: ${message.summary}`;
  }
}

function callLine(call: ToolCall): string {
  const args = Object.entries(call.arguments).map(([k, v]) => {
    const value = typeof v === "string" ? v : JSON.stringify(v);
    return `${k}=${clipText(value, 201)}`;
  });
  return `${call.name}(${args.join(", ")})`;
}

const READ_TOOLS = new Set(["read"]);
const WRITE_TOOLS = new Set(["write", "edit"]);

/**
 * The paths the tool calls in `messages` read and changed (a changed file is not listed as read),
 * added to `before` (the lists of a previous summary).
 */
export function filesTouched(
  messages: readonly AgentMessage[],
  before: { read: readonly string[]; modified: readonly string[] } = { read: [], modified: [] },
): { read: string[]; modified: string[] } {
  const read = new Set<string>(before.read);
  const modified = new Set<string>(before.modified);
  for (const message of messages) {
    if (message.kind !== "assistant") continue;
    for (const call of message.toolCalls ?? []) {
      const path = call.arguments.path;
      if (typeof path !== "string" || path === "") continue;
      if (WRITE_TOOLS.has(call.name)) modified.add(path);
      else if (READ_TOOLS.has(call.name)) read.add(path);
    }
  }
  return { read: [...read].filter((p) => !modified.has(p)).sort(), modified: [...modified].sort() };
}

function fileList(tag: string, paths: readonly string[]): string {
  return paths.length > 0 ? `\n\n<${tag}>\n${paths.join("\n")}\n</${tag}>` : "";
}

/**
 * Both file lists within `maxChars`: while they are longer, the oldest path goes (from the longer
 * list), and a last line says how many earlier ones are not listed.
 */
function boundedFileLists(files: { read: string[]; modified: string[] }, maxChars: number): string {
  // Each list is shown from `from` on; the length is kept as paths go, and measured again when it
  // looks to fit (the count lines change it too): one pass, not a render per path.
  const from = { read: 0, modified: 0 };
  const render = () =>
    fileList("read-files", withDropped(files.read, from.read)) + fileList("modified-files", withDropped(files.modified, from.modified));
  let length = render().length;
  while (length > maxChars && from.read + from.modified < files.read.length + files.modified.length) {
    const list = files.read.length - from.read >= files.modified.length - from.modified ? "read" : "modified";
    length -= files[list][from[list]]!.length + 1;
    from[list]++;
    if (length <= maxChars) length = render().length;
  }
  return render();
}

const withDropped = (paths: string[], dropped: number) =>
  dropped > 0 ? [...paths.slice(dropped), `${DROPPED_MARK}${dropped} earlier path(s) not listed]`] : paths;
/** Starts the line that counts the paths a bounded list left out (never a path: `listedFiles` skips it). */
const DROPPED_MARK = "[… ";

/** The file lists a summary carries (`fileList`'s blocks), empty when it has none. */
export function listedFiles(summary: string): { read: string[]; modified: string[] } {
  const list = (tag: string) => {
    const block = new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`).exec(summary);
    return block ? block[1]!.split("\n").filter((p) => p !== "" && !p.startsWith(DROPPED_MARK)) : [];
  };
  return { read: list("read-files"), modified: list("modified-files") };
}

function sumTokens(messages: readonly AgentMessage[]): number {
  return messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
}
