import { z } from "zod";
import { DENIAL_CODES, ERROR_CODES, RUN_ERROR_CODES } from "./errors";
import { StopReason } from "./messages";
import { isoTime, nonBlank } from "./schema";

const eventBase = {
  eventId: nonBlank,
  sessionId: nonBlank,
  createdAt: isoTime,
};

/** A run began; every later event of the run belongs to `runId` until agent_completed/agent_error. */
export const AgentStarted = z.strictObject({ type: z.literal("agent_started"), ...eventBase, runId: nonBlank });

export const UserMessageAppended = z.strictObject({
  type: z.literal("user_message_appended"),
  ...eventBase,
  messageId: nonBlank,
});

/** A piece of assistant text; `messageId` is the id the finished assistant message will have. */
export const AssistantDelta = z.strictObject({
  type: z.literal("assistant_delta"),
  ...eventBase,
  messageId: nonBlank,
  text: z.string(),
});

/** A piece of the model's reasoning text; it ends up in the assistant message's `thinking`. */
export const ThinkingDelta = z.strictObject({
  type: z.literal("thinking_delta"),
  ...eventBase,
  messageId: nonBlank,
  text: z.string(),
});

/** The history is being summarised: it passed the context threshold, the provider said it overflowed, or a client asked. */
export const CompactionStarted = z.strictObject({
  type: z.literal("compaction_started"),
  ...eventBase,
  reason: z.enum(["threshold", "overflow", "manual"]),
});

/** The compaction record `messageId` was appended; the context went from `tokensBefore` to `tokensAfter` (estimates). */
export const CompactionFinished = z.strictObject({
  type: z.literal("compaction_finished"),
  ...eventBase,
  messageId: nonBlank,
  tokensBefore: z.number().int().nonnegative(),
  tokensAfter: z.number().int().nonnegative(),
});

/** The compaction failed (`code` from the registry); the log is unchanged. */
export const CompactionFailed = z.strictObject({
  type: z.literal("compaction_failed"),
  ...eventBase,
  code: z.enum(ERROR_CODES),
  message: z.string(),
});

export const AssistantCompleted = z.strictObject({
  type: z.literal("assistant_completed"),
  ...eventBase,
  messageId: nonBlank,
  stopReason: StopReason,
});

export const ToolCallStarted = z.strictObject({
  type: z.literal("tool_call_started"),
  ...eventBase,
  callId: nonBlank,
  tool: nonBlank,
  arguments: z.record(z.string(), z.unknown()),
});

export const ToolCallFinished = z.strictObject({
  type: z.literal("tool_call_finished"),
  ...eventBase,
  callId: nonBlank,
  tool: nonBlank,
  error: z.boolean(),
});

/** The policy refused a call; it was never executed. `reason` is a stable code such as `write_not_allowed`. */
export const ToolCallDenied = z.strictObject({
  type: z.literal("tool_call_denied"),
  ...eventBase,
  callId: nonBlank,
  tool: nonBlank,
  reason: z.enum(DENIAL_CODES),
});

/** The run failed; `code` is one of the registry's run codes (`context_overflow`, `run_timeout`, …). */
export const AgentError = z.strictObject({
  type: z.literal("agent_error"),
  ...eventBase,
  runId: nonBlank,
  code: z.enum(RUN_ERROR_CODES),
  message: z.string(),
});

/** A Failure Prevention Brief built from these cases was added to the run's system prompt. */
export const BriefInjected = z.strictObject({
  type: z.literal("brief_injected"),
  ...eventBase,
  runId: nonBlank,
  caseIds: z.array(nonBlank).min(1),
});

export const AgentCompleted = z.strictObject({
  type: z.literal("agent_completed"),
  ...eventBase,
  runId: nonBlank,
  stopReason: StopReason,
});

/** Every observable step of a run, discriminated by `type`. */
export const AgentEvent = z.discriminatedUnion("type", [
  AgentStarted,
  UserMessageAppended,
  AssistantDelta,
  AssistantCompleted,
  ToolCallStarted,
  ToolCallFinished,
  ToolCallDenied,
  AgentError,
  AgentCompleted,
  BriefInjected,
  ThinkingDelta,
  CompactionStarted,
  CompactionFinished,
  CompactionFailed,
]);
export type AgentEvent = z.infer<typeof AgentEvent>;
export type EventType = AgentEvent["type"];
export const EVENT_TYPES: readonly EventType[] = AgentEvent.options.map((o) => o.shape.type.value);
