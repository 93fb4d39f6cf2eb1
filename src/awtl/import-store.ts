import {
  IDEMPOTENCY_TTL_MS,
  MAX_PROJECT_IMPORTED_RECORD_BYTES,
  MAX_PROJECT_QUARANTINE_LINES,
  MAX_QUARANTINED_LINES_PER_IMPORT,
  type TraceRecord,
} from "../domain";
import { ImportSummary, type QuarantinePage } from "./project-api";
import type { QuarantinedLine } from "./trace-import";
import { importedBody } from "./trace-import-bounds";

/** What one import leaves behind: its answer, its good lines' records, its refused lines. */
export interface StoredImport {
  summary: ImportSummary;
  at: string;
  records: readonly { line: number; record: TraceRecord }[];
  quarantined: readonly QuarantinedLine[];
}

/**
 * A project's trace imports in its object's SQLite: each import's answer (`imports`: a repeat under
 * the same Idempotency-Key gets it again), its records (`imported_records`) and its refused lines
 * (`quarantine`). Both are bounded, newest imports first: an import's first
 * MAX_QUARANTINED_LINES_PER_IMPORT refused lines, MAX_PROJECT_QUARANTINE_LINES in all, and
 * MAX_PROJECT_IMPORTED_RECORD_BYTES of records (`imports.record_bytes` counts an import's). Older
 * imports lose theirs whole; the newest keeps its own. An answer stays while the tenant remembers its
 * key (IDEMPOTENCY_TTL_MS) or while its records do.
 */
export class ImportStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(
      `CREATE TABLE IF NOT EXISTS imports (import_id TEXT PRIMARY KEY, at TEXT NOT NULL, imported INTEGER NOT NULL, quarantined INTEGER NOT NULL)`,
    );
    const columns = sql
      .exec<{ name: string }>(`PRAGMA table_info(imports)`)
      .toArray()
      .map((c) => c.name);
    if (!columns.includes("summary")) sql.exec(`ALTER TABLE imports ADD COLUMN summary TEXT`);
    sql.exec(
      `CREATE TABLE IF NOT EXISTS imported_records (import_id TEXT NOT NULL, line INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (import_id, line))`,
    );
    if (!columns.includes("record_bytes")) {
      sql.exec(`ALTER TABLE imports ADD COLUMN record_bytes INTEGER NOT NULL DEFAULT 0`);
      // Imports stored before the bound: what their records take, once.
      sql.exec(
        `UPDATE imports SET record_bytes = (SELECT IFNULL(SUM(length(CAST(r.body AS BLOB))), 0) FROM imported_records r WHERE r.import_id = imports.import_id)`,
      );
    }
    sql.exec(
      `CREATE TABLE IF NOT EXISTS quarantine (import_id TEXT NOT NULL, line INTEGER NOT NULL, sha256 TEXT NOT NULL, reason TEXT NOT NULL, at TEXT NOT NULL)`,
    );
  }

  /** The answer of an import already stored (null for one stored before summaries were kept, or forgotten: counted as new). */
  summary(importId: string): ImportSummary | null {
    const row = this.sql.exec<{ summary: string | null }>(`SELECT summary FROM imports WHERE import_id = ?`, importId).toArray()[0];
    return row?.summary ? ImportSummary.parse(JSON.parse(row.summary)) : null;
  }

  /**
   * Stores an import (inside the caller's transaction): its records in line order while they fit
   * the budget, its first refused lines, its answer; then older imports give way.
   */
  add(stored: StoredImport): void {
    const { summary, at } = stored;
    let recordBytes = 0;
    for (const { line, record } of stored.records) {
      // Each at most MAX_IMPORTED_TRACE_RECORD_BYTES (`parseTraceImport` quarantines larger ones): one row.
      const body = importedBody(record);
      const bytes = utf8Bytes(body);
      if (recordBytes + bytes > MAX_PROJECT_IMPORTED_RECORD_BYTES) break;
      recordBytes += bytes;
      this.sql.exec(`INSERT INTO imported_records (import_id, line, body) VALUES (?, ?, ?)`, summary.importId, line, body);
    }
    for (const q of stored.quarantined.slice(0, MAX_QUARANTINED_LINES_PER_IMPORT))
      this.sql.exec(
        `INSERT INTO quarantine (import_id, line, sha256, reason, at) VALUES (?, ?, ?, ?, ?)`,
        summary.importId,
        q.line,
        q.sha256,
        q.reason,
        at,
      );
    this.sql.exec(
      `INSERT INTO imports (import_id, at, imported, quarantined, summary, record_bytes) VALUES (?, ?, ?, ?, ?, ?)`,
      summary.importId,
      at,
      summary.imported,
      summary.quarantined,
      JSON.stringify(summary),
      recordBytes,
    );
    this.giveWay(at);
  }

  /**
   * Refused lines, oldest first (by import, then line); `after`: the position the previous page ended
   * at. Lines are only ever removed oldest first and the newest import's always stay, so positions
   * (rowids) are never reused: a page neither skips nor repeats a line.
   */
  quarantinePage(limit: number, after: number | null): QuarantinePage {
    const rows = this.sql
      .exec<{ position: number; import_id: string; line: number; sha256: string; reason: string; at: string }>(
        `SELECT rowid AS position, import_id, line, sha256, reason, at FROM quarantine ${after === null ? "" : "WHERE rowid > ?"} ORDER BY rowid LIMIT ?`,
        ...(after === null ? [] : [after]),
        limit + 1,
      )
      .toArray();
    const page = rows.slice(0, limit);
    return {
      quarantine: page.map((r) => ({ importId: r.import_id, line: r.line, sha256: r.sha256, reason: r.reason, quarantinedAt: r.at })),
      next: rows.length > limit ? page.at(-1)!.position : null,
    };
  }

  /** The bounds, after an import at `at`: older imports' lines and records go, whole, newest kept first. */
  private giveWay(at: string): void {
    this.sql.exec(
      `DELETE FROM quarantine WHERE import_id IN (
         SELECT import_id FROM (
           SELECT import_id, ROW_NUMBER() OVER newest AS k, SUM(COUNT(*)) OVER newest AS lines
           FROM quarantine GROUP BY import_id WINDOW newest AS (ORDER BY MAX(rowid) DESC)
         ) WHERE k > 1 AND lines > ?)`,
      MAX_PROJECT_QUARANTINE_LINES,
    );
    const dropped = this.sql
      .exec<{ import_id: string }>(
        `SELECT import_id FROM (
           SELECT import_id, ROW_NUMBER() OVER newest AS k, SUM(record_bytes) OVER newest AS bytes
           FROM imports WHERE record_bytes > 0 WINDOW newest AS (ORDER BY rowid DESC)
         ) WHERE k > 1 AND bytes > ?`,
        MAX_PROJECT_IMPORTED_RECORD_BYTES,
      )
      .toArray()
      .map((r) => r.import_id);
    if (dropped.length > 0) {
      const ids = JSON.stringify(dropped);
      this.sql.exec(`DELETE FROM imported_records WHERE import_id IN (SELECT value FROM json_each(?))`, ids);
      this.sql.exec(`UPDATE imports SET record_bytes = 0 WHERE import_id IN (SELECT value FROM json_each(?))`, ids);
    }
    // An answer nobody can ask for again: its key is forgotten and its records are gone.
    const forgotten = new Date(Date.parse(at) - IDEMPOTENCY_TTL_MS).toISOString();
    this.sql.exec(`DELETE FROM imports WHERE at < ? AND record_bytes = 0`, forgotten);
  }
}

function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}
