import type { AgentRunOptions, ToolDefinition } from "../domain";

export interface SystemPromptInput {
  workspaceId: string | null;
  tools: readonly ToolDefinition[];
  options: AgentRunOptions;
}

/**
 * The system prompt of a run: who the agent is, what workspace it sees, which tools it may use and
 * which are withheld, and its budgets. Stable for a given configuration, so providers can cache it.
 */
export function buildSystemPrompt({ workspaceId, tools, options }: SystemPromptInput): string {
  const lines = ["You are a coding agent working through tools on a snapshot of a code workspace. Be concise and show file paths clearly."];
  if (workspaceId === null || tools.length === 0) {
    lines.push("No workspace is attached to this session, so no tools are available: answer from the conversation alone.");
  } else {
    lines.push(`Workspace: ${workspaceId}. Paths are relative to its root; you cannot leave it.`);
    lines.push(`Available tools: ${tools.map((t) => t.name).join(", ")}.`);
    const withheld = [
      ...(options.allowWrite ? [] : ["write and edit (this run is read-only)"]),
      ...(options.allowBash ? [] : ["bash (not allowed in this run)"]),
    ];
    if (withheld.length > 0) lines.push(`Not available: ${withheld.join("; ")}. Do not try to call them.`);
    if (options.allowWrite) lines.push("Changes go to this session's copy of the workspace; the original snapshot never changes.");
    lines.push("Prefer read, grep and find over bash for looking at files.");
  }
  lines.push(`Budget for this run: at most ${options.maxTurns} model turns and ${options.maxToolCalls} tool calls.`);
  if (workspaceId !== null && tools.length > 0) {
    lines.push("On the last turn, and once the tool calls are used up, tools cannot be called: then answer with what you have.");
  }
  return lines.join("\n");
}

/**
 * The system prompt with a Failure Prevention Brief at its end. Without a brief it is returned
 * byte for byte unchanged.
 */
export function appendBrief(system: string, brief: { text: string } | null): string {
  return brief ? `${system}\n\n${brief.text}` : system;
}
