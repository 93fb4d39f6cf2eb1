import { encodeCursor, MAX_CASE_BYTES, MAX_CASE_PAGE_BYTES } from "../domain";
import type { BriefContext } from "./brief";
import { CaseBound, type CaseRoom } from "./case-bound";
import { CaseIndex } from "./case-index";
import { boundCase, type SizedCase, utf8Bytes } from "./case-size";
import { FailedTurnCase } from "./failed-turn-case";

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
    // Cases stored before a case was bounded (hunt 53: memory reads grew one to 1.6 MB): bounded once, in place.
    for (const { case_id } of sql.exec<{ case_id: string }>(`SELECT case_id FROM cases WHERE bytes > ?`, MAX_CASE_BYTES).toArray()) {
      const sized = boundCase(this.get(case_id)!);
      if (sized) this.write(sized.case, this.stored(sized));
    }
  }

  get(caseId: string): FailedTurnCase | null {
    const row = this.sql.exec<{ body: string }>(`SELECT body FROM cases WHERE case_id = ?`, caseId).toArray()[0];
    return row ? FailedTurnCase.parse(JSON.parse(row.body)) : null;
  }

  has(caseId: string): boolean {
    return this.sql.exec(`SELECT 1 FROM cases WHERE case_id = ?`, caseId).toArray().length > 0;
  }

  /**
   * Newest first, by position; `after`: the position the previous page ended at. A page ends early
   * past MAX_CASE_PAGE_BYTES (it holds one case at least): an RPC answer may take 32 MiB at most.
   */
  page(limit: number, after: number | null): { cases: FailedTurnCase[]; next: number | null } {
    const { positions, next } = this.pagePlan(limit, after);
    return { cases: positions.map((position) => this.atPosition(position)).filter((found) => found !== null), next };
  }

  /**
   * The same page as the API's JSON, `{"cases":[...],"nextCursor":...}`, in parts, one case at a
   * time: a page of large cases built whole, several at once, filled an isolate (hunt 86). A case
   * removed after the page was planned is left out, as `page` leaves it.
   */
  async *pageJson(limit: number, after: number | null): AsyncGenerator<string> {
    const { positions, next } = this.pagePlan(limit, after);
    let head = '{"cases":[';
    let count = 0;
    for (const position of positions) {
      const found = this.atPosition(position);
      if (found === null) continue;
      yield `${head}${count++ > 0 ? "," : ""}${JSON.stringify(found)}`;
      head = "";
    }
    yield `${head}],"nextCursor":${JSON.stringify(next === null ? null : encodeCursor({ position: next }))}}`;
  }

  /** The positions of a page's cases (see `page`) and the position the next page starts after. */
  private pagePlan(limit: number, after: number | null): { positions: number[]; next: number | null } {
    const rows = this.sql
      .exec<{ position: number; bytes: number }>(
        `SELECT rowid AS position, bytes FROM cases ${after === null ? "" : "WHERE rowid < ?"} ORDER BY rowid DESC LIMIT ?`,
        ...(after === null ? [] : [after]),
        limit + 1,
      )
      .toArray();
    let size = 0;
    let taken = 0;
    while (taken < Math.min(limit, rows.length) && (taken === 0 || size + rows[taken]!.bytes <= MAX_CASE_PAGE_BYTES))
      size += rows[taken++]!.bytes;
    const page = rows.slice(0, taken);
    return { positions: page.map((row) => row.position), next: rows.length > taken ? (page.at(-1)?.position ?? null) : null };
  }

  private atPosition(position: number): FailedTurnCase | null {
    const row = this.sql.exec<{ body: string }>(`SELECT body FROM cases WHERE rowid = ?`, position).toArray()[0];
    return row ? FailedTurnCase.parse(JSON.parse(row.body)) : null;
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
   * found flaky stays flaky. A case is stored bounded (`boundCase`). A new case needs room
   * (`CaseBound`): it evicts what `room` allows, or is not kept (`stored` null). A case that grows
   * needs room as well; without it, it keeps what it held and only counts the sighting.
   */
  upsert(found: FailedTurnCase, room: () => CaseRoom): { stored: FailedTurnCase | null; evicted: number } {
    const existing = this.sized(found.caseId);
    if (!existing) return this.insert(found, room);
    const newRun =
      this.sql
        .exec(`INSERT OR IGNORE INTO case_runs (case_id, run_id) VALUES (?, ?) RETURNING run_id`, found.caseId, found.origin.runId)
        .toArray().length > 0;
    const old = existing.case;
    const evidence = {
      occurrences: old.occurrences + (newRun ? 1 : 0),
      firstSeenAt: old.firstSeenAt,
      // The newest last (one read again moves to the end); `boundCase` keeps the newest.
      memoryReadNodeIds: [...old.memoryReadNodeIds.filter((id) => !found.memoryReadNodeIds.includes(id)), ...found.memoryReadNodeIds],
      evidenceRefs: [...new Set([...old.evidenceRefs, ...found.evidenceRefs])],
    };
    const keepsOrigin = !newRun || (found.imported && !old.imported);
    let merged: FailedTurnCase = keepsOrigin
      ? { ...old, ...evidence }
      : { ...found, ...evidence, imported: old.imported && found.imported };
    if (old.applicability.failureClass === "flaky")
      merged = { ...merged, applicability: { ...merged.applicability, failureClass: "flaky" } };
    const counted: FailedTurnCase = { ...old, occurrences: merged.occurrences, lastSeenAt: merged.lastSeenAt };
    return this.update(existing, [merged, counted], room);
  }

  /** Stores a changed case in its place, if its growth fits the bound (`room`); returns what is stored. */
  replace(c: FailedTurnCase, room: () => CaseRoom): FailedTurnCase | null {
    const existing = this.sized(c.caseId);
    return existing ? this.update(existing, [c], room).stored : null;
  }

  /** A new case: bounded, within the project's bound (evicting what `room` allows), or not kept. */
  private insert(found: FailedTurnCase, room: () => CaseRoom): { stored: FailedTurnCase | null; evicted: number } {
    const sized = boundCase(found);
    if (!sized) return { stored: null, evicted: 0 };
    const { body, bytes } = this.stored(sized);
    const victims = room().take(bytes);
    if (victims === null) return { stored: null, evicted: 0 };
    for (const victim of victims) this.remove(victim);
    this.sql.exec(`INSERT OR IGNORE INTO case_runs (case_id, run_id) VALUES (?, ?)`, found.caseId, found.origin.runId);
    this.sql.exec(
      `INSERT INTO cases (rowid, case_id, body, last_seen_at, imported, bytes) VALUES (?, ?, ?, ?, ?, ?)`,
      this.nextPosition(),
      sized.case.caseId,
      body,
      sized.case.lastSeenAt,
      Number(sized.case.imported),
      bytes,
    );
    this.index.put(sized.case);
    return { stored: sized.case, evicted: victims.length };
  }

  /**
   * Stores the first of `candidates` (forms of a stored case, largest first) whose growth the bound
   * has room for, evicting others as a new case would (never this one); else the case stays as it is.
   */
  private update(existing: SizedCase, candidates: FailedTurnCase[], room: () => CaseRoom): { stored: FailedTurnCase; evicted: number } {
    for (const candidate of candidates) {
      const sized = boundCase(candidate);
      if (!sized) continue;
      const stored = this.stored(sized);
      const victims = room().grow(existing.case.caseId, existing.bytes, stored.bytes);
      if (victims === null) continue;
      for (const victim of victims) this.remove(victim);
      this.write(sized.case, stored);
      return { stored: sized.case, evicted: victims.length };
    }
    return { stored: existing.case, evicted: 0 };
  }

  /** A stored case with the bytes its row is counted at. */
  private sized(caseId: string): SizedCase | null {
    const row = this.sql.exec<{ body: string; bytes: number }>(`SELECT body, bytes FROM cases WHERE case_id = ?`, caseId).toArray()[0];
    return row ? { case: FailedTurnCase.parse(JSON.parse(row.body)), body: row.body, bytes: row.bytes } : null;
  }

  /** The JSON a case is stored as, validated (in the strict schema's order of fields), and its size. */
  private stored(sized: SizedCase): { body: string; bytes: number } {
    const body = JSON.stringify(FailedTurnCase.parse(sized.case));
    return { body, bytes: utf8Bytes(body) };
  }

  /** Writes a stored case's new form in its place (its position stays). */
  private write(c: FailedTurnCase, { body, bytes }: { body: string; bytes: number }): void {
    this.sql.exec(
      `UPDATE cases SET body = ?, last_seen_at = ?, imported = ?, bytes = ? WHERE case_id = ?`,
      body,
      c.lastSeenAt,
      Number(c.imported),
      bytes,
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
