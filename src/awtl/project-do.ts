import { DurableObject } from "cloudflare:workers";
import {
  type AttributionRecord,
  type FailureClass,
  failure,
  formatIssues,
  nowIso,
  ok,
  type Result,
  randomIds,
  type TraceRecord,
} from "../domain";
import type { AppEnv } from "../env";
import { attribute } from "./attribution";
import { type Brief, type BriefContext, buildBrief } from "./brief";
import { buildCase } from "./case-builder";
import { FailedTurnCase } from "./failed-turn-case";
import { becomesCase } from "./failure-classes";
import type { Approval, MemoryRule, ProjectRef, ProjectRpc, QuarantineEntry, VerdictNotice } from "./project-api";
import { ImportSummary, projectObjectName } from "./project-api";
import { promotionRefusal } from "./promotion";
import { RunTraceView } from "./run-view";
import { Scorecard, verdictOf } from "./scorecard";
import { parseTraceImport } from "./trace-import";

/** Evidence refs kept per case (a case seen many times keeps its first and latest ones). */
const MAX_EVIDENCE_REFS = 20;

/**
 * One per project: its failed-turn cases, their replay scorecards, human approvals, promoted memory
 * and imported traces. One object serialises every change to a project's cases (a recurrence is one
 * case with a count). Cases, scorecards and memory are mirrored to R2 as JSONL after each change.
 */
export class ProjectDO extends DurableObject<AppEnv> implements ProjectRpc {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: AppEnv) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS cases (case_id TEXT PRIMARY KEY, body TEXT NOT NULL, last_seen_at TEXT NOT NULL)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS attributions_seen (attribution_id TEXT PRIMARY KEY)`);
    // The runs each case was seen in: an occurrence is a run (a run that repeats a failure 50 times,
    // or the same foreign run imported again, counts once).
    this.sql.exec(`CREATE TABLE IF NOT EXISTS case_runs (case_id TEXT NOT NULL, run_id TEXT NOT NULL, PRIMARY KEY (case_id, run_id))`);
    this.sql.exec(`CREATE INDEX IF NOT EXISTS case_runs_by_run ON case_runs (run_id)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS scorecards (case_id TEXT PRIMARY KEY, body TEXT NOT NULL)`);
    // The latest scorecard a judge settled (passed or stale): a later replay that is pending, or that
    // could not be played, does not take back what a judge already found.
    const scorecardColumns = this.sql.exec<{ name: string }>(`PRAGMA table_info(scorecards)`).toArray();
    if (!scorecardColumns.some((c) => c.name === "judged")) {
      this.sql.exec(`ALTER TABLE scorecards ADD COLUMN judged TEXT`);
      this.sql.exec(`UPDATE scorecards SET judged = body WHERE json_extract(body, '$.status') IN ('passed', 'stale')`);
    }
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS replay_outcomes (run_id TEXT NOT NULL, judge_name TEXT NOT NULL, reproduced INTEGER NOT NULL, at TEXT NOT NULL)`,
    );
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS approvals (case_id TEXT NOT NULL, approved_by TEXT NOT NULL, note TEXT NOT NULL, approved_at TEXT NOT NULL)`,
    );
    this.sql.exec(`CREATE TABLE IF NOT EXISTS memory (case_id TEXT PRIMARY KEY, body TEXT NOT NULL, promoted_at TEXT NOT NULL)`);
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS imports (import_id TEXT PRIMARY KEY, at TEXT NOT NULL, imported INTEGER NOT NULL, quarantined INTEGER NOT NULL)`,
    );
    // The summary answered, so a repeated import (same Idempotency-Key) gets it again instead of counting twice.
    const importColumns = this.sql.exec<{ name: string }>(`PRAGMA table_info(imports)`).toArray();
    if (!importColumns.some((c) => c.name === "summary")) this.sql.exec(`ALTER TABLE imports ADD COLUMN summary TEXT`);
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS imported_records (import_id TEXT NOT NULL, line INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (import_id, line))`,
    );
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS quarantine (import_id TEXT NOT NULL, line INTEGER NOT NULL, sha256 TEXT NOT NULL, reason TEXT NOT NULL, at TEXT NOT NULL)`,
    );
  }

  /** A failure attributed in one of the project's sessions; `found` is the case it became, if any. Idempotent per attribution. */
  async recordAttribution(ref: ProjectRef, attribution: AttributionRecord, found: FailedTurnCase | null): Promise<void> {
    const fresh = this.sql
      .exec(`INSERT OR IGNORE INTO attributions_seen (attribution_id) VALUES (?) RETURNING attribution_id`, attribution.attributionId)
      .toArray();
    if (fresh.length === 0 || !found) return;
    this.upsertCase(FailedTurnCase.parse(found));
    await this.mirror(ref);
  }

  listCases(): FailedTurnCase[] {
    return this.sql
      .exec<{ body: string }>(`SELECT body FROM cases ORDER BY last_seen_at DESC, case_id`)
      .toArray()
      .map((r) => FailedTurnCase.parse(JSON.parse(r.body)));
  }

  getCase(caseId: string): FailedTurnCase | null {
    const row = this.sql.exec<{ body: string }>(`SELECT body FROM cases WHERE case_id = ?`, caseId).toArray()[0];
    return row ? FailedTurnCase.parse(JSON.parse(row.body)) : null;
  }

  brief(context: BriefContext): Brief | null {
    const promoted = new Set(this.memory().map((m) => m.caseId));
    // A retry of any occurrence of a case, not only its latest (the case's origin).
    const retriedCaseIds =
      context.retryOf === null
        ? []
        : this.sql
            .exec<{ case_id: string }>(`SELECT case_id FROM case_runs WHERE run_id = ?`, context.retryOf)
            .toArray()
            .map((r) => r.case_id);
    return buildBrief(this.listCases(), this.briefScorecards(), promoted, { ...context, retriedCaseIds });
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
    const body = JSON.stringify(Scorecard.parse(card));
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
    await this.mirror(ref);
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
    const pending = this.scorecards().filter((c) => c.status === "pending" && c.replay?.sessionId === sessionId);
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
    const pending = this.scorecards().find(
      (c) => c.status === "pending" && c.replay?.sessionId === notice.sessionId && c.replay.runId === notice.runId,
    );
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

  async approve(ref: ProjectRef, caseId: string, approvedBy: string, note: string): Promise<Result<Approval>> {
    if (!this.getCase(caseId)) return failure("case_not_found", `case '${caseId}' does not exist in this project`);
    const approval: Approval = { caseId, approvedBy, note, approvedAt: nowIso() };
    this.sql.exec(
      `INSERT INTO approvals (case_id, approved_by, note, approved_at) VALUES (?, ?, ?, ?)`,
      caseId,
      approvedBy,
      note,
      approval.approvedAt,
    );
    await this.mirror(ref);
    return ok(approval);
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
      rule: found.preventionHint,
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
    await this.mirror(ref);
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
   * that come of them are marked imported and can never be promoted.
   */
  async importTraces(ref: ProjectRef, body: Uint8Array, importId = randomIds.next("import")): Promise<ImportSummary> {
    const done = this.importSummary(importId);
    if (done) return done;
    const now = nowIso();
    const parsed = await parseTraceImport(body, { projectTask: `import:${importId}`, now });
    // A repeat that arrived while this one was parsing: it has been stored meanwhile.
    const meanwhile = this.importSummary(importId);
    if (meanwhile) return meanwhile;
    const caseIds = new Set<string>();
    this.ctx.storage.transactionSync(() => {
      for (const { line, record } of parsed.records) {
        this.sql.exec(
          `INSERT INTO imported_records (import_id, line, body) VALUES (?, ?, ?)`,
          importId,
          line,
          JSON.stringify({ ...record, imported: true }),
        );
      }
      for (const q of parsed.quarantined)
        this.sql.exec(
          `INSERT INTO quarantine (import_id, line, sha256, reason, at) VALUES (?, ?, ?, ?, ?)`,
          importId,
          q.line,
          q.sha256,
          q.reason,
          now,
        );
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
            console.error(
              JSON.stringify({ level: "warn", msg: "imported failure left without a case", error: formatIssues(found.error.issues) }),
            );
            continue;
          }
          this.upsertCase(found.data);
          caseIds.add(found.data.caseId);
        }
      }
      const summary: ImportSummary = {
        importId,
        imported: parsed.records.length,
        quarantined: parsed.quarantined.length,
        caseIds: [...caseIds].sort(),
      };
      this.sql.exec(
        `INSERT INTO imports (import_id, at, imported, quarantined, summary) VALUES (?, ?, ?, ?, ?)`,
        importId,
        now,
        summary.imported,
        summary.quarantined,
        JSON.stringify(summary),
      );
    });
    await this.mirror(ref);
    return this.importSummary(importId)!;
  }

  /** The answer of an import already stored (null for one stored before summaries were kept: counted as new). */
  private importSummary(importId: string): ImportSummary | null {
    const row = this.sql.exec<{ summary: string | null }>(`SELECT summary FROM imports WHERE import_id = ?`, importId).toArray()[0];
    return row?.summary ? ImportSummary.parse(JSON.parse(row.summary)) : null;
  }

  quarantine(): QuarantineEntry[] {
    return this.sql
      .exec<{ import_id: string; line: number; sha256: string; reason: string; at: string }>(
        `SELECT * FROM quarantine ORDER BY at, import_id, line`,
      )
      .toArray()
      .map((r) => ({ importId: r.import_id, line: r.line, sha256: r.sha256, reason: r.reason, quarantinedAt: r.at }));
  }

  private scorecards(): Scorecard[] {
    return this.sql
      .exec<{ body: string }>(`SELECT body FROM scorecards ORDER BY case_id`)
      .toArray()
      .map((r) => Scorecard.parse(JSON.parse(r.body)));
  }

  /** What the brief judges each case by: its scorecard, or the judged one before a replay that could not be played. */
  private briefScorecards(): Map<string, Scorecard> {
    const cards = new Map<string, Scorecard>();
    for (const row of this.sql.exec<{ body: string; judged: string | null }>(`SELECT body, judged FROM scorecards`).toArray()) {
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
  }

  private reclassify(caseId: string, failureClass: FailureClass): void {
    const found = this.getCase(caseId);
    if (!found) return;
    const changed: FailedTurnCase = { ...found, applicability: { ...found.applicability, failureClass } };
    this.sql.exec(`UPDATE cases SET body = ? WHERE case_id = ?`, JSON.stringify(FailedTurnCase.parse(changed)), caseId);
    this.withdrawIfUnpromotable(changed);
  }

  /** Memory holds only cases that could be promoted now: a case found flaky (or otherwise reclassified) leaves it. */
  private withdrawIfUnpromotable(c: FailedTurnCase): void {
    if (!becomesCase(c.applicability.failureClass)) this.sql.exec(`DELETE FROM memory WHERE case_id = ?`, c.caseId);
  }

  /**
   * A recurrence in a new run counts, keeps the first sighting, moves the origin to the latest run and
   * loses the imported mark once seen for real. A sighting of a run already counted (the harness's
   * own trace imported back), or an imported one of a case seen for real, only adds its evidence: the
   * live case keeps its origin, so its replays still settle as before. A case found flaky stays flaky.
   */
  private upsertCase(found: FailedTurnCase): void {
    const existing = this.getCase(found.caseId);
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
    this.sql.exec(
      `INSERT OR REPLACE INTO cases (case_id, body, last_seen_at) VALUES (?, ?, ?)`,
      merged.caseId,
      JSON.stringify(FailedTurnCase.parse(merged)),
      merged.lastSeenAt,
    );
    this.withdrawIfUnpromotable(merged);
  }

  /** cases.jsonl, scorecards.jsonl and memory.jsonl under the project's prefix; keys come from validated ids only. */
  private async mirror(ref: ProjectRef): Promise<void> {
    const prefix = projectPrefix(ref);
    const jsonl = (rows: unknown[]) => rows.map((r) => `${JSON.stringify(r)}\n`).join("");
    const put = (name: string, rows: unknown[]) =>
      this.env.STORE.put(`${prefix}/${name}.jsonl`, jsonl(rows), { httpMetadata: { contentType: "application/x-ndjson" } });
    await Promise.all([put("cases", this.listCases()), put("scorecards", this.scorecards()), put("memory", this.memory())]);
  }
}

/** Where a project's mirror lives in R2. */
export function projectPrefix(ref: ProjectRef): string {
  return `projects/${encodeURIComponent(projectObjectName(ref))}`;
}

/** A scorecard a judge settled: the failure reproduced or it did not. */
function isJudged(card: Scorecard): boolean {
  return card.status === "passed" || card.status === "stale";
}

function mergeEvidence(old: string[], added: string[]): string[] {
  const all = [...new Set([...old, ...added])];
  return all.length <= MAX_EVIDENCE_REFS ? all : [...all.slice(0, MAX_EVIDENCE_REFS / 2), ...all.slice(-MAX_EVIDENCE_REFS / 2)];
}
