import { z } from "zod";
import { nonBlank } from "./schema";
import { SessionId, WorkspaceId } from "./ids";

export const MAX_TURNS_LIMIT = 50;
export const MAX_TOOL_CALLS_LIMIT = 200;
export const MIN_RUN_TIMEOUT_MS = 1_000;
export const MAX_RUN_TIMEOUT_MS = 15 * 60_000;

/** Limits and permissions of one run. Defaults are safe: read-only, no bash, small budgets. */
export const AgentRunOptions = z.strictObject({
  allowWrite: z.boolean().default(false),
  allowBash: z.boolean().default(false),
  maxTurns: z.number().int().min(1).max(MAX_TURNS_LIMIT).default(6),
  maxToolCalls: z.number().int().min(0).max(MAX_TOOL_CALLS_LIMIT).default(12),
  timeoutMs: z.number().int().min(MIN_RUN_TIMEOUT_MS).max(MAX_RUN_TIMEOUT_MS).default(120_000),
});
export type AgentRunOptions = z.infer<typeof AgentRunOptions>;

export function safeRunOptions(): AgentRunOptions {
  return AgentRunOptions.parse({});
}

/** What the runtime is asked to do: one user prompt in one session. */
export const AgentPromptCommand = z.strictObject({
  sessionId: SessionId,
  userText: nonBlank,
  workspaceId: WorkspaceId.optional(),
  /** Overrides the configured model name; `replay:<sessionId>` replays a recorded session. */
  model: nonBlank.optional(),
  options: AgentRunOptions,
});
export type AgentPromptCommand = z.infer<typeof AgentPromptCommand>;
