import { z } from "zod";
import { DENIAL_CODES, ERROR_CODES, RUN_ERROR_CODES } from "./errors";
import { clipText } from "./json";
import { TOOL_SUMMARY_MAX_CHARS } from "./limits";
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

/**
 * A tool call ran. `messageId` is the id of its tool_result message and `summary` the result's first
 * line, so a client can show the outcome without reading the messages. Both are always written;
 * they are optional because events logged before they existed lack them.
 */
export const ToolCallFinished = z.strictObject({
  type: z.literal("tool_call_finished"),
  ...eventBase,
  callId: nonBlank,
  tool: nonBlank,
  error: z.boolean(),
  messageId: nonBlank.optional(),
  summary: z.string().max(TOOL_SUMMARY_MAX_CHARS).optional(),
});

/**
 * The summary of a tool result: its first line, at most TOOL_SUMMARY_MAX_CHARS UTF-16 units; a cut
 * line ends with "…" and never splits a surrogate pair.
 */
export function toolResultSummary(resultText: string): string {
  return clipText(resultText.split(/\r\n|\r|\n/, 1)[0]!, TOOL_SUMMARY_MAX_CHARS);
}

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
  /** The brief as the system prompt received it (absent in events logged before it was kept). */
  text: z.string().min(1).optional(),
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
  ThinkingDelta,
  CompactionStarted,
  CompactionFinished,
  CompactionFailed,
  MessageQueued,
  QueueUpdated,
  QueuedMessageWithdrawn,
  ModelRetry,
]);
export type AgentEvent = z.infer<typeof AgentEvent>;
export type EventType = AgentEvent["type"];
export const EVENT_TYPES: readonly EventType[] = AgentEvent.options.map((o) => o.shape.type.value);

/** The event's position in the session log (messages and events share it): the SSE id to resume from. */
const seqField = { seq: z.number().int().positive() };

/**
 * An event as clients receive it (SSE `data`, the `/events` export): the stored event with its `seq`
 * first. Stored records never carry it; it is added on the way out. One variant per AgentEvent type,
 * in the same order (test/api/openapi.test.ts checks it).
 */
export const SeqAgentEvent = z.discriminatedUnion("type", [
  z.strictObject({ ...seqField, ...AgentStarted.shape }),
  z.strictObject({ ...seqField, ...UserMessageAppended.shape }),
  z.strictObject({ ...seqField, ...AssistantDelta.shape }),
  z.strictObject({ ...seqField, ...AssistantCompleted.shape }),
  z.strictObject({ ...seqField, ...ToolCallStarted.shape }),
  z.strictObject({ ...seqField, ...ToolCallFinished.shape }),
  z.strictObject({ ...seqField, ...ToolCallDenied.shape }),
  z.strictObject({ ...seqField, ...AgentError.shape }),
  z.strictObject({ ...seqField, ...AgentCompleted.shape }),
  z.strictObject({ ...seqField, ...BriefInjected.shape }),
  z.strictObject({ ...seqField, ...ThinkingDelta.shape }),
  z.strictObject({ ...seqField, ...CompactionStarted.shape }),
  z.strictObject({ ...seqField, ...CompactionFinished.shape }),
  z.strictObject({ ...seqField, ...CompactionFailed.shape }),
  z.strictObject({ ...seqField, ...MessageQueued.shape }),
  z.strictObject({ ...seqField, ...QueueUpdated.shape }),
  z.strictObject({ ...seqField, ...QueuedMessageWithdrawn.shape }),
  z.strictObject({ ...seqField, ...ModelRetry.shape }),
]);
export type SeqAgentEvent = z.infer<typeof SeqAgentEvent>;

/** The JSON text of an event with its seq, as clients receive it: `{"seq":N,...}`. */
export function eventJsonWithSeq(seq: number, storedJson: string): string {
  if (!Number.isSafeInteger(seq) || seq < 1 || !storedJson.startsWith("{")) throw new Error("not a stored event line");
  return storedJson === "{}" ? `{"seq":${seq}}` : `{"seq":${seq},${storedJson.slice(1)}`;
}
