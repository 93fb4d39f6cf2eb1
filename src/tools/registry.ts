import { z } from "zod";
import type { AgentRunOptions } from "../domain/run";
import type { ToolDefinition } from "../domain/tool-definition";
import { bashTool } from "./bash";
import { editTool } from "./edit";
import { findTool } from "./find";
import { grepTool } from "./grep";
import { lsTool } from "./ls";
import { checkPermission } from "./policy";
import { readTool } from "./read";
import type { AnyTool } from "./tool";
import { writeTool } from "./write";

/** Every built-in tool, in the order they are offered to the model. */
export const BUILTIN_TOOLS: readonly AnyTool[] = [readTool, lsTool, grepTool, findTool, writeTool, editTool, bashTool];

/** Whether the run's options let `tool` be called at all. */
export function isToolAllowed(tool: AnyTool, options: AgentRunOptions): boolean {
  return checkPermission(tool, options) === null;
}

/**
 * The tools offered to the model for one run. Tools the run does not allow (write/edit without
 * allowWrite, bash without allowBash) are left out, so the model is not invited to call them; a
 * call it makes anyway is still denied by the ToolExecutionService with the matching code.
 */
export function toolDefinitions(tools: readonly AnyTool[], options: AgentRunOptions): ToolDefinition[] {
  return tools.filter((tool) => isToolAllowed(tool, options)).map(toolDefinition);
}

/** JSON Schema of the arguments as the model sends them (`io: "input"`: defaulted fields are optional). */
export function toolDefinition(tool: AnyTool): ToolDefinition {
  const { $schema: _dialect, ...parameters } = z.toJSONSchema(tool.parameters, { io: "input" }) as Record<string, unknown>;
  return { name: tool.name, description: tool.description, parameters };
}
