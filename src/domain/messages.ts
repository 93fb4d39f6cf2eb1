import { z } from "zod";
import { isoTime, nonBlank } from "./schema";

/** Why an assistant message ended. */
export const StopReason = z.enum(["STOP", "TOOL_CALLS", "LENGTH", "ERROR", "ABORTED", "MAX_TURNS", "TIMEOUT"]);
export type StopReason = z.infer<typeof StopReason>;

/** A tool call as the model asked for it; `arguments` is always a parsed JSON object. */
export const ToolCall = z.strictObject({
  id: nonBlank,
  name: nonBlank,
  arguments: z.record(z.string(), z.unknown()),
  /**
   * The provider's `extra_content` of the call, kept as sent and sent back with it: Gemini refuses the
   * next turn without the thought signature it holds.
   */
  extraContent: z.record(z.string(), z.unknown()).optional(),
});
export type ToolCall = z.infer<typeof ToolCall>;

const tokens = z.number().int().nonnegative();

/**
 * Token counts reported by the provider for one assistant message. `cachedInputTokens` (part of
 * `inputTokens`) and `reasoningTokens` (part of `outputTokens`) only when the provider reports them.
 */
export const Usage = z.strictObject({
  inputTokens: tokens,
  outputTokens: tokens,
  totalTokens: tokens,
  cachedInputTokens: tokens.optional(),
  reasoningTokens: tokens.optional(),
});
export type Usage = z.infer<typeof Usage>;

const messageBase = {
  id: nonBlank,
  sessionId: nonBlank,
  /** The previous message of the conversation; null for the first. */
  parentId: nonBlank.nullable(),
  createdAt: isoTime,
};

export const UserMessage = z.strictObject({
  kind: z.literal("user"),
  ...messageBase,
  text: z.string(),
});
export type UserMessage = z.infer<typeof UserMessage>;

export const AssistantMessage = z.strictObject({
  kind: z.literal("assistant"),
  ...messageBase,
  text: z.string(),
  stopReason: StopReason,
  toolCalls: z.array(ToolCall).optional(),
  usage: Usage.optional(),
  /** What the call cost in US dollars, when the model's prices are known. */
  cost: z.number().nonnegative().optional(),
  /** Reasoning text the provider streamed; kept for the record, and sent back only as `thinkingField` says. */
  thinking: z.string().optional(),
  /**
   * The provider streamed its reasoning in `reasoning_content` (DeepSeek, Kimi, vLLM): a message that
   * called tools sends it back there (empty when there was none), as DeepSeek's and Kimi's thinking
   * modes require of a tool-call turn. Other thinking is never sent back.
   */
  thinkingField: z.literal("reasoning_content").optional(),
});
export type AssistantMessage = z.infer<typeof AssistantMessage>;

export const ToolResultMessage = z.strictObject({
  kind: z.literal("tool_result"),
  ...messageBase,
  toolCallId: nonBlank,
  toolName: nonBlank,
  resultText: z.string(),
  error: z.boolean(),
});
export type ToolResultMessage = z.infer<typeof ToolResultMessage>;

/**
 * The messages before `firstKeptMessageId` were summarised: from here on the model is sent `summary`
 * plus the messages from `firstKeptMessageId` on (this record itself excluded). Nothing is removed from
 * the log. `tokensBefore`/`tokensAfter` are the estimated context before and after.
 */
export const CompactionMessage = z.strictObject({
  kind: z.literal("compaction"),
  ...messageBase,
  summary: z.string(),
  firstKeptMessageId: nonBlank,
  tokensBefore: tokens,
  tokensAfter: tokens,
  /** What the summary call used and cost, when reported / priced. */
  usage: Usage.optional(),
  cost: z.number().nonnegative().optional(),
});
export type CompactionMessage = z.infer<typeof CompactionMessage>;

/** Every message of a conversation, discriminated by `kind`. */
export const AgentMessage = z.discriminatedUnion("kind", [UserMessage, AssistantMessage, ToolResultMessage, CompactionMessage]);
export type AgentMessage = z.infer<typeof AgentMessage>;
export type MessageKind = AgentMessage["kind"];
export const MESSAGE_KINDS: readonly MessageKind[] = ["user", "assistant", "tool_result", "compaction"];
