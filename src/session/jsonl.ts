import type { z } from "zod";
import { AgentEvent, AgentMessage, EVENT_TYPES, formatIssues, MESSAGE_KINDS, TRACE_TYPES, TraceRecord } from "../domain";

/**
 * Strict, flat JSONL: one record per line, `\n` separators, the concrete record written as it is
 * (`{"kind":"user","id":"m_1",...}`), never wrapped. Decoding picks the schema by the discriminator
 * and fails loudly, naming the line, on anything it cannot vouch for.
 */

/** A line that could not be decoded; `line` is 1-based. */
export class JsonlDecodeError extends Error {
  override readonly name = "JsonlDecodeError";
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

/** One record as a JSONL line (no trailing newline), its fields in the record's own order. */
export function encodeLine(record: AgentMessage | AgentEvent | TraceRecord): string {
  return JSON.stringify(record);
}

/** Records as a JSONL document: every line ends with `\n`; empty input gives "". */
export function encodeJsonl(records: readonly (AgentMessage | AgentEvent)[]): string {
  let out = "";
  for (const record of records) out += `${encodeLine(record)}\n`;
  return out;
}

interface RecordFamily<T> {
  discriminator: "kind" | "type";
  known: readonly string[];
  schema: z.ZodType<T>;
  noun: string;
}

const MESSAGES: RecordFamily<AgentMessage> = { discriminator: "kind", known: MESSAGE_KINDS, schema: AgentMessage, noun: "message" };
const EVENTS: RecordFamily<AgentEvent> = { discriminator: "type", known: EVENT_TYPES, schema: AgentEvent, noun: "event" };
const TRACE: RecordFamily<TraceRecord> = { discriminator: "type", known: TRACE_TYPES, schema: TraceRecord, noun: "trace record" };

/** Decodes one message line; `lineNumber` only labels errors. */
export function decodeMessageLine(line: string, lineNumber = 1, sessionId?: string): AgentMessage {
  return decodeLine(MESSAGES, line, lineNumber, sessionId);
}

/**
 * Decodes a message line this log wrote itself (validated with the schema when it was appended, or
 * built by the runtime from typed values): the structural checks only (JSON object, known `kind`, this
 * session, a string `id`), without the schema pass that costs most of a cold history load. Anything
 * from outside (imports, RPC appends) goes through `decodeMessageLine`.
 */
export function decodeStoredMessageLine(line: string, lineNumber: number, sessionId: string): AgentMessage {
  const value = decodeShape(MESSAGES, line, lineNumber) as Partial<AgentMessage>;
  if (typeof value.id !== "string") throw new JsonlDecodeError(lineNumber, `invalid ${value.kind} message: id must be a string`);
  if (value.sessionId !== sessionId) {
    throw new JsonlDecodeError(lineNumber, `record belongs to session '${value.sessionId}', not '${sessionId}'`);
  }
  return value as AgentMessage;
}

export function decodeEventLine(line: string, lineNumber = 1, sessionId?: string): AgentEvent {
  return decodeLine(EVENTS, line, lineNumber, sessionId);
}

/** Decodes one trace line; `taskId` (the session) must be `sessionId` when given. */
export function decodeTraceLine(line: string, lineNumber = 1, sessionId?: string): TraceRecord {
  return decodeLine(TRACE, line, lineNumber, sessionId);
}

/** Decodes a messages JSONL document; when `sessionId` is given, records of other sessions are refused. */
export function decodeMessages(text: string, sessionId?: string): AgentMessage[] {
  return decodeDocument(MESSAGES, text, sessionId);
}

export function decodeEvents(text: string, sessionId?: string): AgentEvent[] {
  return decodeDocument(EVENTS, text, sessionId);
}

function decodeDocument<T>(family: RecordFamily<T>, text: string, sessionId?: string): T[] {
  const records: T[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === "") continue;
    records.push(decodeLine(family, line, i + 1, sessionId));
  }
  return records;
}

function decodeLine<T>(family: RecordFamily<T>, line: string, lineNumber: number, sessionId?: string): T {
  const value = decodeShape(family, line, lineNumber);
  const tag = value[family.discriminator] as string;
  const parsed = family.schema.safeParse(value);
  if (!parsed.success) throw new JsonlDecodeError(lineNumber, `invalid ${tag} ${family.noun}: ${formatIssues(parsed.error.issues)}`);
  // A message is kept as it came once its schema accepts it (the message schemas have no defaults or
  // transforms): zod's output would reorder its fields and leave out a `__proto__` key of tool-call
  // arguments, so an import or a fork would not be the same conversation byte for byte.
  const data = (family === MESSAGES ? value : parsed.data) as { sessionId?: string; taskId?: string };
  const owner = data.sessionId ?? data.taskId;
  if (sessionId !== undefined && owner !== sessionId) {
    throw new JsonlDecodeError(lineNumber, `record belongs to session '${owner}', not '${sessionId}'`);
  }
  return data as T;
}

/** A line parsed into a JSON object whose discriminator is a known string; no schema check yet. */
function decodeShape<T>(family: RecordFamily<T>, line: string, lineNumber: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new JsonlDecodeError(lineNumber, `malformed JSON (${(err as Error).message})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new JsonlDecodeError(lineNumber, "a record must be a JSON object");
  }
  const field = family.discriminator;
  if (!(field in value)) throw new JsonlDecodeError(lineNumber, `missing discriminator '${field}'`);
  const tag = (value as Record<string, unknown>)[field];
  if (typeof tag !== "string") throw new JsonlDecodeError(lineNumber, `discriminator '${field}' must be a string`);
  if (!family.known.includes(tag)) throw new JsonlDecodeError(lineNumber, `unknown ${family.noun} ${field} '${tag}'`);
  return value as Record<string, unknown>;
}
