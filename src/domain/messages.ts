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
});
export type ToolCall = z.infer<typeof ToolCall>;

/** Token counts reported by the provider for one assistant message. */
export const Usage = z.strictObject({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  totalTokens: z.number().int().nonnegative(),
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

/** Every message of a conversation, discriminated by `kind`. */
export const AgentMessage = z.discriminatedUnion("kind", [UserMessage, AssistantMessage, ToolResultMessage]);
export type AgentMessage = z.infer<typeof AgentMessage>;
export type MessageKind = AgentMessage["kind"];
export const MESSAGE_KINDS: readonly MessageKind[] = ["user", "assistant", "tool_result"];
