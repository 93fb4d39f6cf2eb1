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
