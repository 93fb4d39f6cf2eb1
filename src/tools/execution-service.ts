import type { z } from "zod";
import type { ToolCall } from "../domain/messages";
import type { AgentRunOptions } from "../domain/run";
import { formatIssues } from "../domain/schema";
import type { ToolDefinition } from "../domain/tool-definition";
import { logLine } from "../log";
import { WorkspaceError } from "../workspace/errors";
import { resolveMountedPath, unmounted } from "../workspace/paths";
import type { WorkspaceFs } from "../workspace/workspace-fs";
import { BASH_WORKSPACE_DIR } from "./bash";
import { grepTool, warmGrep } from "./grep";
import { checkBudget, checkPermission, type Denial, type DenialReason } from "./policy";
import { RecordingFs, type Touched } from "./recording-fs";
import { isToolAllowed, toolDefinitions } from "./registry";
import { type AnyTool, ToolError } from "./tool";

/**
 * What became of one tool call. A denied call was never executed. A finished one may carry its
 * failure code (`not_found`, `no_match`, `exit_status`, ...), a command's exit code, and the paths it
 * read and wrote (for the trace).
 */
export type ToolExecution =
  | { outcome: "finished"; text: string; error: boolean; code?: string | null; exitCode?: number | null; touched?: Touched }
  | { outcome: "denied"; reason: DenialReason; text: string };

/** The tools of a run behind their policy, as the runtime uses them; tests fake it. */
export interface ToolRunner {
  definitions(): ToolDefinition[];
  /** Calls made so far in this run (executed or denied): the runtime stops offering calls at the budget. */
  readonly callCount?: number;
  execute(call: ToolCall, signal: AbortSignal): Promise<ToolExecution>;
  /** The workspace paths a call's arguments name, split into reads and writes (for the trace). */
  plannedPaths?(call: ToolCall): Touched;
  /**
   * Uses time the run spends waiting (for the model) to make its coming tool calls faster; stops
   * when `signal` aborts. Never fails: a warm-up that cannot finish only leaves calls as slow as
   * they were.
   */
  warmUp?(signal: AbortSignal): Promise<void>;
}

export interface ToolExecutionServiceOptions {
  tools: readonly AnyTool[];
  /** The session's workspace view; null when the session has no workspace (then no tool exists). */
  fs: WorkspaceFs | null;
  options: AgentRunOptions;
  /** The run's per-result budget in bytes (see ToolContext.maxOutputBytes). */
  maxOutputBytes?: number;
}

/**
 * Runs the model's tool calls for one run (create one per run: it counts the calls). Every call is
 * checked in this order, and the first failing check denies it:
 *   1. budget: the (maxToolCalls+1)th call of the run and later ones -> tool_budget_exhausted
 *      (every call counts, denied ones included);
 *   2. the tool exists (and the session has a workspace) -> unknown_tool;
 *   3. permission: write/edit need allowWrite, bash needs allowBash -> write_not_allowed / bash_not_allowed;
 *   4. the arguments fit the tool's zod schema -> invalid_arguments (the text names the field);
 *   5. every path argument stays inside the workspace -> path_escape, and is at most MAX_PATH_CHARS
 *      characters long -> path_too_long.
 * The caller (the runtime) appends a tool_call_denied event for a denial. An executed tool never
 * throws: its ToolError/WorkspaceError becomes `{ error: true, text: "<code>: <message>" }`.
 * Calls that change files (write, edit, bash) run one at a time, in the order they were made.
 */
export class ToolExecutionService implements ToolRunner {
  private readonly tools: ReadonlyMap<string, AnyTool>;
  private readonly fs: WorkspaceFs | null;
  private readonly options: AgentRunOptions;
  private readonly maxOutputBytes: number | undefined;
  private calls = 0;
  private warmed = false;
  private mutationQueue: Promise<unknown> = Promise.resolve();

  constructor({ tools, fs, options, maxOutputBytes }: ToolExecutionServiceOptions) {
    this.maxOutputBytes = maxOutputBytes;
    this.tools = new Map(fs ? tools.map((t) => [t.name, t]) : []);
    this.fs = fs;
    this.options = options;
  }

  /**
   * The tools offered to the model: none without a workspace, else the ones this run allows, their
   * descriptions stating the run's byte limit.
   */
  definitions(): ToolDefinition[] {
    return toolDefinitions([...this.tools.values()], this.options, { maxOutputBytes: this.maxOutputBytes });
  }

  /** Number of calls made so far in this run (executed or denied). */
  get callCount(): number {
    return this.calls;
  }

  /**
   * Reads and decodes the workspace's text into the search cache while the model answers, when the
   * run offers grep, so that the first grep of a fresh object is served from the cache. Once it has
   * finished in this run, later calls do nothing (one that could not start is tried again).
   */
  async warmUp(signal: AbortSignal): Promise<void> {
    const grep = this.tools.get(grepTool.name);
    if (this.warmed || !this.fs || !grep || !isToolAllowed(grep, this.options)) return;
    try {
      this.warmed = await warmGrep(this.fs, signal);
    } catch (error) {
      if (signal.aborted) return;
      logLine("warn", "workspace warm-up failed", { error: (error as Error).message });
    }
  }

  async execute(call: ToolCall, signal: AbortSignal): Promise<ToolExecution> {
    const overBudget = checkBudget(this.options, ++this.calls);
    if (overBudget) return deny(overBudget);
    const tool = this.tools.get(call.name);
    if (!tool || !this.fs) {
      const offered = this.definitions().map((d) => d.name);
      const hint = this.fs ? `available tools: ${offered.join(", ")}` : "this session has no workspace, so no tools are available";
      return deny({ reason: "unknown_tool", message: `there is no tool named ${JSON.stringify(call.name)}; ${hint}` });
    }
    const forbidden = checkPermission(tool, this.options);
    if (forbidden) return deny(forbidden);

    const parsed = (tool.parameters as z.ZodType).safeParse(tool.prepareArguments?.(call.arguments) ?? call.arguments);
    if (!parsed.success) {
      return deny({ reason: "invalid_arguments", message: `invalid arguments for ${tool.name}: ${formatIssues(parsed.error.issues)}` });
    }
    const args = parsed.data as Record<string, unknown>;
    for (const name of tool.pathArgs ?? []) {
      const value = args[name];
      if (typeof value !== "string") continue;
      try {
        resolveMountedPath(value, BASH_WORKSPACE_DIR);
      } catch (err) {
        const reason = err instanceof WorkspaceError && err.code === "path_too_long" ? "path_too_long" : "path_escape";
        // The message starts with `path "<value>"`: another argument name goes in front of it.
        const message = (err as Error).message;
        return deny({ reason, message: name === "path" ? message : `${name}: ${message}` });
      }
      // Models copy `/workspace/...` paths from bash's output; the tools take them relative to the root.
      args[name] = unmounted(value, BASH_WORKSPACE_DIR);
    }

    const fs = new RecordingFs(this.fs);
    const run = async (): Promise<ToolExecution> => {
      const ctx = { fs, signal, allowWrite: this.options.allowWrite, allowBash: this.options.allowBash };
      const finished = await runTool(tool, args, this.maxOutputBytes === undefined ? ctx : { ...ctx, maxOutputBytes: this.maxOutputBytes });
      return { ...finished, touched: fs.touched() };
    };
    if (!tool.mutates && !tool.needsBash) return run();
    const result = this.mutationQueue.then(run);
    this.mutationQueue = result.catch(() => undefined);
    return result;
  }

  plannedPaths(call: ToolCall): Touched {
    const tool = this.tools.get(call.name);
    const paths: string[] = [];
    for (const name of tool?.pathArgs ?? []) {
      const value = call.arguments[name];
      if (typeof value !== "string") continue;
      try {
        paths.push(resolveMountedPath(value, BASH_WORKSPACE_DIR));
      } catch {
        // An escaping path is denied before it runs; it names nothing in the workspace.
      }
    }
    return tool?.mutates ? { reads: [], writes: paths } : { reads: paths, writes: [] };
  }
}

function deny({ reason, message }: Denial): ToolExecution {
  return { outcome: "denied", reason, text: `${reason}: ${message}` };
}

async function runTool(
  tool: AnyTool,
  args: unknown,
  ctx: Parameters<AnyTool["execute"]>[1],
): Promise<Extract<ToolExecution, { outcome: "finished" }>> {
  try {
    const output = await tool.execute(args, ctx);
    const code = output.error ? (output.code ?? "tool_failed") : null;
    return { outcome: "finished", text: output.text, error: output.error, code, exitCode: output.exitCode ?? null };
  } catch (err) {
    return { outcome: "finished", text: describeFailure(err), error: true, code: failureCode(err), exitCode: null };
  }
}

function failureCode(err: unknown): string {
  return err instanceof ToolError || err instanceof WorkspaceError ? err.code : "tool_failed";
}

/** `<code>: <message>` for known failures; anything else is reported as an internal tool error. */
export function describeFailure(err: unknown): string {
  if (err instanceof ToolError || err instanceof WorkspaceError) return `${err.code}: ${err.message}`;
  const message = err instanceof Error ? err.message : String(err);
  return `tool_failed: ${message}`;
}
