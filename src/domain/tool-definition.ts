/** A tool as offered to the model: its name, a description that states its limits, and a JSON Schema. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12) of the arguments object, derived from the tool's zod schema. */
  parameters: Record<string, unknown>;
}
