import type { z } from "zod";
import { NOTICE_ROOM_BYTES } from "../domain/limits";
import { WorkspaceError } from "../workspace/errors";
import { resolveWorkspacePath } from "../workspace/paths";
import type { WorkspaceFs } from "../workspace/workspace-fs";

/** What a tool gets to work with: the session's workspace view, the run's abort signal, the write permission. */
export interface ToolContext {
  fs: WorkspaceFs;
  signal: AbortSignal;
  /** False means every file write (including ones made from bash) must fail. */
  allowWrite: boolean;
  /** True when the run offers bash, so a tool's notice may suggest a command; absent means it does not. */
  allowBash?: boolean;
  /**
   * The run's per-result budget in bytes (from its context window): output is cut to the smaller of
   * this and the tool's own limit, with the tool's continuation notice. Absent: the tool's own limit.
   */
  maxOutputBytes?: number;
}

/** The byte limit a tool cuts its output at: its own, or the run's budget when that is smaller. */
export function outputLimit(own: number, ctx: { maxOutputBytes?: number }): number {
  // The run's budget covers the whole result: the tool's own notices after the body must fit too,
  // or the last guard cuts them off (grep's "limit reached ... Use limit=" was lost that way). A small
  // budget gives the body half (a floor of 1 KiB passed the whole budget of windows under 2,560 tokens).
  if (ctx.maxOutputBytes === undefined) return own;
  const body = Math.max(Math.min(1024, Math.floor(ctx.maxOutputBytes / 2)), ctx.maxOutputBytes - NOTICE_ROOM_BYTES);
  return Math.min(own, body);
}

/** The run's per-result budget in bytes (see ToolContext.maxOutputBytes); absent: each tool's own limit. */
export interface OutputBudget {
  maxOutputBytes?: number;
}

/** The result handed back to the model as a tool_result message. */
export interface ToolOutput {
  text: string;
  error: boolean;
  /** For an error: a stable code (bash: `exit_status`, `bash_timeout`); others throw ToolError instead. */
  code?: string;
  /** bash: the command's exit code. */
  exitCode?: number;
}

/**
 * A built-in tool: one file each under src/tools/, with its zod parameter schema and its limits as
 * named constants. `execute` may throw a ToolError or WorkspaceError; the ToolExecutionService turns
 * those into `{ error: true, text: "<code>: <message>" }`, so nothing escapes to the runtime.
 */
export interface Tool<P = unknown> {
  name: string;
  /** Shown to the model; states the tool's limits and notices. */
  description: string;
  /** The description for a run whose results are cut at its budget (see outputLimit), when it states that limit. */
  describe?(budget: OutputBudget): string;
  /** Validates the model's arguments; also the source of the JSON Schema offered to the model. */
  parameters: z.ZodType<P>;
  /**
   * Turns an older shape of the arguments into the one `parameters` describes, before they are
   * validated (recorded tool calls, and models used to another harness's tools, send them).
   */
  prepareArguments?(args: Record<string, unknown>): Record<string, unknown>;
  /** True for tools that change files (write, edit): denied unless the run allows writes. */
  mutates: boolean;
  /** True for bash: denied unless the run allows bash. */
  needsBash?: boolean;
  /** Names of arguments that are workspace paths; the service refuses escapes before executing. */
  pathArgs?: readonly string[];
  execute(args: P, ctx: ToolContext): Promise<ToolOutput>;
}

/** Any tool, whatever its parameter type (for lists such as the registry). */
// biome-ignore lint/suspicious/noExplicitAny: one list holds tools of every parameter type
export type AnyTool = Tool<any>;

/** Stable codes of tool failures that are not workspace errors. */
export type ToolErrorCode =
  | "invalid_regex"
  | "invalid_glob"
  | "offset_out_of_range"
  | "binary_file"
  | "no_match"
  | "ambiguous_match"
  | "no_change"
  | "overlapping_edits"
  | "content_too_large"
  | "bash_unavailable"
  | "aborted";

/** A failure a tool reports to the model; the message says what to do next. */
export class ToolError extends Error {
  override readonly name = "ToolError";
  constructor(
    readonly code: ToolErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Throws a ToolError("aborted") when the run was cancelled; tools call it between units of work. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new ToolError("aborted", "the run was aborted");
}

/**
 * The workspace path of a tool argument that must name a file. A trailing "/" (or "/.") names a
 * directory, on a real filesystem too: `write out/` must not make a file `out`, `read a.txt/` must not
 * read `a.txt`.
 */
export function filePathArg(raw: string, tool: string): string {
  const path = resolveWorkspacePath(raw);
  if (/\/\.?$/.test(raw) || path === "") {
    throw new WorkspaceError("is_directory", `${JSON.stringify(raw.slice(0, 200))} names a directory; ${tool} takes a file path`);
  }
  return path;
}
