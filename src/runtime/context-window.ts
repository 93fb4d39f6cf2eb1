import {
  type AgentMessage,
  CHARS_PER_TOKEN,
  COMPACTION_KEEP_RECENT_TOKENS,
  COMPACTION_MAX_WINDOW_SHARE,
  COMPACTION_RESERVE_TOKENS,
  COMPACTION_SUMMARY_RESERVE_SHARE,
  type CompactionMessage,
  sliceWhole,
  sliceWholeFrom,
  TOOL_OUTPUT_MAX_BYTES,
  TOOL_RESULT_MAX_WINDOW_SHARE,
  type ToolDefinition,
} from "../domain";

/** How much of a model's context window a run may use, and how compaction divides it. */
export interface ContextBudget {
  contextWindow: number;
  /** Compaction starts when the estimated request passes `contextWindow - reserveTokens`. */
  reserveTokens: number;
  /** Compaction keeps about this many tokens of the newest messages. */
  keepRecentTokens: number;
  /** The most one tool result may take in the context. */
  maxResultTokens: number;
}

/** The budget for a window: the defaults, each capped to a share of a small window. */
export function contextBudget(contextWindow: number): ContextBudget {
  const share = Math.floor(contextWindow * COMPACTION_MAX_WINDOW_SHARE);
  return {
    contextWindow,
    reserveTokens: Math.min(COMPACTION_RESERVE_TOKENS, share),
    keepRecentTokens: Math.min(COMPACTION_KEEP_RECENT_TOKENS, share),
    maxResultTokens: Math.min(
      Math.floor(TOOL_OUTPUT_MAX_BYTES / CHARS_PER_TOKEN),
      Math.floor(contextWindow * TOOL_RESULT_MAX_WINDOW_SHARE),
    ),
  };
}

/** The character-based estimate of a text's tokens. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/**
 * A message's tokens as the model sees it (a few tokens of framing each): `thinking` only where it is
 * sent back (a tool-call turn of a `reasoning_content` provider), a call's `extraContent` always.
 */
export function estimateMessageTokens(message: AgentMessage): number {
  const framing = 4;
  switch (message.kind) {
    case "user":
      return framing + estimateTextTokens(message.text);
    case "assistant": {
      const toolCalls = message.toolCalls ?? [];
      const calls = toolCalls.reduce(
        (n, c) =>
          n +
          c.id.length +
          c.name.length +
          JSON.stringify(c.arguments).length +
          (c.extraContent ? JSON.stringify(c.extraContent).length : 0),
        0,
      );
      const thinking = toolCalls.length > 0 && message.thinkingField === "reasoning_content" ? (message.thinking ?? "") : "";
      return framing + estimateTextTokens(message.text) + estimateTextTokens(thinking) + Math.ceil(calls / CHARS_PER_TOKEN);
    }
    case "tool_result":
      return framing + estimateTextTokens(message.resultText) + Math.ceil(message.toolCallId.length / CHARS_PER_TOKEN);
    case "compaction":
      return framing + 30 + estimateTextTokens(message.summary);
  }
}

/** The fixed part of every request: the system prompt and the tool schemas. */
export function estimateFixedTokens(system: string, tools: readonly ToolDefinition[]): number {
  return estimateTextTokens(system) + estimateTextTokens(tools.length > 0 ? JSON.stringify(tools) : "");
}

/**
 * What the model is sent of a history. `messages`: after the latest compaction record, that record
 * (its summary) followed by every non-compaction message from its `firstKeptMessageId` on; without
 * one, everything. `freshFrom`: the first index of `messages` that was logged after that record (usage
 * reported before a compaction measured the old, longer context). The log itself is never changed.
 */
export interface ModelView {
  messages: AgentMessage[];
  freshFrom: number;
}

/**
 * With `budget`, a summary longer than one made under it (stored before summaries were bounded, or
 * under a larger window) is sent cut as a new one would be: it made every request of its session
 * overflow, with nothing older left to compact (hunt 81).
 */
export function modelView(history: readonly AgentMessage[], budget?: ContextBudget): ModelView {
  const at = findLastIndex(history, (m) => m.kind === "compaction");
  if (at < 0) return { messages: [...history], freshFrom: 0 };
  const stored = history[at] as CompactionMessage;
  const maxChars = budget ? maxSummaryChars(budget) : Number.POSITIVE_INFINITY;
  const compaction = stored.summary.length > maxChars ? { ...stored, summary: cutMiddle(stored.summary, maxChars) } : stored;
  const first = history.findIndex((m) => m.id === compaction.firstKeptMessageId);
  const kept = (first < 0 || first > at ? [] : history.slice(first, at)).filter((m) => m.kind !== "compaction");
  const fresh = history.slice(at + 1).filter((m) => m.kind !== "compaction");
  return { messages: [compaction, ...kept, ...fresh], freshFrom: 1 + kept.length };
}

/**
 * The estimated tokens of a request holding `view`: the provider's last reported usage (input plus
 * output of the newest fresh assistant message that has usage) plus the character-based estimate of
 * every message after it; without such usage, the fixed part plus the estimate of every message.
 */
export function estimateContextTokens(view: ModelView, fixedTokens: number): number {
  const { messages, freshFrom } = view;
  const at = findLastIndex(
    messages,
    (m, i) => i >= freshFrom && m.kind === "assistant" && m.usage !== undefined && m.usage.inputTokens > 0,
  );
  const anchor = at >= 0 ? messages[at] : undefined;
  let tokens = anchor?.kind === "assistant" && anchor.usage ? anchor.usage.inputTokens + anchor.usage.outputTokens : fixedTokens;
  for (const message of messages.slice(at + 1)) tokens += estimateMessageTokens(message);
  return tokens;
}

/** Where to cut a view for compaction: the summarised messages, the kept ones, and the previous summary. */
export interface CompactionCut {
  /** The previous compaction record, when the view starts with one (its summary is updated). */
  previous: CompactionMessage | null;
  /** The messages to summarise, oldest first. */
  older: AgentMessage[];
  /** The messages kept word for word; the first one's id becomes `firstKeptMessageId`. */
  kept: AgentMessage[];
}

/**
 * Keeps the newest messages that fit `keepRecentTokens` and summarises the rest. The kept part starts
 * at a user or assistant message, never at a tool result, so a tool call is never split from its
 * result; when even the newest turn is larger than the budget, that turn alone is kept. Null when there
 * is nothing older to summarise.
 */
export function chooseCut(view: readonly AgentMessage[], keepRecentTokens: number): CompactionCut | null {
  // A previous summary is always re-summarised with the messages after it.
  const previous = view[0]?.kind === "compaction" ? view[0] : null;
  const body = previous ? view.slice(1) : [...view];
  let start = -1;
  let tokens = 0;
  for (let i = body.length - 1; i >= 0; i--) {
    tokens += estimateMessageTokens(body[i]!);
    const kind = body[i]!.kind;
    const boundary = kind === "user" || kind === "assistant";
    if (tokens > keepRecentTokens && start >= 0) break;
    if (boundary) start = i;
  }
  if (start <= 0) return null;
  return { previous, older: body.slice(0, start), kept: body.slice(start) };
}

/** The longest summary, file lists included (see COMPACTION_SUMMARY_RESERVE_SHARE). */
export function maxSummaryChars(budget: ContextBudget): number {
  return Math.floor(budget.reserveTokens * COMPACTION_SUMMARY_RESERVE_SHARE) * CHARS_PER_TOKEN;
}

/** `text` cut to at most `maxChars` characters: its start and end, with a note of what was left out between them (only the note when not even that fits). */
export function cutMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const note = (n: number) => `\n[... ${n} characters omitted ...]\n`;
  const keep = Math.max(0, maxChars - note(text.length).length);
  const head = Math.ceil(keep / 2);
  const tail = keep - head;
  return `${sliceWhole(text, head)}${note(text.length - keep)}${tail > 0 ? sliceWholeFrom(text, text.length - tail) : ""}`;
}

function findLastIndex<T>(items: readonly T[], test: (item: T, index: number) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!, i)) return i;
  return -1;
}
