import { DENIAL_CODES, type DenialCode } from "../domain/errors";
import type { AgentRunOptions } from "../domain/run";
import type { AnyTool } from "./tool";

/** Stable codes of a refused tool call; each becomes an error tool result plus a tool_call_denied event. */
/** Why a call was refused: the registry's tool denial codes. */
export type DenialReason = DenialCode;
export const DENIAL_REASONS: readonly DenialReason[] = DENIAL_CODES;

export interface Denial {
  reason: DenialReason;
  /** A sentence the model can act on. */
  message: string;
}

/**
 * The call budget of a run. `callNumber` is 1-based and counts every call of the run, denied ones
 * included, so a model that keeps calling a refused tool still runs out of budget.
 */
export function checkBudget(options: AgentRunOptions, callNumber: number): Denial | null {
  if (callNumber <= options.maxToolCalls) return null;
  return {
    reason: "tool_budget_exhausted",
    message: `this run allows ${options.maxToolCalls} tool calls and all were used; answer with what you have`,
  };
}

/** The run's permissions: write/edit need allowWrite, bash needs allowBash. */
export function checkPermission(tool: AnyTool, options: AgentRunOptions): Denial | null {
  if (tool.mutates && !options.allowWrite) {
    return {
      reason: "write_not_allowed",
      message: `${tool.name} changes files, and this run is read-only (allowWrite=false); describe the change instead`,
    };
  }
  if (tool.needsBash && !options.allowBash) {
    return {
      reason: "bash_not_allowed",
      message: "bash is not allowed in this run (allowBash=false); use read, ls, grep and find instead",
    };
  }
  return null;
}
