import { type AgentPromptCommand, CHARS_PER_TOKEN, HarnessError, type IdGenerator, type RunErrorCode } from "../domain";
import {
  createModelClient,
  type FetchLike,
  type MessageLoader,
  type ModelClient,
  type ModelConfig,
  type ModelPrice,
  modelSpec,
} from "../model";
import { ToolExecutionService, type ToolRunner } from "../tools/execution-service";
import { BUILTIN_TOOLS } from "../tools/registry";
import type { WorkspaceFs } from "../workspace/workspace-fs";
import { type ContextBudget, contextBudget } from "./context-window";

export interface RunSetupInput {
  command: AgentPromptCommand;
  /** The provider settings (OPENAI_API_KEY, OPENAI_BASE_URL, MODEL) and the fetch the client uses. */
  model: ModelConfig & { fetch: FetchLike };
  /** Messages of a recorded session for `replay:<sessionId>`; the caller enforces who may read what. */
  loadRecording: MessageLoader;
  /** The session's workspace view, or null when it has none; throws HarnessError (`workspace_not_found`). */
  openWorkspace: () => Promise<WorkspaceFs | null>;
  ids: IdGenerator;
}

/**
 * What a run needs, or why it cannot start (the run then ends at once with that agent_error). An
 * unexpected failure keeps its stack as `cause`, for the log line of the run's end (never an event).
 */
export type RunSetup =
  | { ok: true; model: ModelClient; tools: ToolRunner | null; budget?: ContextBudget; price?: ModelPrice | null }
  | { ok: false; code: RunErrorCode; message: string; cause?: string };

/** The context budget and prices of the model a command runs on (see `modelSpec`). */
export function modelBudget(config: ModelConfig, command: { model?: string; contextWindow?: number }) {
  const spec = modelSpec(command.model?.trim() || config.model, { requested: command.contextWindow, configured: config.contextWindow });
  return { budget: contextBudget(spec.contextWindow), price: spec.price ?? null };
}

/**
 * Assembles one run: the model client the command asks for (the configured provider, another model
 * name, or a replay) and the built-in tools over the session's workspace behind the run's policy. A
 * session without a workspace gets an empty tool list. Never throws: a failure is a RunSetup with a code.
 */
export async function setupRun(input: RunSetupInput): Promise<RunSetup> {
  const model = createModelClient(input.model, input.command.model, {
    loadMessages: input.loadRecording,
    ids: input.ids,
    replayOffset: input.command.replayOffset,
  });
  let fs: WorkspaceFs | null;
  try {
    fs = await input.openWorkspace();
  } catch (err) {
    if (err instanceof HarnessError && err.code === "workspace_not_found")
      return { ok: false, code: "workspace_not_found", message: err.message };
    return {
      ok: false,
      code: "internal_error",
      message: `the workspace could not be opened: ${(err as Error).message}`,
      cause: err instanceof Error ? err.stack : String(err),
    };
  }
  const { budget, price } = modelBudget(input.model, input.command);
  const maxOutputBytes = budget.maxResultTokens * CHARS_PER_TOKEN;
  const tools = new ToolExecutionService({ tools: BUILTIN_TOOLS, fs, options: input.command.options, maxOutputBytes });
  return { ok: true, model, tools, budget, price };
}
