import { z } from "zod";
import { SessionId, WorkspaceId } from "./ids";
import {
  DEFAULT_MAX_TOOL_CALLS,
  DEFAULT_MAX_TURNS,
  DEFAULT_RUN_TIMEOUT_MS,
  MAX_CONTEXT_WINDOW_TOKENS,
  MAX_RUN_TIMEOUT_MS,
  MAX_TOOL_CALLS_LIMIT,
  MAX_TURNS_LIMIT,
  MIN_CONTEXT_WINDOW_TOKENS,
  MIN_RUN_TIMEOUT_MS,
} from "./limits";
import { nonBlank } from "./schema";

/** Limits and permissions of one run. Defaults are safe: read-only, no bash, small budgets. */
export const AgentRunOptions = z.strictObject({
  allowWrite: z.boolean().default(false),
  allowBash: z.boolean().default(false),
  maxTurns: z.number().int().min(1).max(MAX_TURNS_LIMIT).default(DEFAULT_MAX_TURNS),
  maxToolCalls: z.number().int().min(0).max(MAX_TOOL_CALLS_LIMIT).default(DEFAULT_MAX_TOOL_CALLS),
  timeoutMs: z.number().int().min(MIN_RUN_TIMEOUT_MS).max(MAX_RUN_TIMEOUT_MS).default(DEFAULT_RUN_TIMEOUT_MS),
});
export type AgentRunOptions = z.infer<typeof AgentRunOptions>;

export function safeRunOptions(): AgentRunOptions {
  return AgentRunOptions.parse({});
}

/** A context window a prompt may name, in tokens. */
export const ContextWindow = z.number().int().min(MIN_CONTEXT_WINDOW_TOKENS).max(MAX_CONTEXT_WINDOW_TOKENS);

/** What the runtime is asked to do: one user prompt in one session. */
export const AgentPromptCommand = z.strictObject({
  sessionId: SessionId,
  userText: nonBlank,
  workspaceId: WorkspaceId.optional(),
  /** Overrides the configured model name; `replay:<sessionId>` replays a recorded session. */
  model: nonBlank.optional(),
  /** The run this prompt retries: another attempt of the same task (its cases always reach the brief). */
  retryOf: nonBlank.optional(),
  /** Replays only: how many recorded assistant turns to skip (the replayed run's place in its session). */
  replayOffset: z.number().int().nonnegative().optional(),
  /** The model's context window in tokens, overriding MODEL_CONTEXT_WINDOW and the known-model table. */
  contextWindow: ContextWindow.optional(),
  options: AgentRunOptions,
});
export type AgentPromptCommand = z.infer<typeof AgentPromptCommand>;

/** What a prompt does when a run is already active (pi's steer / follow-up). */
export const WhenBusy = z.enum(["reject", "steer", "followUp"]);
export type WhenBusy = z.infer<typeof WhenBusy>;
export type QueueMode = Exclude<WhenBusy, "reject">;
/** What a queued follow-up does when the run before it fails: still run (`keep`) or leave the queue (`withdraw`). */
export const AfterFailedRun = z.enum(["keep", "withdraw"]);
export type AfterFailedRun = z.infer<typeof AfterFailedRun>;

/** A prompt as the Worker hands it to the session object. */
export const PromptDelivery = z.strictObject({
  command: AgentPromptCommand,
  whenBusy: WhenBusy.default("reject"),
  afterFailedRun: AfterFailedRun.default("keep"),
  /** The tenant-scoped idempotency key (with the time it was claimed), when the request carried one. */
  idempotencyKey: z.string().optional(),
});
export type PromptDelivery = z.infer<typeof PromptDelivery>;
