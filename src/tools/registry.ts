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
import type { AnyTool, OutputBudget } from "./tool";
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
export function toolDefinitions(tools: readonly AnyTool[], options: AgentRunOptions, budget: OutputBudget = {}): ToolDefinition[] {
  return tools.filter((tool) => isToolAllowed(tool, options)).map((tool) => toolDefinition(tool, budget));
}

/**
 * What the model is told about a tool: its description with the run's byte limit, and the JSON
 * Schema of the arguments as the model sends them (`io: "input"`: defaulted fields are optional).
 */
export function toolDefinition(tool: AnyTool, budget: OutputBudget = {}): ToolDefinition {
  const description = tool.describe?.(budget) ?? tool.description;
  return { name: tool.name, description, parameters: sentSchema(z.toJSONSchema(tool.parameters, { io: "input" })) };
}

/** The JSON Schema keywords sent to the model: ones every common provider takes (Gemini's function declarations refuse others). */
const SENT_KEYWORDS = new Set(["type", "properties", "required", "description", "enum", "items", "minimum", "maximum", "default"]);

/**
 * The schema as sent: the keywords in SENT_KEYWORDS, without zod's safe-integer bounds on integers
 * (±2^53 - 1, no limit of a tool's). zod still checks what is left out (`additionalProperties`,
 * `minLength`, ...) when the call arrives.
 */
function sentSchema(schema: object): Record<string, unknown> {
  const sent: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!SENT_KEYWORDS.has(key)) continue;
    if ((key === "minimum" || key === "maximum") && Math.abs(value) === Number.MAX_SAFE_INTEGER) continue;
    if (key === "properties") sent[key] = Object.fromEntries(Object.entries(value as object).map(([name, s]) => [name, sentSchema(s)]));
    else if (key === "items") sent[key] = sentSchema(value);
    else sent[key] = value;
  }
  return sent;
}
