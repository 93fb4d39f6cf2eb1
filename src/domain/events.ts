import { z } from "zod";
import { DENIAL_CODES, RUN_ERROR_CODES } from "./errors";
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

/** A prompt sent while a run was busy was stored: `steer` joins the running run, `followUp` waits for its own run (`runId`). */
export const MessageQueued = z.strictObject({
  type: z.literal("message_queued"),
  ...eventBase,
  messageId: nonBlank,
  mode: z.enum(["steer", "followUp"]),
  /** The run that will carry the message. */
  runId: nonBlank,
  /** What happens to this follow-up if the run before it fails. */
  afterFailedRun: z.enum(["keep", "withdraw"]),
});

/** The queue after a change: undelivered message ids, oldest first. */
export const QueueUpdated = z.strictObject({
  type: z.literal("queue_updated"),
  ...eventBase,
  steering: z.array(nonBlank),
  followUp: z.array(nonBlank),
});

/** A queued message left the queue undelivered: the client withdrew it, or the run before it failed (`afterFailedRun: withdraw`). */
export const QueuedMessageWithdrawn = z.strictObject({
  type: z.literal("queued_message_withdrawn"),
  ...eventBase,
  messageId: nonBlank,
  runId: nonBlank,
  reason: z.enum(["withdrawn_by_client", "previous_run_failed"]),
});

/** The model request failed and is tried again after `delayMs` (sent before the wait). */
export const ModelRetry = z.strictObject({
  type: z.literal("model_retry"),
  ...eventBase,
  runId: nonBlank,
  attempt: z.number().int().positive(),
  maxAttempts: z.number().int().positive(),
  delayMs: z.number().int().nonnegative(),
  code: nonBlank,
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
  MessageQueued,
  QueueUpdated,
  QueuedMessageWithdrawn,
  ModelRetry,
]);
export type AgentEvent = z.infer<typeof AgentEvent>;
export type EventType = AgentEvent["type"];
export const EVENT_TYPES: readonly EventType[] = AgentEvent.options.map((o) => o.shape.type.value);
