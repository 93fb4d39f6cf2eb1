import {
  type AgentMessage,
  HarnessError,
  MAX_IMPORT_MESSAGES,
  MAX_IMPORTED_COST,
  MAX_IMPORTED_ID_CHARS,
  MAX_IMPORTED_TOKENS,
  MAX_JSON_DEPTH,
  MAX_PROMPT_CHARS,
  nestsDeeperThan,
} from "../domain";
import { decodeMessageLine, JsonlDecodeError } from "../session/jsonl";
import { jsonTextProblem, tooLarge } from "./body";
import { PromptText } from "./schemas";
import { Sha256Stream } from "./sha256-stream";

const invalid = (line: number, why: string) => new HarnessError("import_invalid", `line ${line}: ${why}`);

/**
 * How deep a message line may nest: a tool call's arguments, taken from a model at up to
 * `MAX_JSON_DEPTH` levels, sit three levels in (the message, its toolCalls, the call). Counting the
 * line alone refused the harness's own exports of calls 62 to 64 levels deep (hunt 81).
 */
const MESSAGE_LINE_DEPTH = MAX_JSON_DEPTH + 3;
/**
 * Reads an exported conversation (`GET /api/sessions/:id/messages`, JSONL) for import: every line
 * (blank ones passed over) a strict message record, all of one session, ids unique, each message's parent the one before it
 * (the first has none), user text as a prompt takes it, and every tool result answering a call of
 * the assistant message just before it (its results come before anything else, as a provider takes
 * them). Returns the messages as read; the store gives them their new session id.
 */
export function readConversation(text: string): AgentMessage[] {
  const reader = new ConversationReader();
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  for (const line of lines) reader.add(line);
  return reader.end();
}

/**
 * `readConversation` of a request body as it arrives: the body's bytes and its text are never held
 * whole (a 16 MiB import would hold them beside its messages and their copy sent to the session),
 * only the messages. Counts the bytes (413 `body_too_large` past `maxBytes`), decodes UTF-8 strictly
 * and hashes what it read (the Idempotency-Key fingerprint). Stops reading at the first refusal.
 */
export async function readConversationBody(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<{ messages: AgentMessage[]; sha256: string }> {
  const reader = new ConversationReader();
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
  const hash = new Sha256Stream();
  let total = 0;
  let pending = "";
  // Lines are cut from each chunk's text (a long line grows as a rope, never re-scanned).
  const take = (text: string) => {
    let from = 0;
    for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", from)) {
      reader.add(pending + text.slice(from, end));
      pending = "";
      from = end + 1;
    }
    pending += text.slice(from);
  };
  const bytes = body?.getReader();
  try {
    for (;;) {
      const chunk = await bytes?.read();
      if (!chunk || chunk.done) break;
      total += chunk.value.byteLength;
      if (total > maxBytes) throw tooLarge(maxBytes);
      await hash.add(chunk.value);
      take(decodeUtf8(decoder, chunk.value, true));
    }
    take(decodeUtf8(decoder, undefined, false));
    if (pending !== "") reader.add(pending);
    await hash.finish();
  } catch (err) {
    bytes?.cancel(err).catch(() => {});
    hash.abort(err);
    throw err;
  }
  return { messages: reader.end(), sha256: await hash.hex };
}

function decodeUtf8(decoder: TextDecoder, bytes: Uint8Array | undefined, stream: boolean): string {
  try {
    return decoder.decode(bytes, { stream });
  } catch {
    throw new HarnessError("import_invalid", "the body is not valid UTF-8");
  }
}

/** The checks of `readConversation`, one line at a time. */
class ConversationReader {
  private readonly messages: AgentMessage[] = [];
  private readonly ids = new Set<string>();
  private readonly openCalls = new Set<string>();
  private lines = 0;

  /** Takes the next line; a blank one (an extra newline, files joined) is passed over, as a trace import does. */
  add(line: string): void {
    const { messages, ids, openCalls } = this;
    const n = ++this.lines;
    if (!/\S/.test(line)) return;
    if (messages.length >= MAX_IMPORT_MESSAGES) throw invalid(n, `a conversation holds at most ${MAX_IMPORT_MESSAGES} messages`);
    if (nestsDeeperThan(line, MESSAGE_LINE_DEPTH)) throw invalid(n, `arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels`);
    let message: AgentMessage;
    try {
      message = decodeMessageLine(line, n);
    } catch (err) {
      if (err instanceof JsonlDecodeError) throw new HarnessError("import_invalid", err.message);
      throw err;
    }
    const problem = jsonTextProblem(message, MESSAGE_LINE_DEPTH);
    if (problem?.kind === "too_deep") throw invalid(n, `arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels`);
    if (problem)
      throw new HarnessError(
        "invalid_text",
        `line ${n}: ${problem.path} contains a lone UTF-16 surrogate, which cannot be stored as UTF-8`,
      );
    const previous = messages[messages.length - 1];
    if (previous && message.sessionId !== previous.sessionId)
      throw invalid(n, `belongs to session '${message.sessionId}', the lines before to '${previous.sessionId}'`);
    if (ids.has(message.id)) throw invalid(n, `message id '${message.id}' appears twice`);
    const expectedParent = previous?.id ?? null;
    if (message.parentId !== expectedParent)
      throw invalid(
        n,
        `parentId must be ${expectedParent === null ? "null (the first message)" : `'${expectedParent}', the message before`}`,
      );
    const tooLarge = oversized(message);
    if (tooLarge) throw invalid(n, tooLarge);
    const badText = message.kind === "user" ? promptTextProblem(message.text) : null;
    if (badText) throw invalid(n, badText);
    // Anything but a result ends the wait for the calls before it: a provider is sent them as
    // unanswered, and a result that came later would never reach it.
    if (message.kind !== "tool_result") openCalls.clear();
    if (message.kind === "assistant")
      for (const call of message.toolCalls ?? []) {
        // Providers refuse a tool call id that is already waiting for its result.
        if (openCalls.has(call.id)) throw invalid(n, `tool call id '${call.id}' is already waiting for its result`);
        openCalls.add(call.id);
      }
    if (message.kind === "tool_result") {
      if (!openCalls.has(message.toolCallId))
        throw invalid(
          n,
          `tool result for '${message.toolCallId}', which is not waiting for its result: no earlier message called it, it was answered, or another message came after its call`,
        );
      openCalls.delete(message.toolCallId);
    }
    ids.add(message.id);
    messages.push(message);
  }

  end(): AgentMessage[] {
    if (this.messages.length === 0) throw new HarnessError("import_invalid", "the conversation holds no messages");
    return this.messages;
  }
}

/** Why a user message's text is not one a prompt could have sent (blank, or too long), or null. */
function promptTextProblem(text: string): string | null {
  if (!/\S/.test(text)) return "a user message's text is blank (a prompt's text is not)";
  // Counted as a prompt's (code points): every prompt the server took can be imported back (hunt 57).
  if (!PromptText.safeParse(text).success)
    return `a user message's text has ${[...text].length} characters (a prompt's at most ${MAX_PROMPT_CHARS})`;
  return null;
}

/** Why a message's id, tool call ids, usage or cost is past what an import takes, or null. */
function oversized(message: AgentMessage): string | null {
  const ids = [message.id, ...(message.kind === "assistant" ? (message.toolCalls ?? []).map((c) => c.id) : [])];
  if (message.kind === "tool_result") ids.push(message.toolCallId);
  const long = ids.find((id) => id.length > MAX_IMPORTED_ID_CHARS);
  if (long !== undefined) return `an id of ${long.length} characters (at most ${MAX_IMPORTED_ID_CHARS})`;
  if (message.kind !== "assistant" && message.kind !== "compaction") return null;
  const counts = Object.entries(message.usage ?? {});
  const big = counts.find(([, value]) => value > MAX_IMPORTED_TOKENS);
  if (big) return `usage.${big[0]} is ${big[1]} (at most ${MAX_IMPORTED_TOKENS})`;
  if ((message.cost ?? 0) > MAX_IMPORTED_COST) return `cost is ${message.cost} (at most ${MAX_IMPORTED_COST})`;
  return null;
}
