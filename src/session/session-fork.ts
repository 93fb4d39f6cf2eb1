import { type AgentMessage, type IdGenerator, nowIso } from "../domain";
import { runLeftovers } from "../runtime/run-closing";
import type { OverlayVersionRef } from "../workspace/overlay";

/** The text of the error result a fork gives a copied tool call whose result it does not copy. */
export const FORKED_TOOL_RESULT_TEXT = "no result: the session was forked before this tool call's result";

/** Where a fork came from. */
export interface ForkOrigin {
  sessionId: string;
  messageId: string | null;
}

/**
 * A change of the source's workspace as a fork copies it: stamped by a message instead of a seq,
 * its bytes read from the source by `ref` in parts (a workspace's history can be far larger than
 * one RPC call carries).
 */
export interface ForkedChange {
  ref: OverlayVersionRef;
  /** The first copied message at or after the change (null: made before any message). */
  stampMessageId: string | null;
}

/** How much of a fork's changes one RPC call carries. */
export interface ForkBatchLimits {
  /** Content bytes (one larger file goes alone; files are at most 16 MiB). */
  bytes: number;
  /** Changes: each carries its path and fields too, so many small ones weigh as much as bytes. */
  changes: number;
}

export const FORK_COPY_BATCH: ForkBatchLimits = { bytes: 8 * 1024 * 1024, changes: 10_000 };

/** The changes in order, grouped into runs within `limits` (one change at least). */
export function forkCopyBatches(changes: readonly ForkedChange[], limits: ForkBatchLimits = FORK_COPY_BATCH): ForkedChange[][] {
  const batches: ForkedChange[][] = [];
  let batch: ForkedChange[] = [];
  let bytes = 0;
  for (const change of changes) {
    if (batch.length > 0 && (bytes + change.ref.size > limits.bytes || batch.length === limits.changes)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(change);
    bytes += change.ref.size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** What a fork copies from its source: committed messages up to one, and the workspace changes made up to it. */
export interface ForkPick {
  atMessageId: string | null;
  messages: AgentMessage[];
  changes: ForkedChange[];
}

/**
 * A fork's source as its object hands it over: the messages as JSONL (one message per line; a long
 * session's are more than one RPC call carries), the changes to be read in parts.
 */
export interface ForkSource extends Omit<ForkPick, "messages"> {
  messages: ReadableStream<Uint8Array>;
  workspaceId: string | null;
  projectId: string | null;
  title: string | null;
}

/** Messages as JSONL text, about `FORK_COPY_BATCH.bytes` characters per part. */
export async function* messageLines(messages: readonly AgentMessage[]): AsyncGenerator<string> {
  let part = "";
  for (const message of messages) {
    part += `${JSON.stringify(message)}\n`;
    if (part.length >= FORK_COPY_BATCH.bytes) {
      yield part;
      part = "";
    }
  }
  if (part !== "") yield part;
}

/**
 * The messages of a `ForkSource` stream or a messages export, read a line at a time, those `keep`
 * picks. They were validated when their object stored them, and come from an object of this service,
 * so they are parsed, not checked again.
 */
export async function readMessageLines(
  stream: ReadableStream<Uint8Array>,
  keep: (message: AgentMessage) => boolean = () => true,
): Promise<AgentMessage[]> {
  const messages: AgentMessage[] = [];
  const decoder = new TextDecoder();
  // The unfinished line's pieces: a long message spans many chunks, and joining them only once its
  // end arrives keeps the work linear (re-joining at every chunk made a 14 MB message take seconds).
  let pending: string[] = [];
  const add = (line: string) => {
    if (line === "") return;
    const message = JSON.parse(line) as AgentMessage;
    if (keep(message)) messages.push(message);
  };
  for await (const chunk of stream) {
    const text = decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
      pending.push(text.slice(start, end));
      add(pending.join(""));
      pending = [];
      start = end + 1;
    }
    if (start < text.length) pending.push(text.slice(start));
  }
  pending.push(decoder.decode());
  add(pending.join(""));
  return messages;
}

/**
 * The messages up to and including `atMessageId` (default: the newest), and every overlay change
 * stamped at or below that message's seq, each restamped with the first message at or after it. In
 * the fork the messages get new seqs, and a change gets its message's new seq as its stamp, so a fork
 * of the fork at an earlier message again sees exactly the changes made up to that message.
 */
export function forkSource(
  messages: { seq: number; message: AgentMessage }[],
  atMessageId: string | undefined,
  versionRefsUpTo: (maxStamp: number) => OverlayVersionRef[],
  lastSeq: number,
): { ok: true; source: ForkPick } | { ok: false } {
  const at = atMessageId === undefined ? messages.length - 1 : messages.findIndex((m) => m.message.id === atMessageId);
  if (atMessageId !== undefined && at < 0) return { ok: false };
  const copied = messages.slice(0, at + 1);
  const maxStamp = at < 0 ? lastSeq : copied[at]!.seq;
  const changes = versionRefsUpTo(maxStamp).map((ref) => ({
    ref,
    stampMessageId: ref.stamp === 0 ? null : (copied.find((m) => m.seq >= ref.stamp)?.message.id ?? copied.at(-1)?.message.id ?? null),
  }));
  return { ok: true, source: { atMessageId: copied.at(-1)?.message.id ?? null, messages: copied.map((m) => m.message), changes } };
}

/**
 * Error results, chained after the last of `messages`, for the tool calls among them left without
 * one: a fork at an assistant message that made calls, at the first of several results, or taken
 * while a tool runs. Without them the fork would hold open calls for good, which every later
 * request would fill with made-up results (hunt 52); a run cut off by a restart is closed the same way.
 */
export function forkClosingResults(
  messages: readonly AgentMessage[],
  input: { sessionId: string; ids: IdGenerator; clock: () => number },
): AgentMessage[] {
  const createdAt = nowIso(input.clock);
  let parentId = messages.at(-1)?.id ?? null;
  return runLeftovers(messages, []).unanswered.map((call) => {
    const id = input.ids.next("message");
    const result: AgentMessage = {
      kind: "tool_result",
      id,
      sessionId: input.sessionId,
      parentId,
      createdAt,
      toolCallId: call.id,
      toolName: call.name,
      resultText: FORKED_TOOL_RESULT_TEXT,
      error: true,
    };
    parentId = id;
    return result;
  });
}

/** Where this session was forked from (table `fork_origin`, one row in a fork, none otherwise). */
export class ForkOriginTable {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS fork_origin (session_id TEXT NOT NULL, message_id TEXT)`);
  }

  get(): ForkOrigin | null {
    const row = this.sql.exec<{ session_id: string; message_id: string | null }>(`SELECT * FROM fork_origin`).toArray()[0];
    return row ? { sessionId: row.session_id, messageId: row.message_id } : null;
  }

  set(origin: ForkOrigin): void {
    this.sql.exec(`INSERT INTO fork_origin (session_id, message_id) VALUES (?, ?)`, origin.sessionId, origin.messageId);
  }
}
