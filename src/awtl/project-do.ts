import { DurableObject } from "cloudflare:workers";
import {
  type AttributionRecord,
  type FailureClass,
  failure,
  formatIssues,
  MAX_APPROVERS_PER_CASE,
  MAX_PROJECT_ATTRIBUTIONS_REMEMBERED,
  MAX_PROJECT_REPLAY_OUTCOMES,
  MAX_QUARANTINED_LINES_PER_IMPORT,
  nowIso,
  ok,
  type Result,
  randomIds,
  type TraceRecord,
} from "../domain";
import type { AppEnv } from "../env";
import { logLine, useLogLevel } from "../log";
import { deleteUnder } from "../r2";
import { Downloads } from "../workspace/downloads";
import { textStream, withEndMark } from "../workspace/streams";
import { attribute } from "./attribution";
import { type Brief, type BriefContext, buildBrief } from "./brief";
import type { CaseRoom, EvictionScope } from "./case-bound";
import { buildCase } from "./case-builder";
import { CaseStore } from "./case-store";
import { FailedTurnCase } from "./failed-turn-case";
import { becomesCase } from "./failure-classes";
import { ImportStore } from "./import-store";
import { caseHint } from "./prevention-hints";
import type { Approval, CasePage, ImportSummary, MemoryRule, ProjectRef, ProjectRpc, QuarantinePage, VerdictNotice } from "./project-api";
import { type MirrorFile, ProjectMirror, projectPrefix } from "./project-mirror";
import { promotionRefusal } from "./promotion";
import { RunTraceView } from "./run-view";
import { Scorecard, verdictOf } from "./scorecard";
import { parseTraceImport } from "./trace-import";

export { projectPrefix };

/** A case of the project's own runs may push out any case nothing relies on (`CaseBound`). */
const LIVE: EvictionScope = { importedOnly: false, keep: new Set() };

/**
 * One per project: its failed-turn cases, their replay scorecards, human approvals, promoted memory
 * and imported traces. One object serialises every change to a project's cases (a recurrence is one
 * case with a count). Cases are kept in `CaseStore`: bounded, listed a page at a time by the position
 * of their first sighting, indexed for briefs; imports in `ImportStore`, bounded too. Cases,
 * scorecards and memory are mirrored to R2 as JSONL (`ProjectMirror`).
 */
export class ProjectDO extends DurableObject<AppEnv> implements ProjectRpc {
  private readonly sql: SqlStorage;
  private cases!: CaseStore;
  private imports!: ImportStore;
  private mirror!: ProjectMirror;
  /** Set when a change removed or added a memory rule: the mirror's memory.jsonl is then written at once. */
  private memoryChanged = false;
  /** The pages of cases being served (`casesPage`). */
  private readonly downloads = new Downloads();

  constructor(ctx: DurableObjectState, env: AppEnv) {
    super(ctx, env);
    useLogLevel(env.LOG_LEVEL);
    this.sql = ctx.storage.sql;
    this.open();
  }

  /** Creates the tables where they are missing (an older object's, or one `destroy` emptied) and the stores over them. */
  private open(): void {
    // Attributions handed over, so a session's outbox delivering one again counts it once (the latest MAX_PROJECT_ATTRIBUTIONS_REMEMBERED).
    this.sql.exec(`CREATE TABLE IF NOT EXISTS attributions_seen (attribution_id TEXT PRIMARY KEY)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS scorecards (case_id TEXT PRIMARY KEY, body TEXT NOT NULL)`);
    // The latest scorecard a judge settled (passed or stale): a later replay that is pending, or that
    // could not be played, does not take back what a judge already found.
    const scorecardColumns = this.sql.exec<{ name: string }>(`PRAGMA table_info(scorecards)`).toArray();
    if (!scorecardColumns.some((c) => c.name === "judged")) {
      this.sql.exec(`ALTER TABLE scorecards ADD COLUMN judged TEXT`);
      this.sql.exec(`UPDATE scorecards SET judged = body WHERE json_extract(body, '$.status') IN ('passed', 'stale')`);
    }
    // What judges ruled on replays of a run (`replayPassed`: a pass makes its failure flaky); the latest MAX_PROJECT_REPLAY_OUTCOMES.
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS replay_outcomes (run_id TEXT NOT NULL, judge_name TEXT NOT NULL, reproduced INTEGER NOT NULL, at TEXT NOT NULL)`,
    );
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS approvals (case_id TEXT NOT NULL, approved_by TEXT NOT NULL, note TEXT NOT NULL, approved_at TEXT NOT NULL)`,
    );
    // One approval per approver of a case, the latest (before this index every call added a row).
    if (this.sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'approvals_by_approver'`).toArray().length === 0) {
      this.sql.exec(`DELETE FROM approvals WHERE rowid NOT IN (SELECT MAX(rowid) FROM approvals GROUP BY case_id, approved_by)`);
      this.sql.exec(`CREATE UNIQUE INDEX approvals_by_approver ON approvals (case_id, approved_by)`);
    }
    this.sql.exec(`CREATE TABLE IF NOT EXISTS memory (case_id TEXT PRIMARY KEY, body TEXT NOT NULL, promoted_at TEXT NOT NULL)`);
    // Set by `destroy`: the first epoch whose imports are taken.
    this.sql.exec(`CREATE TABLE IF NOT EXISTS project_epoch (id INTEGER PRIMARY KEY CHECK (id = 1), epoch INTEGER NOT NULL)`);
    this.imports = new ImportStore(this.sql);
    this.cases = new CaseStore(this.sql, (caseId) => this.forgetCase(caseId));
    this.mirror = new ProjectMirror(this.ctx.storage, this.env.STORE, (file) => this.mirrorRows(file));
    this.memoryChanged = false;
  }

  /**
   * Removes all the project holds and starts it empty (a project id can be named again), one epoch
   * on: imports begun before are refused. No other call runs meanwhile (R2 calls would let them in
   * otherwise): SQLite and the alarm first, then, once the mirror's writes under way have landed,
   * the R2 mirror. Each step can be repeated: a removal that failed half-way is finished by calling
   * it again.
   */
  async destroy(ref: ProjectRef): Promise<void> {
    await this.ctx.blockConcurrencyWhile(async () => {
      const epoch = this.epoch() + 1;
      const mirror = this.mirror;
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      this.open();
      this.sql.exec(`INSERT INTO project_epoch (id, epoch) VALUES (1, ?)`, epoch);
      await mirror.idle();
      await deleteUnder(this.env.STORE, `${projectPrefix(ref)}/`);
    });
  }

  /** How many times the project was emptied: an import reads it before it begins (`ProjectRef.epoch`). */
  epoch(): number {
    return this.sql.exec<{ epoch: number }>(`SELECT epoch FROM project_epoch WHERE id = 1`).toArray()[0]?.epoch ?? 0;
  }

  /** Writes the mirror's cases and scorecards when a change is due (`ProjectMirror`). */
  override async alarm(): Promise<void> {
    await this.mirror.flush();
  }

  /** A failure attributed in one of the project's sessions; `found` is the case it became, if any. Idempotent per attribution. */
  async recordAttribution(ref: ProjectRef, attribution: AttributionRecord, found: FailedTurnCase | null): Promise<void> {
    const fresh = this.sql
      .exec(`INSERT OR IGNORE INTO attributions_seen (attribution_id) VALUES (?) RETURNING attribution_id`, attribution.attributionId)
      .toArray();
    if (fresh.length === 0) return;
    keepNewest(this.sql, "attributions_seen", MAX_PROJECT_ATTRIBUTIONS_REMEMBERED);
    if (!found) return;
    const parsed = FailedTurnCase.parse(found);
    if (!this.upsertCase(parsed, () => this.cases.bound.room(LIVE)).kept) {
      logLine("warn", "case not kept: the project is full of cases it relies on (promoted, approved, verified or being replayed)", {
        caseId: parsed.caseId,
      });
    }
    await this.settle(ref);
  }

  /** Newest first, by the position of each case's first sighting: a case added meanwhile never shows on a later page. */
  listCases(limit: number, after: number | null): CasePage {
    return this.cases.page(limit, after);
  }

  /**
   * A page of cases as the API's JSON (`CaseStore.pageJson`), made as its client reads, marked at its
   * end (`withEndMark`: read it through `withoutEndMark`). One of the few pages the project serves at
   * once (`Downloads`): past them, `too_many_downloads`.
   */
  async casesPage(limit: number, after: number | null): Promise<Result<ReadableStream<Uint8Array>>> {
    if (!this.downloads.take()) return this.downloads.refusal("the project", "pages of its cases");
    try {
      return ok(withEndMark(this.downloads.serve(await textStream(this.cases.pageJson(limit, after)))));
    } catch (error) {
      this.downloads.giveBack();
      throw error;
    }
  }

  getCase(caseId: string): FailedTurnCase | null {
    return this.cases.get(caseId);
  }

  /**
   * Removes a case with its runs, scorecards, approvals and replay leases. Its memory rule goes too:
   * memory follows its case (as when a case is found flaky), and a deleted case must stop reaching briefs.
   */
  async deleteCase(ref: ProjectRef, caseId: string): Promise<boolean> {
    if (!this.cases.remove(caseId)) return false;
    await this.settle(ref);
    return true;
  }

  replayStarted(caseId: string): string {
    return this.cases.bound.lease(caseId);
  }

  replayEnded(leaseId: string): void {
    this.cases.bound.release(leaseId);
  }

  /** Parses only the cases the run's context may apply to (`CaseIndex`), never every case. */
  brief(context: BriefContext): Brief | null {
    // A retry of any occurrence of a case, not only its latest (the case's origin).
    const retriedCaseIds = context.retryOf === null ? [] : this.cases.seenIn(context.retryOf);
    const cases = this.cases.briefCandidates(context, retriedCaseIds);
    if (cases.length === 0) return null;
    const ids = JSON.stringify(cases.map((c) => c.caseId));
    const promoted = new Set(
      this.sql
        .exec<{ case_id: string }>(`SELECT case_id FROM memory`)
        .toArray()
        .map((r) => r.case_id),
    );
    const approvedCaseIds = this.sql
      .exec<{ case_id: string }>(`SELECT DISTINCT case_id FROM approvals WHERE case_id IN (SELECT value FROM json_each(?))`, ids)
      .toArray()
      .map((r) => r.case_id);
    return buildBrief(cases, this.briefScorecards(ids), promoted, { ...context, retriedCaseIds, approvedCaseIds });
  }

  /** Whether the same judge passed on a replay of this run (its failure is then `flaky`). */
  replayPassed(runId: string, judgeName: string): boolean {
    return (
      this.sql.exec(`SELECT 1 FROM replay_outcomes WHERE run_id = ? AND judge_name = ? AND reproduced = 0`, runId, judgeName).toArray()
        .length > 0
    );
  }

  async recordScorecard(
    ref: ProjectRef,
    card: Scorecard,
    outcome: { originRunId: string; judgeName: string; reproduced: boolean } | null,
  ): Promise<void> {
    // The case was deleted (or evicted) while it was replayed: nothing to keep a scorecard for.
    const found = this.getCase(card.caseId);
    if (!found) return;
    // A failure once found flaky stays flaky: a later replay that reproduces it does not bring it back.
    const flaky = found.applicability.failureClass === "flaky" || (outcome !== null && !outcome.reproduced);
    const body = JSON.stringify(Scorecard.parse(flaky ? { ...card, decision: "exclude" } : card));
    this.sql.exec(
      `INSERT INTO scorecards (case_id, body, judged) VALUES (?, ?, ?)
       ON CONFLICT (case_id) DO UPDATE SET body = excluded.body, judged = COALESCE(excluded.judged, scorecards.judged)`,
      card.caseId,
      body,
      isJudged(card) ? body : null,
    );
    if (outcome) this.recordOutcome(outcome.originRunId, outcome.judgeName, outcome.reproduced);
    // The same judge passed on an identical replay: the failure was flaky, whatever it looked like.
    if (outcome && !outcome.reproduced) this.reclassify(card.caseId, "flaky");
    await this.settle(ref);
  }

  scorecard(caseId: string): Scorecard | null {
    const row = this.sql.exec<{ body: string }>(`SELECT body FROM scorecards WHERE case_id = ?`, caseId).toArray()[0];
    return row ? Scorecard.parse(JSON.parse(row.body)) : null;
  }

  /** The latest scorecard a judge settled for the case (passed or stale), whatever replays came after it. */
  judgedScorecard(caseId: string): Scorecard | null {
    const row = this.sql.exec<{ judged: string | null }>(`SELECT judged FROM scorecards WHERE case_id = ?`, caseId).toArray()[0];
    return row?.judged ? Scorecard.parse(JSON.parse(row.judged)) : null;
  }

  /**
   * The replay session of a pending scorecard was deleted: no verdict can reach it any more, so the
   * scorecard becomes `unavailable` (a judged one before it still stands). Nothing for other sessions.
   */
  async replaySessionDeleted(ref: ProjectRef, sessionId: string): Promise<void> {
    const pending = this.pendingScorecards(sessionId);
    for (const card of pending) {
      const gone: Scorecard = {
        ...card,
        ...verdictOf("unreplayable"),
        validatedBy: "replay",
        lastValidatedAt: nowIso(),
        evidenceRefs: [...card.evidenceRefs, "replay:unavailable:replay_session_deleted"],
        replay: null,
      };
      await this.recordScorecard(ref, gone, null);
    }
  }

  /**
   * A verdict on some run of the project. When the run is a pending replay and the judge is the one
   * that failed the case, the scorecard is settled: a fail reproduced the failure (passed), a pass did
   * not (stale, and the original failure counts as flaky from now on).
   */
  async verdict(ref: ProjectRef, notice: VerdictNotice): Promise<Scorecard | null> {
    if (notice.result === "warn") return null;
    const pending = this.pendingScorecards(notice.sessionId).find((c) => c.replay?.runId === notice.runId);
    if (!pending) return null;
    const found = this.getCase(pending.caseId);
    if (!found || found.origin.judgeName !== notice.judgeName) return null;
    const reproduced = notice.result === "fail";
    const settled: Scorecard = {
      ...pending,
      ...verdictOf(reproduced ? "reproduced" : "not_reproduced"),
      validatedBy: "replay",
      lastValidatedAt: nowIso(),
    };
    await this.recordScorecard(ref, settled, { originRunId: found.origin.runId, judgeName: notice.judgeName, reproduced });
    return settled;
  }

  async approve(_ref: ProjectRef, caseId: string, approvedBy: string, note: string): Promise<Result<Approval>> {
    if (!this.getCase(caseId)) return failure("case_not_found", `case '${caseId}' does not exist in this project`);
    const approval: Approval = { caseId, approvedBy, note, approvedAt: nowIso() };
    this.sql.exec(
      `INSERT INTO approvals (case_id, approved_by, note, approved_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (case_id, approved_by) DO UPDATE SET note = excluded.note, approved_at = excluded.approved_at`,
      caseId,
      approvedBy,
      note,
      approval.approvedAt,
    );
    // A case approved by many names keeps its latest approvers: one is all promotion needs.
    this.sql.exec(
      `DELETE FROM approvals WHERE case_id = ? AND rowid NOT IN (SELECT rowid FROM approvals WHERE case_id = ? ORDER BY approved_at DESC, rowid DESC LIMIT ?)`,
      caseId,
      caseId,
      MAX_APPROVERS_PER_CASE,
    );
    return ok(approval);
  }

  /** Who approved the case, the latest first. */
  approvals(caseId: string): Approval[] {
    return this.sql
      .exec<{ approved_by: string; note: string; approved_at: string }>(
        `SELECT approved_by, note, approved_at FROM approvals WHERE case_id = ? ORDER BY approved_at DESC, rowid DESC`,
        caseId,
      )
      .toArray()
      .map((r) => ({ caseId, approvedBy: r.approved_by, note: r.note, approvedAt: r.approved_at }));
  }

  async promote(ref: ProjectRef, caseId: string, write: boolean): Promise<Result<MemoryRule>> {
    const found = this.getCase(caseId);
    if (!found) return failure("case_not_found", `case '${caseId}' does not exist in this project`);
    // A replay still pending (or that could not be played) does not undo one a judge settled before.
    const card = this.judgedScorecard(caseId);
    const approved = this.sql.exec(`SELECT 1 FROM approvals WHERE case_id = ?`, caseId).toArray().length > 0;
    const refusal = promotionRefusal(found, { write, scorecard: card, approved });
    if (refusal) return failure(refusal.code, refusal.message);
    const rule: MemoryRule = {
      caseId,
      // Written from the case's facts: a case stored by an older version keeps its older wording.
      rule: caseHint(found),
      applicability: found.applicability,
      promotedAt: nowIso(),
      verifiedBy: card?.status === "passed" ? "replay" : "human",
      evidenceRefs: found.evidenceRefs,
    };
    this.sql.exec(
      `INSERT OR REPLACE INTO memory (case_id, body, promoted_at) VALUES (?, ?, ?)`,
      caseId,
      JSON.stringify(rule),
      rule.promotedAt,
    );
    this.memoryChanged = true;
    await this.settle(ref);
    return ok(rule);
  }

  memory(): MemoryRule[] {
    return this.sql
      .exec<{ body: string }>(`SELECT body FROM memory ORDER BY promoted_at, case_id`)
      .toArray()
      .map((r) => JSON.parse(r.body) as MemoryRule);
  }

  /**
   * Foreign traces (this project's field names or seed 003's snake_case ones). Corrupt lines go to
   * quarantine; good ones are kept, marked imported, and their failed verdicts attributed: cases
   * that come of them are marked imported and can never be promoted. At the bound an import evicts
   * only earlier imported cases; once nothing more can go, its further new cases are not kept, and
   * the summary counts them. What the import keeps of its records and refused lines is bounded
   * (`ImportStore`); the summary counts them all.
   */
  async importTraces(ref: ProjectRef, body: Uint8Array, importId = randomIds.next("import")): Promise<Result<ImportSummary>> {
    const done = this.imports.summary(importId);
    if (done) return ok(done);
    const now = nowIso();
    const parsed = await parseTraceImport(body, { projectTask: `import:${importId}`, now }, MAX_QUARANTINED_LINES_PER_IMPORT);
    // A repeat that arrived while this one was parsing: it has been stored meanwhile.
    const meanwhile = this.imports.summary(importId);
    if (meanwhile) return ok(meanwhile);
    // Checked where nothing can run before the writes below: a deletion since the request began wins.
    if (ref.epoch !== undefined && ref.epoch < this.epoch())
      return failure("project_not_found", `project '${ref.projectId}' was deleted while this import was sent; nothing was imported`);
    const caseIds = new Set<string>();
    const notKept = new Set<string>();
    let evicted = 0;
    let room: CaseRoom | null = null;
    this.ctx.storage.transactionSync(() => {
      // Each run's view from its own records: one pass over the import, not one per run.
      const byRun = new Map<string, TraceRecord[]>();
      for (const { record } of parsed.records) {
        const own = byRun.get(record.runId);
        if (own) own.push(record);
        else byRun.set(record.runId, [record]);
      }
      for (const [runId, records] of byRun) {
        const run = RunTraceView.of(runId, records);
        for (const judge of run.judgements.filter((j) => j.result === "fail")) {
          const attribution = attribute(judge, run, { replayPassed: false });
          const built = buildCase(attribution, judge, run, { sessionId: judge.taskId, imported: true, now });
          // Whatever a foreign trace holds, one odd failure must not refuse the whole import.
          const found = built && FailedTurnCase.safeParse(built);
          if (!found) continue;
          if (!found.success) {
            logLine("warn", "imported failure left without a case", { error: formatIssues(found.error.issues) });
            continue;
          }
          // Full once: nothing this import can evict frees up while it runs.
          if (notKept.size > 0 && !caseIds.has(found.data.caseId) && !this.cases.has(found.data.caseId)) {
            notKept.add(found.data.caseId);
            continue;
          }
          const upserted = this.upsertCase(found.data, () => (room ??= this.cases.bound.room({ importedOnly: true, keep: caseIds })));
          evicted += upserted.evicted;
          if (upserted.kept) caseIds.add(found.data.caseId);
          else notKept.add(found.data.caseId);
        }
      }
      const summary: ImportSummary = {
        importId,
        imported: parsed.records.length,
        quarantined: parsed.quarantinedLines,
        caseIds: [...caseIds].sort(),
        casesNotKept: notKept.size,
        casesEvicted: evicted,
      };
      this.imports.add({ summary, at: now, records: parsed.records, quarantined: parsed.quarantined });
    });
    await this.settle(ref);
    return ok(this.imports.summary(importId)!);
  }

  /** Refused lines of the project's imports, oldest first, a page at a time (an import's first ones: `ImportStore`). */
  quarantine(limit: number, after: number | null): QuarantinePage {
    return this.imports.quarantinePage(limit, after);
  }

  /** The scorecards whose replay in `sessionId` awaits a verdict. */
  private pendingScorecards(sessionId: string): Scorecard[] {
    return this.sql
      .exec<{ body: string }>(
        `SELECT body FROM scorecards WHERE json_extract(body, '$.status') = 'pending' AND json_extract(body, '$.replay.sessionId') = ? ORDER BY case_id`,
        sessionId,
      )
      .toArray()
      .map((r) => Scorecard.parse(JSON.parse(r.body)));
  }

  /**
   * What the brief judges each case by (`ids`: a JSON array of case ids): its scorecard, or the
   * judged one before a replay that could not be played.
   */
  private briefScorecards(ids: string): Map<string, Scorecard> {
    const cards = new Map<string, Scorecard>();
    const rows = this.sql
      .exec<{ body: string; judged: string | null }>(
        `SELECT body, judged FROM scorecards WHERE case_id IN (SELECT value FROM json_each(?))`,
        ids,
      )
      .toArray();
    for (const row of rows) {
      const card = Scorecard.parse(JSON.parse(row.body));
      const shown = card.status === "unavailable" && row.judged ? Scorecard.parse(JSON.parse(row.judged)) : card;
      cards.set(card.caseId, shown);
    }
    return cards;
  }

  private recordOutcome(runId: string, judgeName: string, reproduced: boolean): void {
    this.sql.exec(
      `INSERT INTO replay_outcomes (run_id, judge_name, reproduced, at) VALUES (?, ?, ?, ?)`,
      runId,
      judgeName,
      reproduced ? 1 : 0,
      nowIso(),
    );
    keepNewest(this.sql, "replay_outcomes", MAX_PROJECT_REPLAY_OUTCOMES);
  }

  private reclassify(caseId: string, failureClass: FailureClass): void {
    const found = this.getCase(caseId);
    if (!found) return;
    const changed: FailedTurnCase = { ...found, applicability: { ...found.applicability, failureClass } };
    const stored = this.cases.replace(changed, () => this.cases.bound.room(LIVE));
    if (stored) this.withdrawIfUnpromotable(stored);
  }

  /** Memory holds only cases that could be promoted now: a case found flaky (or otherwise reclassified) leaves it. */
  private withdrawIfUnpromotable(c: FailedTurnCase): void {
    if (becomesCase(c.applicability.failureClass)) return;
    if (this.sql.exec(`DELETE FROM memory WHERE case_id = ? RETURNING case_id`, c.caseId).toArray().length > 0) this.memoryChanged = true;
  }

  /** A case deleted or evicted: what the project kept about it goes too, its memory rule included. */
  private forgetCase(caseId: string): void {
    this.sql.exec(`DELETE FROM scorecards WHERE case_id = ?`, caseId);
    this.sql.exec(`DELETE FROM approvals WHERE case_id = ?`, caseId);
    if (this.sql.exec(`DELETE FROM memory WHERE case_id = ? RETURNING case_id`, caseId).toArray().length > 0) this.memoryChanged = true;
  }

  /** After a change: the mirror is due, and memory.jsonl is written now if memory changed. */
  private async settle(ref: ProjectRef): Promise<void> {
    await this.mirror.changed(ref);
    if (!this.memoryChanged) return;
    this.memoryChanged = false;
    await this.mirror.memoryChanged(ref);
  }

  /** The stored JSON of each row of a mirror file (validated when it was written). */
  private mirrorRows(file: MirrorFile): string[] {
    if (file === "cases") return this.cases.bodies();
    const query =
      file === "scorecards" ? `SELECT body FROM scorecards ORDER BY case_id` : `SELECT body FROM memory ORDER BY promoted_at, case_id`;
    return this.sql
      .exec<{ body: string }>(query)
      .toArray()
      .map((r) => r.body);
  }

  /** A sighting of a case (`CaseStore.upsert`); memory follows it. */
  private upsertCase(found: FailedTurnCase, room: () => CaseRoom): { kept: boolean; evicted: number } {
    const { stored, evicted } = this.cases.upsert(found, room);
    if (stored) this.withdrawIfUnpromotable(stored);
    return { kept: stored !== null, evicted };
  }
}

/**
 * Forgets a table's oldest rows past `keep`. Rows are only added (rowid one above the largest) and
 * removed here, oldest first, so the newest `keep` are those within `keep` of the largest rowid.
 */
function keepNewest(sql: SqlStorage, table: "attributions_seen" | "replay_outcomes", keep: number): void {
  sql.exec(`DELETE FROM ${table} WHERE rowid <= (SELECT MAX(rowid) FROM ${table}) - ?`, keep);
}

/** A scorecard a judge settled: the failure reproduced or it did not. */
function isJudged(card: Scorecard): boolean {
  return card.status === "passed" || card.status === "stale";
}
