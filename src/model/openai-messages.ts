import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { AgentMessage, AssistantMessage, StopReason, ToolDefinition } from "../domain";

/** The content of the tool result made up for a call whose result was never recorded (pi's wording). */
export const MISSING_TOOL_RESULT_TEXT = "No result provided";

/**
 * Stands in for the model's reply to tool results that got none before the next user message (a run
 * that failed, was aborted or ran out of turns after a tool call, or a steer): strict providers
 * (Mistral, templates that alternate roles) refuse `user` right after `tool`.
 */
export const NO_REPLY_TEXT = "(no reply to the tool results)";

/** Assistant turns that failed before they said anything useful; pi leaves them out of the replayed history. */
const FAILED_STOP_REASONS: ReadonlySet<StopReason> = new Set<StopReason>(["ERROR", "ABORTED", "TIMEOUT"]);

/**
 * Converts the domain conversation into OpenAI chat messages, in order: the system prompt, then every
 * message. Keeps the request acceptable to strict providers:
 * - an assistant message that failed (ERROR/ABORTED/TIMEOUT) without tool calls is dropped, and so is
 *   any assistant message with neither text nor tool calls;
 * - every assistant tool call is followed by exactly one tool message: a call without a recorded result
 *   gets a synthetic error result ("No result provided") before the next user/assistant message;
 * - a tool result whose call is not pending (unknown id, or already answered) is dropped;
 * - roles alternate as strict providers want: a user message right after tool results follows a
 *   stand-in assistant reply (`NO_REPLY_TEXT`), and one right after another user message is joined
 *   to it (a blank line between), so a failed turn left out breaks no order.
 * - a tool call id used by an earlier call (an imported history may reuse answered ones) is sent as
 *   `<id>_<n>`, the first n that is unused, and so is its result: strict providers refuse a history that
 *   repeats an id. Other ids are sent verbatim.
 * Arguments are JSON-stringified. A compaction record becomes a user message holding its summary. An
 * assistant message's `thinking` is sent only on a message that called tools and whose provider streamed
 * it in `reasoning_content` (as `reasoning_content`); a call's `extraContent` goes back as its
 * `extra_content`.
 */
export function toOpenAIMessages(system: string, messages: readonly AgentMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (system !== "") out.push({ role: "system", content: system });
  // Calls of the latest assistant message still waiting for their result, in call order: stored id -> id sent.
  let pending = new Map<string, string>();
  const closePending = () => {
    for (const id of pending.values()) out.push({ role: "tool", tool_call_id: id, content: MISSING_TOOL_RESULT_TEXT });
    pending = new Map();
  };
  const sent = new Set<string>();
  // Per reused id, the suffix to try next: a history reusing call_0 on every turn stays linear.
  const nextSuffix = new Map<string, number>();
  const sendable = (id: string) => {
    let unique = id;
    if (sent.has(id)) {
      let n = nextSuffix.get(id) ?? 2;
      while (sent.has(`${id}_${n}`)) n++;
      unique = `${id}_${n}`;
      nextSuffix.set(id, n + 1);
    }
    sent.add(unique);
    return unique;
  };

  // A user message where the model's turn is missing: after tool results it gets a stand-in reply,
  // after another user message (a failed turn left out, a compaction summary) it joins that one.
  const pushUser = (content: string) => {
    const last = out.at(-1);
    if (last?.role === "user" && typeof last.content === "string") {
      last.content = `${last.content}\n\n${content}`;
      return;
    }
    if (last?.role === "tool") out.push({ role: "assistant", content: NO_REPLY_TEXT });
    out.push({ role: "user", content });
  };

  for (const message of messages) {
    switch (message.kind) {
      case "user":
        closePending();
        pushUser(message.text);
        break;
      case "assistant": {
        const converted = toAssistantParam(message);
        if (!converted) break;
        closePending();
        for (const call of converted.tool_calls ?? []) {
          const id = sendable(call.id);
          pending.set(call.id, id);
          call.id = id;
        }
        out.push(converted);
        break;
      }
      case "tool_result": {
        const id = pending.get(message.toolCallId);
        if (id === undefined) break;
        pending.delete(message.toolCallId);
        out.push({ role: "tool", tool_call_id: id, content: message.resultText });
        break;
      }
      case "compaction":
        closePending();
        pushUser(compactionText(message.summary));
        break;
    }
  }
  closePending();
  return out;
}

function toAssistantParam(message: AssistantMessage): ChatCompletionAssistantMessageParam | undefined {
  const calls = message.toolCalls ?? [];
  if (calls.length === 0) {
    if (FAILED_STOP_REASONS.has(message.stopReason) || message.text === "") return undefined;
    return { role: "assistant", content: message.text };
  }
  const param: ChatCompletionAssistantMessageParam & { reasoning_content?: string } = {
    role: "assistant",
    content: message.text === "" ? null : message.text,
    tool_calls: calls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
      // Gemini's thought signature goes back where it came: in the call's extra_content.
      ...(call.extraContent ? { extra_content: call.extraContent } : {}),
    })),
  };
  // DeepSeek's and Kimi's thinking modes refuse a tool-call turn whose reasoning is not sent back.
  if (message.thinkingField === "reasoning_content") param.reasoning_content = message.thinking ?? "";
  return param;
}

/** How a compaction summary is put to the model: as a user message that says what it is (pi's wording). */
export function compactionText(summary: string): string {
  return `The conversation history before this point was compacted into the following summary:\n\n<summary>\n${summary}\n</summary>`;
}

/** Tool definitions in the chat-completions `tools` shape. */
export function toOpenAITools(tools: readonly ToolDefinition[]): ChatCompletionFunctionTool[] {
  return tools.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}
