import type { AgentMessage, CompactionMessage } from "../domain";
import { decodeStoredMessageLine } from "./jsonl";
import { type FlushedSource, readLogLines } from "./log-reader";
import type { SegmentBucket } from "./segment-flusher";
import { EMPTY_USAGE, type UsageTotals, usageTotals } from "./session-context";
import type { SessionLog } from "./session-log";

/**
 * The messages a cold object loads, from the copy SQLite keeps (`copy`; older ones from R2 segments,
 * read in parallel), each line checked structurally (this log validated it when it was appended).
 * `r2` reads every flushed line from R2, as an object from before the copy does.
 */
export async function loadStoredMessages(
  log: SessionLog,
  bucket: SegmentBucket,
  sessionId: string,
  source: FlushedSource = "copy",
): Promise<AgentMessage[]> {
  return (await loadMessagesAfter(log, bucket, sessionId, 0, source)).messages;
}

/** The stored messages after `afterSeq`, with their seqs (as `loadStoredMessages`). */
export async function loadMessagesAfter(
  log: SessionLog,
  bucket: SegmentBucket,
  sessionId: string,
  afterSeq: number,
  source: FlushedSource = "copy",
): Promise<SeqMessages> {
  const lines = await readLogLines(log, bucket, "messages", afterSeq, source);
  const messages = new Array<AgentMessage>(lines.length);
  const seqs = new Array<number>(lines.length);
  for (let i = 0; i < lines.length; i++) {
    messages[i] = decodeStoredMessageLine(lines[i]!.body, lines[i]!.seq, sessionId);
    seqs[i] = lines[i]!.seq;
  }
  return { messages, seqs };
}

export interface SeqMessages {
  messages: AgentMessage[];
  /** Each message's seq in the log. */
  seqs: number[];
}

/** What the messages before a history's start add up to: the counts the dropped messages still count in. */
export interface HistoryBefore {
  /** Assistant messages before the start (a replay aligns on the session's whole count). */
  assistants: number;
  /** Their usage and cost (the session's totals include them). */
  usage: UsageTotals;
}

/** The history a run, a compaction and the session's status need (`MessageHistory.load`). */
export interface RunHistory {
  /** From the latest compaction's first kept message (or the compaction itself) on: all the model sees, and more. */
  messages: AgentMessage[];
  before: HistoryBefore;
}

interface HistoryStart extends HistoryBefore {
  /** The history starts after this seq (0: at the beginning). */
  afterSeq: number;
}

const NO_START: HistoryStart = { afterSeq: 0, assistants: 0, usage: EMPTY_USAGE };

/**
 * Where the session's history starts (table `history_start`, one row once a compaction moved it).
 * Only ever written after the log holds the compaction that moved it, so a lost write leaves an
 * earlier start: more to read, never less.
 */
export class HistoryStartRow {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS history_start (
      id INTEGER PRIMARY KEY CHECK (id = 1), after_seq INTEGER NOT NULL, assistants INTEGER NOT NULL, usage TEXT NOT NULL
    )`);
  }

  get(): HistoryStart {
    const row = this.sql
      .exec<{ after_seq: number; assistants: number; usage: string }>(`SELECT after_seq, assistants, usage FROM history_start`)
      .toArray()[0];
    return row ? { afterSeq: row.after_seq, assistants: row.assistants, usage: JSON.parse(row.usage) as UsageTotals } : NO_START;
  }

  set(start: HistoryStart): void {
    this.sql.exec(
      `INSERT OR REPLACE INTO history_start (id, after_seq, assistants, usage) VALUES (1, ?, ?, ?)`,
      start.afterSeq,
      start.assistants,
      JSON.stringify(start.usage),
    );
  }
}

interface Loaded extends SeqMessages {
  before: HistoryBefore;
}

/**
 * The session's history from its latest compaction on, loaded once and then kept current by the
 * appends that follow. Messages a compaction summarised are dropped from memory and, by the start
 * it records, from the next cold load: what is kept is what `modelView` reads (the compaction, the
 * messages it kept, the ones after it), so the model's view is the same as over the whole log. The
 * dropped messages' assistant count and usage are carried in `before`. A load that raced an append
 * (the append landed while the load was reading) is not cached, so the cache never misses a message.
 */
export class MessageHistory {
  private cache: Loaded | null = null;
  /** Bumped on every message append. */
  private version = 0;

  constructor(
    private readonly read: (afterSeq: number) => Promise<SeqMessages>,
    private readonly start: Pick<HistoryStartRow, "get" | "set">,
  ) {}

  async load(): Promise<RunHistory> {
    while (!this.cache) {
      const version = this.version;
      const start = this.start.get();
      const loaded = await this.read(start.afterSeq);
      if (version !== this.version) continue;
      this.cache = { ...loaded, before: { assistants: start.assistants, usage: start.usage } };
      // A start that lags (an object that was evicted before recording it, or a log from before starts).
      this.moveStart();
    }
    return { messages: [...this.cache.messages], before: this.cache.before };
  }

  appended(messages: readonly AgentMessage[], seqs: readonly number[]): void {
    this.version++;
    if (!this.cache) return;
    this.cache.messages.push(...messages);
    this.cache.seqs.push(...seqs);
    if (messages.some((m) => m.kind === "compaction")) this.moveStart();
  }

  /** Moves the start to the latest compaction's, dropping what it summarised, and records it. */
  private moveStart(): void {
    const cache = this.cache!;
    const { messages, seqs } = cache;
    let at = messages.length - 1;
    while (at >= 0 && messages[at]!.kind !== "compaction") at--;
    if (at < 0) return;
    const compaction = messages[at] as CompactionMessage;
    const kept = messages.findIndex((m) => m.id === compaction.firstKeptMessageId);
    if (kept < 0 && at > 0 && this.start.get().afterSeq > 0) {
      // It names a message this history does not hold: one from before its start (only an imported
      // compaction can), or none at all. The next load reads the whole log again and finds out. (A
      // history that starts at the compaction itself was cut there because it names none.)
      this.start.set(NO_START);
      this.cache = null;
      return;
    }
    const from = kept >= 0 && kept < at ? kept : at;
    if (from === 0) return;
    const dropped = messages.slice(0, from);
    const before: HistoryBefore = {
      assistants: cache.before.assistants + dropped.filter((m) => m.kind === "assistant").length,
      usage: usageTotals(dropped, cache.before.usage),
    };
    this.cache = { messages: messages.slice(from), seqs: seqs.slice(from), before };
    this.start.set({ afterSeq: seqs[from]! - 1, ...before });
  }
}
