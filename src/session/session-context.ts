import { type AgentMessage, type AgentPromptCommand, DEFAULT_RUN_TIMEOUT_MS, type ErrorCode, safeRunOptions, type Usage } from "../domain";
import { createModelClient, type FetchLike, type MessageLoader, type ModelClient, type ModelConfig, ReplayModelClient } from "../model";
import { type CompactionLog, compact } from "../runtime/compaction";
import { estimateContextTokens, estimateFixedTokens, modelView } from "../runtime/context-window";
import { modelBudget } from "../runtime/run-setup";
import { buildSystemPrompt } from "../runtime/system-prompt";
import { BUILTIN_TOOLS, toolDefinitions } from "../tools/registry";
import type { RunHistory } from "./message-history";

/** A session's token and cost totals: every assistant message and every summary call. */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  reasoningTokens: number;
  totalTokens: number;
  /** US dollars; null when no message was priced (the model's prices are unknown). */
  cost: number | null;
}

/** What `GET /api/sessions/:id` adds about the context: totals, the current estimate and the window it is measured against. */
export interface ContextStatus {
  usage: UsageTotals;
  contextTokens: number;
  contextWindow: number;
}

export interface SessionModelContext {
  config: ModelConfig & { fetch: FetchLike };
  workspaceId: string | null;
  /** The newest run's command: the model and window the session runs on now (null before any run). */
  command: AgentPromptCommand | null;
}

/** The totals of no messages. */
export const EMPTY_USAGE: UsageTotals = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  reasoningTokens: 0,
  totalTokens: 0,
  cost: null,
});

/**
 * Sums usage and cost over `history`, starting from `from`: the totals of the messages before it,
 * which a history that starts at a compaction carries instead of the messages (MessageHistory).
 */
export function usageTotals(history: readonly AgentMessage[], from: UsageTotals = EMPTY_USAGE): UsageTotals {
  const totals: UsageTotals = { ...from };
  for (const message of history) {
    if (message.kind !== "assistant" && message.kind !== "compaction") continue;
    const usage: Usage | undefined = message.usage;
    if (usage) {
      totals.inputTokens += usage.inputTokens;
      totals.outputTokens += usage.outputTokens;
      totals.cachedInputTokens += usage.cachedInputTokens ?? 0;
      totals.reasoningTokens += usage.reasoningTokens ?? 0;
      totals.totalTokens += usage.totalTokens;
    }
    if (message.cost !== undefined) totals.cost = Math.round(((totals.cost ?? 0) + message.cost) * 1e8) / 1e8;
  }
  return totals;
}

/** The fixed part of the next request (system prompt and tools) for a run with the command's options. */
function fixedTokensOf(ctx: SessionModelContext): number {
  const options = ctx.command?.options ?? safeRunOptions();
  const tools = ctx.workspaceId ? toolDefinitions(BUILTIN_TOOLS, options) : [];
  return estimateFixedTokens(buildSystemPrompt({ workspaceId: ctx.workspaceId, tools, options }), tools);
}

export function contextStatus(history: RunHistory, ctx: SessionModelContext): ContextStatus {
  const { budget } = modelBudget(ctx.config, ctx.command ?? {});
  return {
    usage: usageTotals(history.messages, history.before.usage),
    contextTokens: estimateContextTokens(modelView(history.messages, budget), fixedTokensOf(ctx)),
    contextWindow: budget.contextWindow,
  };
}

/**
 * A compaction a client asked for (`POST .../compact`), with the model the session runs on now. After
 * a replayed run that is the recording only where the recording compacted at this very point (its
 * summary is played back); anywhere else the deployment's model summarises (a replay would answer
 * with a placeholder that drops the history). The caller holds the session's run slot meanwhile.
 */
export async function compactOnDemand(
  history: readonly AgentMessage[],
  ctx: SessionModelContext & {
    instructions?: string;
    loadRecording: MessageLoader;
    log: CompactionLog;
    signal?: AbortSignal;
    /** Assistant turns before `history` (it starts at the latest compaction): a replay aligns its summaries by them. */
    assistantsBefore?: number;
    /** How long the summary may take (default: a run's default timeout). */
    timeoutMs?: number;
    /** Whether an abort of `signal` is the client's (`POST .../abort`, logged) rather than the session's deletion (nothing left to log to). */
    abortedByClient?: () => boolean;
  },
): Promise<{ ok: true; messageId: string; tokensBefore: number; tokensAfter: number } | { ok: false; code: ErrorCode; message: string }> {
  const assistantTurns = (ctx.assistantsBefore ?? 0) + history.filter((m) => m.kind === "assistant").length;
  const { model, requested } = await summaryModel(ctx, assistantTurns);
  const { budget, price } = modelBudget(ctx.config, { ...ctx.command, model: requested });
  const timeout = AbortSignal.timeout(ctx.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS);
  const result = await compact(
    {
      history,
      model,
      budget,
      price,
      fixedTokens: fixedTokensOf(ctx),
      assistantTurns,
      ...(ctx.instructions ? { instructions: ctx.instructions } : {}),
      signal: ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout,
      // A summary that timed out or was aborted by the client ends with compaction_failed, as the
      // answer says; one cut off by the session's deletion logs nothing.
      abortedAs: () => (ctx.signal?.aborted ? (ctx.abortedByClient?.() ? "run_aborted" : null) : timeout.aborted ? "run_timeout" : null),
    },
    "manual",
    ctx.log,
  );
  if (result.ok) {
    const { id, tokensBefore, tokensAfter } = result.message;
    return { ok: true, messageId: id, tokensBefore, tokensAfter };
  }
  if (result.code !== "aborted") return { ok: false, code: result.code, message: result.message };
  return { ok: false, code: ctx.signal?.aborted ? "run_aborted" : "run_timeout", message: result.message };
}

/** The model for a manual compaction, and the name it was asked for by (undefined: the deployment's). */
async function summaryModel(
  ctx: SessionModelContext & { loadRecording: MessageLoader },
  assistantTurns: number,
): Promise<{ model: ModelClient; requested: string | undefined }> {
  const requested = ctx.command?.model;
  const deps = { loadMessages: ctx.loadRecording, replayOffset: ctx.command?.replayOffset };
  const model = createModelClient(ctx.config, requested, deps);
  if (!(model instanceof ReplayModelClient) || (await model.hasSummaryAt(assistantTurns))) return { model, requested };
  return { model: createModelClient(ctx.config, undefined, deps), requested: undefined };
}
