/**
 * The session's ordered log in Durable Object SQLite: every message and event gets a session-wide,
 * gap-free `seq`, assigned and inserted in one synchronous transaction. Once a row's body has been
 * flushed to an R2 segment the body is dropped here and only the (seq, stream) skeleton stays, so
 * SQLite holds the unflushed tail plus a small index that maps segment lines back to their seqs.
 */

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

/**
 * The log table. body: the record's JSON, or its first part when `parts` more rows follow in
 * log_parts; NULL once flushed. bytes: the whole record's UTF-8 size (flush sizing).
 */
const LOG_TABLE = `log (
  seq INTEGER PRIMARY KEY,
  stream TEXT NOT NULL CHECK (stream IN ('messages', 'events', 'trace')),
  body TEXT,
  parts INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL DEFAULT 0
)`;

export class SessionLog {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS ${LOG_TABLE}`);
    migrateStreamCheck(sql);
    const columns = sql
      .exec<{ name: string }>(`PRAGMA table_info(log)`)
      .toArray()
      .map((c) => c.name);
    if (!columns.includes("parts")) sql.exec(`ALTER TABLE log ADD COLUMN parts INTEGER NOT NULL DEFAULT 0`);
    if (!columns.includes("bytes")) sql.exec(`ALTER TABLE log ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0`);
    sql.exec(
      `CREATE TABLE IF NOT EXISTS log_parts (seq INTEGER NOT NULL, part INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (seq, part))`,
    );
    sql.exec(`CREATE TABLE IF NOT EXISTS segments (
      stream TEXT NOT NULL, start_seq INTEGER NOT NULL, end_seq INTEGER NOT NULL,
      records INTEGER NOT NULL, bytes INTEGER NOT NULL, key TEXT NOT NULL,
      PRIMARY KEY (stream, start_seq)
    )`);
    // flushed_seq: every row <= it lives in R2. planned_seq: the end of a flush in progress, kept so
    // a retried flush writes exactly the same segments (create-only puts are then idempotent).
    sql.exec(`CREATE TABLE IF NOT EXISTS flush_state (
      id INTEGER PRIMARY KEY CHECK (id = 1), flushed_seq INTEGER NOT NULL, planned_seq INTEGER
    )`);
    sql.exec(`INSERT OR IGNORE INTO flush_state (id, flushed_seq, planned_seq) VALUES (1, 0, NULL)`);
  }

  /**
   * Appends bodies in order and returns their seqs. All or nothing: one synchronous transaction, so
   * no other append can interleave and the caller's response waits for the commit (output gate).
   */
  append(entries: readonly { stream: LogStream; body: string }[], transactionSync: <T>(fn: () => T) => T): number[] {
    const sized = entries.map((entry) => ({ ...entry, bytes: utf8Bytes(entry.body), parts: splitParts(entry.body) }));
    for (const entry of sized) if (entry.bytes > MAX_RECORD_BYTES) throw new RecordTooLargeError(entry.bytes);
    return transactionSync(() =>
      sized.map((entry) => {
        const seq = this.sql
          .exec<{ seq: number }>(
            `INSERT INTO log (seq, stream, body, parts, bytes) VALUES ((SELECT IFNULL(MAX(seq), 0) + 1 FROM log), ?, ?, ?, ?) RETURNING seq`,
            entry.stream,
            entry.parts[0]!,
            entry.parts.length - 1,
            entry.bytes,
          )
          .one().seq;
        for (let part = 1; part < entry.parts.length; part++) {
          this.sql.exec(`INSERT INTO log_parts (seq, part, body) VALUES (?, ?, ?)`, seq, part, entry.parts[part]!);
        }
        return seq;
      }),
    );
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

  counts(): Record<LogStream, number> {
    const counts = { messages: 0, events: 0, trace: 0 };
    for (const row of this.sql.exec<{ stream: LogStream; n: number }>(`SELECT stream, COUNT(*) AS n FROM log GROUP BY stream`)) {
      counts[row.stream] = row.n;
    }
    return counts;
  }

  /** Rows whose bodies are still here (not yet flushed), in seq order, optionally after a seq. */
  tail(stream: LogStream, afterSeq = 0): LogRow[] {
    return this.sql
      .exec<{ seq: number; body: string; parts: number }>(
        `SELECT seq, body, parts FROM log WHERE stream = ? AND seq > ? AND body IS NOT NULL ORDER BY seq`,
        stream,
        afterSeq,
      )
      .toArray()
      .map((row) => ({ seq: row.seq, stream, body: this.whole(row) }));
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

  flushState(): { flushedSeq: number; plannedSeq: number | null } {
    const row = this.sql
      .exec<{ flushed_seq: number; planned_seq: number | null }>(`SELECT flushed_seq, planned_seq FROM flush_state`)
      .one();
    return { flushedSeq: row.flushed_seq, plannedSeq: row.planned_seq };
  }

  /** Bytes of bodies not yet flushed; drives the size-triggered flush. */
  unflushedBytes(): number {
    return this.sql.exec<{ n: number }>(`SELECT IFNULL(SUM(${ROW_BYTES}), 0) AS n FROM log WHERE body IS NOT NULL`).one().n;
  }

  /**
   * Fixes the end of the next flush: the unflushed rows up to about `maxBytes` (at least one row).
   * Returns the planned end seq, or null when there is nothing to flush. An existing plan is kept.
   */
  planFlush(maxBytes: number): number | null {
    const state = this.flushState();
    if (state.plannedSeq !== null) return state.plannedSeq;
    let total = 0;
    let end: number | null = null;
    for (const row of this.sql.exec<{ seq: number; n: number }>(
      `SELECT seq, ${ROW_BYTES} AS n FROM log WHERE seq > ? ORDER BY seq`,
      state.flushedSeq,
    )) {
      if (end !== null && total + row.n > maxBytes) break;
      total += row.n;
      end = row.seq;
    }
    if (end !== null) this.sql.exec(`UPDATE flush_state SET planned_seq = ?`, end);
    return end;
  }

  /** The rows of the planned flush, all streams, in seq order. */
  plannedRows(): LogRow[] {
    const { flushedSeq, plannedSeq } = this.flushState();
    if (plannedSeq === null) return [];
    return this.sql
      .exec<{ seq: number; stream: LogStream; body: string; parts: number }>(
        `SELECT seq, stream, body, parts FROM log WHERE seq > ? AND seq <= ? ORDER BY seq`,
        flushedSeq,
        plannedSeq,
      )
      .toArray()
      .map((row) => ({ seq: row.seq, stream: row.stream, body: this.whole(row) }));
  }

  /** Records that the planned rows now live in `segments` and drops their bodies, atomically. */
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
      this.sql.exec(`UPDATE log SET body = NULL, parts = 0 WHERE seq > ? AND seq <= ?`, flushedSeq, plannedSeq);
      this.sql.exec(`DELETE FROM log_parts WHERE seq > ? AND seq <= ?`, flushedSeq, plannedSeq);
      this.sql.exec(`UPDATE flush_state SET flushed_seq = ?, planned_seq = NULL`, plannedSeq);
    });
  }
}

/**
 * Logs created before the trace stream existed have a CHECK that refuses it; SQLite cannot alter a
 * CHECK, so such a table is rebuilt once with the same rows (one transaction: the constructor runs
 * before any request, and a failure leaves the old table).
 */
function migrateStreamCheck(sql: SqlStorage): void {
  const table = sql.exec<{ sql: string }>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'log'`).toArray()[0];
  if (!table || table.sql.includes("'trace'")) return;
  sql.exec(`ALTER TABLE log RENAME TO log_before_trace`);
  sql.exec(`CREATE TABLE ${LOG_TABLE}`);
  const columns = sql
    .exec<{ name: string }>(`PRAGMA table_info(log_before_trace)`)
    .toArray()
    .map((c) => c.name);
  const parts = columns.includes("parts") ? "parts" : "0";
  const bytes = columns.includes("bytes") ? "bytes" : "0";
  sql.exec(`INSERT INTO log (seq, stream, body, parts, bytes) SELECT seq, stream, body, ${parts}, ${bytes} FROM log_before_trace`);
  sql.exec(`DROP TABLE log_before_trace`);
}

/** The byte size of a row's record; rows written before `bytes` existed are measured. */
const ROW_BYTES = "CASE WHEN bytes > 0 THEN bytes ELSE LENGTH(CAST(body AS BLOB)) END";

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
