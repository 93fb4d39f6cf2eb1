/**
 * The session's ordered log in Durable Object SQLite: every message and event gets a session-wide,
 * gap-free `seq`, assigned and inserted in one synchronous transaction. Once a row's body has been
 * flushed to an R2 segment the body is dropped here and only the (seq, stream) skeleton stays, so
 * SQLite holds the unflushed tail plus a small index that maps segment lines back to their seqs. The
 * one exception is the newest messages (up to KEPT_MESSAGE_BYTES): their bodies stay after the flush,
 * a copy of what R2 holds, so a cold object builds its history without reading R2.
 */

import { createLogTables } from "./log-tables";

/** The log's streams: conversation messages, run events, and the AWTL trace. One seq space for all. */
export const LOG_STREAMS = ["messages", "events", "trace"] as const;
export type LogStream = (typeof LOG_STREAMS)[number];

/**
 * The largest record the log stores, in bytes of JSON. A record this large is legitimate: a model's
 * `write` call carrying a big file, or a long answer (the runtime caps model output below this).
 */
export const MAX_RECORD_BYTES = 32 * 1024 * 1024;
/**
 * A record's JSON is stored in rows of at most this many UTF-16 characters (at most 3 bytes each in
 * UTF-8): production SQLite refuses strings over 2 MB, which local SQLite does not enforce.
 */
export const ROW_PART_CHARS = 256 * 1024;
/**
 * Bodies of flushed messages kept in SQLite, newest first, up to about this many bytes (always at least
 * the newest message). The rest of the history is read from R2 segments.
 */
export const KEPT_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Rows per INSERT statement: 3 bound values each, under the 100 a Durable Object's SQL takes per query. */
const ROWS_PER_INSERT = 32;

export interface LogRow {
  seq: number;
  stream: LogStream;
  body: string;
}

export interface SegmentRef {
  stream: LogStream;
  startSeq: number;
  endSeq: number;
  records: number;
  bytes: number;
  key: string;
}

export class RecordTooLargeError extends Error {
  override readonly name = "RecordTooLargeError";
  constructor(readonly bytes: number) {
    super(`record is ${bytes} bytes; the limit is ${MAX_RECORD_BYTES} bytes per record`);
  }
}

const encoder = new TextEncoder();

export class SessionLog {
  /** The seq the next append gets, once known. */
  private nextSeq: number | null = null;
  /** Records per stream, once counted (then kept by the appends, as `nextSeq` is). */
  private counted: Record<LogStream, number> | null = null;

  constructor(
    private readonly sql: SqlStorage,
    /** How many bytes of flushed messages stay in SQLite (tests make it small). */
    private readonly keptMessageBytes = KEPT_MESSAGE_BYTES,
  ) {
    createLogTables(sql);
  }

  /**
   * Appends bodies in order and returns their seqs. All or nothing: one INSERT statement for up to
   * ROWS_PER_INSERT one-row records (atomic by itself), else one synchronous transaction, so no other
   * append can interleave and the caller's response waits for the commit (output gate). The next seq is
   * kept in memory after the first append (read from the table once): this object is the log's only
   * writer, and SQLite calls are synchronous. Should a row with that seq exist all the same, the counter
   * is read again.
   */
  append(entries: readonly { stream: LogStream; body: string }[], transactionSync: <T>(fn: () => T) => T): number[] {
    if (entries.length === 0) return [];
    let oneStatement = entries.length <= ROWS_PER_INSERT;
    for (const entry of entries) {
      // UTF-8 takes at most 3 bytes per UTF-16 unit: only a record that might pass the limit is measured.
      if (entry.body.length * 3 > MAX_RECORD_BYTES) {
        const bytes = utf8Bytes(entry.body);
        if (bytes > MAX_RECORD_BYTES) throw new RecordTooLargeError(bytes);
      }
      if (entry.body.length > ROW_PART_CHARS) oneStatement = false;
    }
    let first = this.nextSeq ?? this.lastSeq() + 1;
    try {
      this.insert(entries, first, oneStatement, transactionSync);
    } catch (err) {
      this.nextSeq = null;
      this.counted = null;
      if (!/UNIQUE|PRIMARY KEY/i.test(String((err as Error).message))) throw err;
      first = this.lastSeq() + 1;
      this.insert(entries, first, oneStatement, transactionSync);
    }
    this.nextSeq = first + entries.length;
    if (this.counted) for (const entry of entries) this.counted[entry.stream]++;
    const seqs = new Array<number>(entries.length);
    for (let i = 0; i < entries.length; i++) seqs[i] = first + i;
    return seqs;
  }

  private insert(
    entries: readonly { stream: LogStream; body: string }[],
    first: number,
    oneStatement: boolean,
    transactionSync: <T>(fn: () => T) => T,
  ): void {
    if (entries.length === 1 && oneStatement) this.sql.exec(INSERT_ONE[entries[0]!.stream], first, entries[0]!.body);
    else if (oneStatement) this.insertRows(entries, first);
    else
      transactionSync(() => {
        for (let i = 0; i < entries.length; i++) this.insertRecord(entries[i]!, first + i);
      });
  }

  /** One-row records as one multi-row INSERT (one call into SQLite, whatever the count). */
  private insertRows(entries: readonly { stream: LogStream; body: string }[], first: number): void {
    const values: (string | number)[] = [];
    for (let i = 0; i < entries.length; i++) values.push(first + i, entries[i]!.stream, entries[i]!.body);
    this.sql.exec(INSERT_STATEMENTS[entries.length]!, ...values);
  }

  /** One record of any size: the first part in `log`, the rest in `log_parts`, with its measured size. */
  private insertRecord(entry: { stream: LogStream; body: string }, seq: number): void {
    const parts = splitParts(entry.body);
    const bytes = parts.length > 1 ? utf8Bytes(entry.body) : 0;
    this.sql.exec(
      `INSERT INTO log (seq, stream, body, parts, bytes) VALUES (?, ?, ?, ?, ?)`,
      seq,
      entry.stream,
      parts[0]!,
      parts.length - 1,
      bytes,
    );
    for (let part = 1; part < parts.length; part++) {
      this.sql.exec(`INSERT INTO log_parts (seq, part, body) VALUES (?, ?, ?)`, seq, part, parts[part]!);
    }
  }

  /** A row's whole record: its body plus the parts that follow it. */
  private whole(row: { seq: number; body: string; parts: number }): string {
    if (row.parts === 0) return row.body;
    const rest = this.sql.exec<{ body: string }>(`SELECT body FROM log_parts WHERE seq = ? ORDER BY part`, row.seq).toArray();
    return row.body + rest.map((r) => r.body).join("");
  }

  lastSeq(): number {
    return this.sql.exec<{ seq: number }>(`SELECT IFNULL(MAX(seq), 0) AS seq FROM log`).one().seq;
  }

  /** The newest seq of one stream (0 when it has none). */
  lastSeqOf(stream: LogStream): number {
    return this.sql.exec<{ seq: number }>(`SELECT IFNULL(MAX(seq), 0) AS seq FROM log WHERE stream = ?`, stream).one().seq;
  }

  /**
   * Records per stream. Counted from the table once per object (every row: a long session's log has
   * hundreds of thousands, and the counts are read on every summary report and session read), then
   * kept by the appends.
   */
  counts(): Record<LogStream, number> {
    if (!this.counted) {
      const counts = { messages: 0, events: 0, trace: 0 };
      for (const row of this.sql.exec<{ stream: LogStream; n: number }>(`SELECT stream, COUNT(*) AS n FROM log GROUP BY stream`)) {
        counts[row.stream] = row.n;
      }
      this.counted = counts;
    }
    return { ...this.counted };
  }

  /**
   * Rows whose bodies are still here (not yet flushed, or kept messages), in seq order, after a seq
   * and up to `throughSeq`. Read as raw rows: a cold history load reads thousands of them.
   */
  tail(stream: LogStream, afterSeq = 0, throughSeq = Number.MAX_SAFE_INTEGER): { seq: number; body: string }[] {
    const rows: { seq: number; body: string }[] = [];
    const split: { index: number; parts: number }[] = [];
    const cursor = this.sql
      .exec(
        `SELECT seq, body, parts FROM log WHERE stream = ? AND seq > ? AND seq <= ? AND body IS NOT NULL ORDER BY seq`,
        stream,
        afterSeq,
        throughSeq,
      )
      .raw<[number, string, number]>();
    for (const [seq, body, parts] of cursor) {
      if (parts > 0) split.push({ index: rows.length, parts });
      rows.push({ seq, body });
    }
    for (const { index, parts } of split) rows[index]!.body = this.whole({ ...rows[index]!, parts });
    return rows;
  }

  /** The seqs of one stream in a closed range: the seq of each line of a flushed segment. */
  seqsBetween(stream: LogStream, startSeq: number, endSeq: number): number[] {
    return this.sql
      .exec<{ seq: number }>(`SELECT seq FROM log WHERE stream = ? AND seq BETWEEN ? AND ? ORDER BY seq`, stream, startSeq, endSeq)
      .toArray()
      .map((row) => row.seq);
  }

  /** Flushed segments of a stream in seq order, optionally only those holding rows after a seq. */
  segments(stream: LogStream, afterSeq = 0): SegmentRef[] {
    return this.sql
      .exec<{ start_seq: number; end_seq: number; records: number; bytes: number; key: string }>(
        `SELECT start_seq, end_seq, records, bytes, key FROM segments WHERE stream = ? AND end_seq > ? ORDER BY start_seq`,
        stream,
        afterSeq,
      )
      .toArray()
      .map((r) => ({ stream, startSeq: r.start_seq, endSeq: r.end_seq, records: r.records, bytes: r.bytes, key: r.key }));
  }

  /** Every message row at or after this seq has its body in SQLite (flushed or not). */
  keptFrom(): number {
    return this.sql.exec<{ kept_from: number }>(`SELECT kept_from FROM flush_state`).one().kept_from;
  }

  /** The newest message's JSON, or null when there is none or its body is no longer here (a log from before the copy). */
  newestMessage(): string | null {
    const row = this.sql
      .exec<{ seq: number; body: string | null; parts: number }>(
        `SELECT seq, body, parts FROM log WHERE stream = 'messages' ORDER BY seq DESC LIMIT 1`,
      )
      .toArray()[0];
    return row && row.body !== null ? this.whole({ seq: row.seq, body: row.body, parts: row.parts }) : null;
  }

  flushState(): { flushedSeq: number; plannedSeq: number | null } {
    const row = this.sql
      .exec<{ flushed_seq: number; planned_seq: number | null }>(`SELECT flushed_seq, planned_seq FROM flush_state`)
      .one();
    return { flushedSeq: row.flushed_seq, plannedSeq: row.planned_seq };
  }

  /** Bytes of bodies not yet flushed; drives the size-triggered flush. */
  unflushedBytes(): number {
    // By seq, not by body: kept messages have bodies but are in R2 already.
    return this.sql
      .exec<{ n: number }>(`SELECT IFNULL(SUM(${ROW_BYTES}), 0) AS n FROM log WHERE seq > (SELECT flushed_seq FROM flush_state)`)
      .one().n;
  }

  /**
   * Fixes the end of the next flush: the unflushed rows up to about `maxBytes` (at least one row).
   * Returns the planned end seq, or null when there is nothing to flush. An existing plan is kept.
   */
  planFlush(maxBytes: number): number | null {
    const state = this.flushState();
    if (state.plannedSeq !== null) return state.plannedSeq;
    // Usually the whole tail fits (the threshold is far below maxBytes): one aggregate, no row crosses into JS.
    const all = this.sql
      .exec<{ end: number | null; n: number }>(
        `SELECT MAX(seq) AS end, IFNULL(SUM(${ROW_BYTES}), 0) AS n FROM log WHERE seq > ?`,
        state.flushedSeq,
      )
      .one();
    if (all.end === null) return null;
    let end: number | null = all.n <= maxBytes ? all.end : null;
    let total = 0;
    // Else the rows up to maxBytes, read raw: this runs in the append that crosses the flush threshold.
    if (end === null)
      for (const [seq, n] of this.sql
        .exec(`SELECT seq, ${ROW_BYTES} AS n FROM log WHERE seq > ? ORDER BY seq`, state.flushedSeq)
        .raw<[number, number]>()) {
        if (end !== null && total + n > maxBytes) break;
        total += n;
        end = seq;
      }
    if (end !== null) this.sql.exec(`UPDATE flush_state SET planned_seq = ?`, end);
    return end;
  }

  /** The rows of the planned flush, all streams, in seq order. */
  plannedRows(): LogRow[] {
    const { flushedSeq, plannedSeq } = this.flushState();
    if (plannedSeq === null) return [];
    const rows: LogRow[] = [];
    const split: { index: number; parts: number }[] = [];
    for (const [seq, stream, body, parts] of this.sql
      .exec(`SELECT seq, stream, body, parts FROM log WHERE seq > ? AND seq <= ? ORDER BY seq`, flushedSeq, plannedSeq)
      .raw<[number, LogStream, string, number]>()) {
      if (parts > 0) split.push({ index: rows.length, parts });
      rows.push({ seq, stream, body });
    }
    for (const { index, parts } of split) rows[index]!.body = this.whole({ ...rows[index]!, parts });
    return rows;
  }

  /**
   * Records that the planned rows now live in `segments` and drops their bodies, atomically. Message
   * bodies stay (the copy a cold load reads) until the kept ones pass `keptMessageBytes`; then the
   * oldest are dropped, never the newest message.
   */
  commitFlush(segments: readonly SegmentRef[], transactionSync: <T>(fn: () => T) => T): void {
    transactionSync(() => {
      const { flushedSeq, plannedSeq } = this.flushState();
      if (plannedSeq === null) return;
      for (const s of segments) {
        this.sql.exec(
          `INSERT OR REPLACE INTO segments (stream, start_seq, end_seq, records, bytes, key) VALUES (?, ?, ?, ?, ?, ?)`,
          s.stream,
          s.startSeq,
          s.endSeq,
          s.records,
          s.bytes,
          s.key,
        );
      }
      const added = this.sql
        .exec<{ n: number }>(
          `SELECT IFNULL(SUM(${ROW_BYTES}), 0) AS n FROM log WHERE stream = 'messages' AND seq > ? AND seq <= ?`,
          flushedSeq,
          plannedSeq,
        )
        .one().n;
      this.sql.exec(
        `DELETE FROM log_parts WHERE seq IN (SELECT seq FROM log WHERE stream != 'messages' AND parts > 0 AND seq > ? AND seq <= ?)`,
        flushedSeq,
        plannedSeq,
      );
      this.sql.exec(`UPDATE log SET body = NULL, parts = 0 WHERE stream != 'messages' AND seq > ? AND seq <= ?`, flushedSeq, plannedSeq);
      this.sql.exec(`UPDATE flush_state SET flushed_seq = ?, planned_seq = NULL, kept_bytes = kept_bytes + ?`, plannedSeq, added);
      this.trimKeptMessages(plannedSeq);
    });
  }

  /** Drops the oldest kept message bodies (all flushed) while the kept bytes pass the bound; keeps the newest message. */
  private trimKeptMessages(flushedSeq: number): void {
    const state = this.sql.exec<{ kept_from: number; kept_bytes: number }>(`SELECT kept_from, kept_bytes FROM flush_state`).one();
    let excess = state.kept_bytes - this.keptMessageBytes;
    if (excess <= 0) return;
    const newest = this.sql
      .exec<{ seq: number }>(`SELECT seq FROM log WHERE stream = 'messages' AND seq <= ? ORDER BY seq DESC LIMIT 1`, flushedSeq)
      .one().seq;
    let cut = state.kept_from - 1;
    let dropped = 0;
    for (const row of this.sql.exec<{ seq: number; n: number }>(
      `SELECT seq, ${ROW_BYTES} AS n FROM log WHERE stream = 'messages' AND seq >= ? AND seq < ? ORDER BY seq`,
      state.kept_from,
      newest,
    )) {
      if (excess <= 0) break;
      cut = row.seq;
      dropped += row.n;
      excess -= row.n;
    }
    if (cut < state.kept_from) return;
    this.sql.exec(
      `DELETE FROM log_parts WHERE seq IN (SELECT seq FROM log WHERE stream = 'messages' AND parts > 0 AND seq >= ? AND seq <= ?)`,
      state.kept_from,
      cut,
    );
    this.sql.exec(`UPDATE log SET body = NULL, parts = 0 WHERE stream = 'messages' AND seq >= ? AND seq <= ?`, state.kept_from, cut);
    this.sql.exec(`UPDATE flush_state SET kept_from = ?, kept_bytes = kept_bytes - ?`, cut + 1, dropped);
  }
}

/** The byte size of a row's record; rows written before `bytes` existed are measured. */
const ROW_BYTES = "CASE WHEN bytes > 0 THEN bytes ELSE LENGTH(CAST(body AS BLOB)) END";

/** The INSERT of one one-row record per stream: the stream as a literal is one bound value less. */
const INSERT_ONE: Record<LogStream, string> = {
  messages: `INSERT INTO log (seq, stream, body) VALUES (?, 'messages', ?)`,
  events: `INSERT INTO log (seq, stream, body) VALUES (?, 'events', ?)`,
  trace: `INSERT INTO log (seq, stream, body) VALUES (?, 'trace', ?)`,
};

/** `INSERT` statements for 1..ROWS_PER_INSERT one-row records, built once (SQLite caches them by text). */
const INSERT_STATEMENTS = Array.from(
  { length: ROWS_PER_INSERT + 1 },
  (_, n) => `INSERT INTO log (seq, stream, body) VALUES ${Array.from({ length: n }, () => "(?, ?, ?)").join(", ")}`,
);

function utf8Bytes(text: string): number {
  return encoder.encode(text).byteLength;
}

/** The JSON cut into parts of at most ROW_PART_CHARS, never between the two halves of a surrogate pair. */
function splitParts(body: string): string[] {
  if (body.length <= ROW_PART_CHARS) return [body];
  const parts: string[] = [];
  for (let start = 0; start < body.length; ) {
    let end = Math.min(start + ROW_PART_CHARS, body.length);
    const last = body.charCodeAt(end - 1);
    if (end < body.length && last >= 0xd800 && last <= 0xdbff) end--;
    parts.push(body.slice(start, end));
    start = end;
  }
  return parts;
}
