import type { BriefContext } from "./brief";
import { CaseBound, type CaseRoom } from "./case-bound";
import { CaseIndex } from "./case-index";
import { FailedTurnCase } from "./failed-turn-case";

/** Evidence refs kept per case (a case seen many times keeps its first and latest ones). */
const MAX_EVIDENCE_REFS = 20;

/**
 * A project's cases in its object's SQLite: a row per case (its JSON, when it was last seen, whether
 * it is imported, its size), the runs it was seen in, its brief keys (`CaseIndex`) and the bound
 * (`CaseBound`). A case keeps its rowid, its listing position, while it is updated; `case_marks`
 * keeps new rowids above every cursor handed out. What else the project keeps about a case
 * (scorecards, approvals, memory) goes by `forget` when the case goes.
 */
export class CaseStore {
  readonly bound: CaseBound;
  private readonly index: CaseIndex;

  constructor(
    private readonly sql: SqlStorage,
    private readonly forget: (caseId: string) => void,
  ) {
    sql.exec(`CREATE TABLE IF NOT EXISTS cases (case_id TEXT PRIMARY KEY, body TEXT NOT NULL, last_seen_at TEXT NOT NULL)`);
    // The runs each case was seen in: an occurrence is a run (a run that repeats a failure 50 times,
    // or the same foreign run imported again, counts once).
    const fresh = sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'case_runs'`).toArray().length === 0;
    sql.exec(`CREATE TABLE IF NOT EXISTS case_runs (case_id TEXT NOT NULL, run_id TEXT NOT NULL, PRIMARY KEY (case_id, run_id))`);
    sql.exec(`CREATE INDEX IF NOT EXISTS case_runs_by_run ON case_runs (run_id)`);
    // Cases stored before the table: their origin run (else seeing it again would count it anew and move the origin).
    if (fresh) {
      sql.exec(
        `INSERT OR IGNORE INTO case_runs (case_id, run_id)
         SELECT case_id, json_extract(body, '$.origin.runId') FROM cases WHERE json_extract(body, '$.origin.runId') IS NOT NULL`,
      );
    }
    // What the bound reads without parsing bodies.
    if (
      !sql
        .exec<{ name: string }>(`PRAGMA table_info(cases)`)
        .toArray()
        .some((c) => c.name === "imported")
    ) {
      sql.exec(`ALTER TABLE cases ADD COLUMN imported INTEGER NOT NULL DEFAULT 0`);
      sql.exec(`ALTER TABLE cases ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0`);
      sql.exec(`UPDATE cases SET imported = json_extract(body, '$.imported'), bytes = length(CAST(body AS BLOB))`);
    }
    sql.exec(`CREATE TABLE IF NOT EXISTS case_marks (id INTEGER PRIMARY KEY CHECK (id = 1), last INTEGER NOT NULL)`);
    this.index = new CaseIndex(sql);
    this.bound = new CaseBound(sql);
  }

  get(caseId: string): FailedTurnCase | null {
    const row = this.sql.exec<{ body: string }>(`SELECT body FROM cases WHERE case_id = ?`, caseId).toArray()[0];
    return row ? FailedTurnCase.parse(JSON.parse(row.body)) : null;
  }

  has(caseId: string): boolean {
    return this.sql.exec(`SELECT 1 FROM cases WHERE case_id = ?`, caseId).toArray().length > 0;
  }

  /** Newest first, by position; `after`: the position the previous page ended at. */
  page(limit: number, after: number | null): { cases: FailedTurnCase[]; next: number | null } {
    const rows = this.sql
      .exec<{ position: number; body: string }>(
        `SELECT rowid AS position, body FROM cases ${after === null ? "" : "WHERE rowid < ?"} ORDER BY rowid DESC LIMIT ?`,
        ...(after === null ? [] : [after]),
        limit + 1,
      )
      .toArray();
    const page = rows.slice(0, limit);
    return {
      cases: page.map((r) => FailedTurnCase.parse(JSON.parse(r.body))),
      next: rows.length > limit ? page.at(-1)!.position : null,
    };
  }

  /** The cases a run was an occurrence of (the latest or an earlier one). */
  seenIn(runId: string): string[] {
    return this.sql
      .exec<{ case_id: string }>(`SELECT case_id FROM case_runs WHERE run_id = ?`, runId)
      .toArray()
      .map((r) => r.case_id);
  }

  /** The cases that may apply to a run (`CaseIndex`), and `also`: only these are parsed, never every case. */
  briefCandidates(ctx: BriefContext, also: readonly string[]): FailedTurnCase[] {
    const ids = JSON.stringify([...new Set([...this.index.candidates(ctx), ...also])]);
    return this.sql
      .exec<{ body: string }>(`SELECT body FROM cases WHERE case_id IN (SELECT value FROM json_each(?))`, ids)
      .toArray()
      .map((r) => FailedTurnCase.parse(JSON.parse(r.body)));
  }

  /** Each case's stored JSON, most recently seen first (the R2 mirror's order). */
  bodies(): string[] {
    return this.sql
      .exec<{ body: string }>(`SELECT body FROM cases ORDER BY last_seen_at DESC, case_id`)
      .toArray()
      .map((r) => r.body);
  }

  /**
   * A sighting of a case. A recurrence in a new run counts, keeps the first sighting, moves the origin
   * to the latest run and loses the imported mark once seen for real. A sighting of a run already
   * counted (the harness's own trace imported back), or an imported one of a case seen for real, only
   * adds its evidence: the live case keeps its origin, so its replays still settle as before. A case
   * found flaky stays flaky. A new case needs room (`CaseBound`): it evicts what `room` allows, or is
   * not kept (`stored` null).
   */
  upsert(found: FailedTurnCase, room: () => CaseRoom): { stored: FailedTurnCase | null; evicted: number } {
    const existing = this.get(found.caseId);
    let evicted = 0;
    if (!existing) {
      const victims = room().take(utf8Bytes(JSON.stringify(found)));
      if (victims === null) return { stored: null, evicted: 0 };
      for (const victim of victims) this.remove(victim);
      evicted = victims.length;
    }
    const newRun =
      this.sql
        .exec(`INSERT OR IGNORE INTO case_runs (case_id, run_id) VALUES (?, ?) RETURNING run_id`, found.caseId, found.origin.runId)
        .toArray().length > 0;
    let merged: FailedTurnCase = found;
    if (existing) {
      const evidence = {
        occurrences: existing.occurrences + (newRun ? 1 : 0),
        firstSeenAt: existing.firstSeenAt,
        memoryReadNodeIds: [...new Set([...existing.memoryReadNodeIds, ...found.memoryReadNodeIds])],
        evidenceRefs: mergeEvidence(existing.evidenceRefs, found.evidenceRefs),
      };
      const keepsOrigin = !newRun || (found.imported && !existing.imported);
      merged = keepsOrigin ? { ...existing, ...evidence } : { ...found, ...evidence, imported: existing.imported && found.imported };
      if (existing.applicability.failureClass === "flaky")
        merged = { ...merged, applicability: { ...merged.applicability, failureClass: "flaky" } };
    }
    if (existing) this.replace(merged);
    else {
      const body = JSON.stringify(FailedTurnCase.parse(merged));
      this.sql.exec(
        `INSERT INTO cases (rowid, case_id, body, last_seen_at, imported, bytes) VALUES (?, ?, ?, ?, ?, ?)`,
        this.nextPosition(),
        merged.caseId,
        body,
        merged.lastSeenAt,
        Number(merged.imported),
        utf8Bytes(body),
      );
      this.index.put(merged);
    }
    return { stored: merged, evicted };
  }

  /** Stores a changed case in its place. */
  replace(c: FailedTurnCase): void {
    const body = JSON.stringify(FailedTurnCase.parse(c));
    this.sql.exec(
      `UPDATE cases SET body = ?, last_seen_at = ?, imported = ?, bytes = ? WHERE case_id = ?`,
      body,
      c.lastSeenAt,
      Number(c.imported),
      utf8Bytes(body),
      c.caseId,
    );
    this.index.put(c);
  }

  /** Removes a case and, through `forget`, everything the project keeps about it; false when there was none. */
  remove(caseId: string): boolean {
    if (this.sql.exec(`DELETE FROM cases WHERE case_id = ? RETURNING case_id`, caseId).toArray().length === 0) return false;
    this.sql.exec(`DELETE FROM case_runs WHERE case_id = ?`, caseId);
    this.index.remove(caseId);
    this.bound.forget(caseId);
    this.forget(caseId);
    return true;
  }

  /** The rowid of the next new case: above every rowid given before, so it sorts before every cursor handed out. */
  private nextPosition(): number {
    const next = this.sql
      .exec<{ n: number }>(
        `SELECT MAX(IFNULL((SELECT last FROM case_marks WHERE id = 1), 0), IFNULL((SELECT MAX(rowid) FROM cases), 0)) + 1 AS n`,
      )
      .one().n;
    this.sql.exec(`INSERT OR REPLACE INTO case_marks (id, last) VALUES (1, ?)`, next);
    return next;
  }
}

function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

function mergeEvidence(old: string[], added: string[]): string[] {
  const all = [...new Set([...old, ...added])];
  return all.length <= MAX_EVIDENCE_REFS ? all : [...all.slice(0, MAX_EVIDENCE_REFS / 2), ...all.slice(-MAX_EVIDENCE_REFS / 2)];
}
