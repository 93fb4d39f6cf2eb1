import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { FailedTurnCase } from "../../src/awtl/failed-turn-case";
import { ImportStore } from "../../src/awtl/import-store";
import { type ProjectRef, projectObjectName } from "../../src/awtl/project-api";
import type { ProjectDO } from "../../src/awtl/project-do";
import { type Scorecard, verdictOf } from "../../src/awtl/scorecard";
import {
  type AttributionRecord,
  MAX_CASE_MEMORY_READS,
  MAX_IMPORTED_TRACE_RECORD_BYTES,
  MAX_PROJECT_ATTRIBUTIONS_REMEMBERED,
  MAX_PROJECT_CASE_BYTES,
  MAX_PROJECT_IMPORTED_RECORD_BYTES,
  MAX_PROJECT_QUARANTINE_LINES,
  MAX_PROJECT_REPLAY_OUTCOMES,
  MAX_QUARANTINED_LINES_PER_IMPORT,
  MAX_TRACE_ID_CHARS,
  MAX_TRACE_IMPORT_BYTES,
  unwrapResult,
} from "../../src/domain";
import { casesOf, client, openSession } from "./harness";

/** What a project keeps besides its cases stays bounded: quarantine, imported records, import answers, delivered attributions, replay outcomes. */

const api = client();

type Entry = { importId: string; line: number; sha256: string; reason: string };
type QuarantinePage = { quarantine: Entry[]; nextCursor: string | null };
type Summary = { importId: string; imported: number; quarantined: number; caseIds: string[] };

async function errorOf(res: Response): Promise<[number, string]> {
  return [res.status, ((await res.json()) as { error: { code: string } }).error.code];
}

async function importLines(projectId: string, lines: string[]): Promise<Summary> {
  const res = await api(`/api/projects/${projectId}/traces`, {
    method: "POST",
    headers: { "content-type": "application/x-ndjson" },
    body: lines.join("\n"),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as Summary;
}

async function quarantinePage(projectId: string, query = ""): Promise<QuarantinePage> {
  const res = await api(`/api/projects/${projectId}/quarantine${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as QuarantinePage;
}

/** Every page from `cursor` on (the first page without one), `limit` at a time. */
async function walk(projectId: string, limit: number, cursor: string | null = null): Promise<Entry[]> {
  const all: Entry[] = [];
  do {
    const page = await quarantinePage(projectId, `?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    all.push(...page.quarantine);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

const junk = (n: number, tag = "x") => Array.from({ length: n }, (_, i) => `${tag}${i}`);
const span = (runId: string) => JSON.stringify({ type: "span_start", runId });

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function inProject<T>(projectId: string, fn: (o: ProjectDO, sql: SqlStorage, ref: ProjectRef) => Promise<T> | T): Promise<T> {
  const ref: ProjectRef = { tenant: null, projectId };
  return runInDurableObject(env.PROJECTS.getByName(projectObjectName(ref)), (o: ProjectDO, state) => fn(o, state.storage.sql, ref));
}

const count = (n: number) => n.toLocaleString("en-US");
const rows = (sql: SqlStorage, table: string) => sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).one().n;

/** `n` rows in `table` from a recursive count (older rows than any the test then adds). */
function prefill(sql: SqlStorage, n: number, insert: string): void {
  sql.exec(`WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?) ${insert}`, n);
}

describe("the quarantine", () => {
  it(`keeps an import's first ${count(MAX_QUARANTINED_LINES_PER_IMPORT)} refused lines with their reasons; the answer counts them all`, async () => {
    const P = "p_quarantine_cap";
    await openSession(api, { projectId: P });
    const bad = junk(MAX_QUARANTINED_LINES_PER_IMPORT + 7);
    const lines = [span("r1"), ...bad.slice(0, 10), span("r1"), ...bad.slice(10), span("r2")];
    const summary = await importLines(P, lines);
    expect([summary.imported, summary.quarantined]).toEqual([3, MAX_QUARANTINED_LINES_PER_IMPORT + 7]);

    const kept = await walk(P, 1000);
    const badLines = lines.flatMap((line, i) => (line.startsWith("x") ? [i + 1] : []));
    expect(kept.map((q) => q.line)).toEqual(badLines.slice(0, MAX_QUARANTINED_LINES_PER_IMPORT));
    expect(new Set(kept.map((q) => q.importId))).toEqual(new Set([summary.importId]));
    expect(kept[0]).toMatchObject({ sha256: await sha256("x0"), reason: expect.stringMatching(/^malformed JSON/) });
    expect(kept.at(-1)!.sha256).toBe(await sha256(`x${MAX_QUARANTINED_LINES_PER_IMPORT - 1}`));
  });

  it(`keeps ${count(MAX_PROJECT_QUARANTINE_LINES)} lines per project: the oldest imports' go whole, and a cursor into them goes on with the next line kept`, async () => {
    const P = "p_quarantine_bound";
    await openSession(api, { projectId: P });
    const imports: Summary[] = [];
    const perProject = MAX_PROJECT_QUARANTINE_LINES / MAX_QUARANTINED_LINES_PER_IMPORT;
    for (let k = 0; k < perProject; k++) imports.push(await importLines(P, junk(MAX_QUARANTINED_LINES_PER_IMPORT, `i${k}-`)));
    const first = await quarantinePage(P, "?limit=5");
    expect(first.quarantine.map((q) => [q.importId, q.line])).toEqual([1, 2, 3, 4, 5].map((n) => [imports[0]!.importId, n]));

    // One more, of half as many lines: the oldest import goes whole (9,500 lines stay), not its first 500 lines.
    const last = await importLines(P, [...junk(MAX_QUARANTINED_LINES_PER_IMPORT / 2, "last-"), span("r1")]);
    expect([last.imported, last.quarantined]).toEqual([1, MAX_QUARANTINED_LINES_PER_IMPORT / 2]);
    const kept = await walk(P, 1000);
    expect(kept).toHaveLength(MAX_PROJECT_QUARANTINE_LINES - MAX_QUARANTINED_LINES_PER_IMPORT / 2);
    const byImport = new Map<string, number>();
    for (const q of kept) byImport.set(q.importId, (byImport.get(q.importId) ?? 0) + 1);
    expect([...byImport]).toEqual([
      ...imports.slice(1).map((i) => [i.importId, MAX_QUARANTINED_LINES_PER_IMPORT]),
      [last.importId, MAX_QUARANTINED_LINES_PER_IMPORT / 2],
    ]);

    // The cursor pointed into the import that went: the walk goes on at the oldest line kept.
    const rest = await walk(P, 1000, first.nextCursor);
    expect(rest).toEqual(kept);
  });

  it("pages oldest first (by import, then line) without gaps or repeats; lines added meanwhile come on later pages", async () => {
    const P = "p_quarantine_pages";
    await openSession(api, { projectId: P });
    const a = await importLines(P, [span("r1"), ...junk(5, "a")]);
    const b = await importLines(P, junk(4, "b"));
    const first = await quarantinePage(P, "?limit=3");
    expect(first.quarantine.map((q) => [q.importId, q.line])).toEqual([
      [a.importId, 2],
      [a.importId, 3],
      [a.importId, 4],
    ]);
    const c = await importLines(P, junk(2, "c"));
    const rest = await walk(P, 2, first.nextCursor);
    expect([...first.quarantine, ...rest].map((q) => [q.importId, q.line])).toEqual([
      ...[2, 3, 4, 5, 6].map((n) => [a.importId, n]),
      ...[1, 2, 3, 4].map((n) => [b.importId, n]),
      ...[1, 2].map((n) => [c.importId, n]),
    ]);
    expect(await quarantinePage(P, "?limit=11")).toMatchObject({ nextCursor: null });
    expect((await quarantinePage(P)).quarantine).toHaveLength(11);
  });

  it("refuses a cursor it did not hand out and a limit outside 1-1,000", async () => {
    const P = "p_quarantine_bad";
    await openSession(api, { projectId: P });
    expect(await errorOf(await api(`/api/projects/${P}/quarantine?cursor=nope`))).toEqual([400, "invalid_cursor"]);
    for (const query of ["limit=0", "limit=1001", "limit=ten", "limit=2&after=1"])
      expect(await errorOf(await api(`/api/projects/${P}/quarantine?${query}`)), query).toEqual([400, "invalid_query"]);
    expect(await errorOf(await api("/api/projects/p_never_named_here/quarantine?limit=2"))).toEqual([404, "project_not_found"]);
  });
});

describe("imported records and import answers", () => {
  it(`keep the newest imports' records within ${MAX_PROJECT_IMPORTED_RECORD_BYTES / 1024 / 1024} MiB (an import's first ones when it alone is larger); cases come from every line`, async () => {
    const P = "p_imported_records";
    await openSession(api, { projectId: P });
    // Terse lines, each several times longer once normalised: more than the budget from one body.
    const failure = [
      JSON.stringify({ type: "action", runId: "ext-late", actionId: "a1", tool: "write", writes: ["src/late.ts"] }),
      JSON.stringify({ type: "judge_result", runId: "ext-late", judgeName: "ci", result: "fail", artifactRefs: ["src/late.ts"] }),
    ];
    const tail = failure.join("\n").length + 1;
    const terse = span("r");
    const lines = [...Array.from({ length: Math.floor((MAX_TRACE_IMPORT_BYTES - tail) / (terse.length + 1)) }, () => terse), ...failure];
    const big = await importLines(P, lines);
    expect([big.imported, big.quarantined, big.caseIds.length]).toEqual([lines.length, 0, 1]);
    expect((await casesOf(api, P)).map((c) => c.artifactRefs)).toEqual([["src/late.ts"]]);

    const stored = () =>
      inProject(P, (_o, sql) =>
        sql
          .exec<{ import_id: string; n: number; first: number; last: number; bytes: number; counted: number }>(
            `SELECT r.import_id, COUNT(*) AS n, MIN(line) AS first, MAX(line) AS last, SUM(length(CAST(body AS BLOB))) AS bytes,
               (SELECT record_bytes FROM imports i WHERE i.import_id = r.import_id) AS counted
             FROM imported_records r GROUP BY r.import_id`,
          )
          .toArray(),
      );
    const [kept] = await stored();
    expect(kept).toMatchObject({ import_id: big.importId, first: 1, last: kept!.n, counted: kept!.bytes });
    expect(kept!.n).toBeLessThan(lines.length);
    expect(kept!.bytes).toBeLessThanOrEqual(MAX_PROJECT_IMPORTED_RECORD_BYTES);
    expect(kept!.bytes + 1000).toBeGreaterThan(MAX_PROJECT_IMPORTED_RECORD_BYTES);

    // A newer import is kept whole, marked imported; the older one's records give way.
    const small = await importLines(P, [span("r9"), "x", span("r9")]);
    expect(await stored()).toEqual([expect.objectContaining({ import_id: small.importId, n: 2, first: 1, last: 3 })]);
    const bodies = await inProject(P, (_o, sql) =>
      sql
        .exec<{ body: string }>(`SELECT body FROM imported_records ORDER BY line`)
        .toArray()
        .map((r) => JSON.parse(r.body)),
    );
    expect(bodies).toEqual([expect.objectContaining({ type: "span_start", runId: "r9", imported: true }), expect.anything()]);
  });

  it("an import stored before the bound counts its records' bytes once", async () => {
    await inProject("p_imports_old", async (o, sql, ref) => {
      await o.importTraces(ref, new TextEncoder().encode([span("r1"), span("r2")].join("\n")), "im_old");
      const bytes = sql.exec<{ n: number }>(`SELECT SUM(length(CAST(body AS BLOB))) AS n FROM imported_records`).one().n;
      sql.exec(`ALTER TABLE imports DROP COLUMN record_bytes`);
      new ImportStore(sql);
      expect(sql.exec(`SELECT import_id, record_bytes FROM imports`).toArray()).toEqual([{ import_id: "im_old", record_bytes: bytes }]);
    });
  });

  it("an import's answer stays while its Idempotency-Key may come again (24 h) or its records are kept, then goes", async () => {
    await inProject("p_import_answers", async (o, sql, ref) => {
      const old = new Date(Date.now() - 25 * 3_600_000).toISOString();
      const recent = new Date(Date.now() - 23 * 3_600_000).toISOString();
      for (const [id, at, bytes] of [
        ["im_old_empty", old, 0],
        ["im_old_records", old, 100],
        ["im_recent", recent, 0],
      ] as const)
        sql.exec(
          `INSERT INTO imports (import_id, at, imported, quarantined, summary, record_bytes) VALUES (?, ?, 0, 0, ?, ?)`,
          id,
          at,
          JSON.stringify({ importId: id, imported: 0, quarantined: 0, caseIds: [], casesNotKept: 0, casesEvicted: 0 }),
          bytes,
        );
      const body = new TextEncoder().encode(span("r1"));
      const first = unwrapResult(await o.importTraces(ref, body, "im_now"));
      const ids = () =>
        sql
          .exec<{ import_id: string }>(`SELECT import_id FROM imports ORDER BY import_id`)
          .toArray()
          .map((r) => r.import_id);
      expect(ids()).toEqual(["im_now", "im_old_records", "im_recent"]);
      // A repeat under the same key gets the first answer and counts nothing again.
      expect(unwrapResult(await o.importTraces(ref, body, "im_now"))).toEqual(first);
      expect(unwrapResult(await o.importTraces(ref, body, "im_recent"))).toMatchObject({ importId: "im_recent", imported: 0 });
      expect(rows(sql, "imported_records")).toBe(1);
    });
  });
});

/** A live case of run `runId` (same failure, so the same case id, whatever the run). */
function liveCase(runId: string): FailedTurnCase {
  const at = new Date().toISOString();
  return {
    schemaVersion: 1,
    caseId: "cs_00000000000000b1",
    turnId: "t_1",
    failureTurnId: "t_1",
    failureEventId: "jd_1",
    artifactRefs: ["src/a.ts"],
    memoryReadNodeIds: [],
    preventionHint: "Run ci again on src/a.ts after changing it.",
    applicability: { tools: ["write"], pathGlobs: ["src/a.ts"], failureClass: "agent", scope: "paths" },
    evidenceRefs: [`run:${runId}`],
    occurrences: 1,
    firstSeenAt: at,
    lastSeenAt: at,
    origin: { sessionId: "s_origin", runId, judgeName: "ci", failureKind: "external", builtIn: false },
    imported: false,
  };
}

const attribution = (id: string) => ({ attributionId: id }) as AttributionRecord;

// Hunt 53: one row past SQLite's 2 MB (a 2.2 MB taskId, or a case naming two 1.1 MB ones) failed the
// whole import with 500, and a case seen again grew without bound until listing cases failed.
describe("rows an import writes", () => {
  const failure = (runId: string, extra: Record<string, unknown> = {}) => [
    JSON.stringify({ type: "action", runId, actionId: "a1", tool: "write", writes: ["src/x.ts"], ...extra }),
    JSON.stringify({ type: "judge_result", runId, judgeName: "ci", result: "fail", artifactRefs: ["src/x.ts"], ...extra }),
  ];
  const tooLong = (field: string) => `${field}: Too big: expected string to have <=${MAX_TRACE_ID_CHARS} characters`;

  it("a line with an id past its limit, or a record past 1 MiB, is quarantined with its reason and the rest is kept (201)", async () => {
    const P = "p_row_bounds";
    await openSession(api, { projectId: P });
    const attribution = {
      type: "attribution",
      taskId: "s_1",
      runId: "ok",
      attemptId: "ok",
      writerSeq: 1,
      createdAt: "2026-12-01T00:00:00.000Z",
      attributionId: "at_1",
      failureEventId: "j_1",
      failureTurnId: null,
      judgeName: "ci",
      failureKind: "external",
      classification: "agent",
      sourceActionIds: [],
      verifierActionId: null,
      touchedActionIds: Array.from({ length: 1_001 }, (_, i) => `a${i}`),
      memoryReadNodeIds: [],
      artifactRefs: ["src/x.ts"],
      evidenceRefs: [],
      rule: "none",
      caseId: null,
    };
    const paths = Array.from({ length: 200 }, (_, i) => `src/${i}/${"p".repeat(4000)}`);
    const lines = [
      ...failure("ok"),
      JSON.stringify({ type: "span_start", runId: "t", taskId: "t".repeat(2_200_000) }),
      JSON.stringify({ type: "span_start", runId: "t", attempt_id: "a".repeat(MAX_TRACE_ID_CHARS + 1) }),
      JSON.stringify(attribution),
      JSON.stringify({ type: "action", runId: "big", actionId: "a1", reads: paths, writes: paths }),
      JSON.stringify({ type: "span_end", runId: "ok" }),
    ];
    const summary = await importLines(P, lines);
    expect([summary.imported, summary.quarantined, summary.caseIds.length]).toEqual([3, 4, 1]);
    expect(new TextEncoder().encode(lines.join("\n")).byteLength).toBeLessThan(MAX_TRACE_IMPORT_BYTES);
    expect((await walk(P, 100)).map((q) => [q.line, q.reason])).toEqual([
      [3, tooLong("taskId")],
      [4, tooLong("attemptId")],
      [5, "touchedActionIds: Too big: expected array to have <=1000 items"],
      [
        6,
        expect.stringMatching(
          new RegExp(`^the record takes [0-9,]+ bytes of JSON, over the ${count(MAX_IMPORTED_TRACE_RECORD_BYTES)} one record may take$`),
        ),
      ],
    ]);
    const kept = await inProject(P, (_o, sql) =>
      sql
        .exec<{ line: number }>(`SELECT line FROM imported_records ORDER BY line`)
        .toArray()
        .map((r) => r.line),
    );
    expect(kept).toEqual([1, 2, 7]);
  });

  it("two lines with a 1.1 MB taskId each no longer fail the import: both are quarantined, and no case names them", async () => {
    const P = "p_row_bounds_case";
    await openSession(api, { projectId: P });
    const summary = await importLines(P, failure("r1", { taskId: "t".repeat(1_100_000) }));
    expect([summary.imported, summary.quarantined, summary.caseIds]).toEqual([0, 2, []]);
    expect((await walk(P, 100)).map((q) => [q.line, q.reason])).toEqual([
      [1, tooLong("taskId")],
      [2, tooLong("taskId")],
    ]);
    // At the limit, the case names it (its origin and its evidence) and is kept.
    const atLimit = await importLines(P, failure("r2", { taskId: "t".repeat(MAX_TRACE_ID_CHARS) }));
    expect([atLimit.imported, atLimit.quarantined, atLimit.caseIds.length]).toEqual([2, 0, 1]);
    const [c] = await casesOf(api, P);
    expect([(c!.origin as { sessionId: string }).sessionId.length, c!.evidenceRefs]).toEqual([
      MAX_TRACE_ID_CHARS,
      ["judge:ci", `trace:${"t".repeat(MAX_TRACE_ID_CHARS)}#2`, "action:a1"],
    ]);
  });

  it(`cases seen again in runs that read many briefs keep their newest ${MAX_CASE_MEMORY_READS} brief case ids, within the bound; listing works`, async () => {
    const P = "p_row_bounds_reads";
    await openSession(api, { projectId: P });
    const reads = (runId: string, tag: string) =>
      Array.from({ length: 10 }, (_, i) =>
        JSON.stringify({
          type: "memory_read",
          runId,
          caseIds: Array.from({ length: 50 }, (_, k) => `${tag}-${i}-${k}-${"m".repeat(400)}`),
        }),
      );
    for (let c = 0; c < 3; c++) await importLines(P, failure(`small${c}`, { writes: [`src/f${c}.ts`], artifactRefs: [`src/f${c}.ts`] }));
    for (let c = 0; c < 3; c++)
      await importLines(P, [
        ...failure(`grow${c}`, { writes: [`src/f${c}.ts`], artifactRefs: [`src/f${c}.ts`] }),
        ...reads(`grow${c}`, `c${c}`),
      ]);
    const res = await api(`/api/projects/${P}/cases`);
    expect(res.status).toBe(200);
    const { cases } = (await res.json()) as { cases: { occurrences: number; memoryReadNodeIds: string[] }[] };
    const newest = (c: number) => Array.from({ length: MAX_CASE_MEMORY_READS }, (_, k) => `c${c}-9-${k + 30}-${"m".repeat(400)}`);
    expect(cases.map((c) => [c.occurrences, c.memoryReadNodeIds])).toEqual([2, 1, 0].map((c) => [2, newest(c)]));
    const total = await inProject(P, (_o, sql) =>
      sql.exec<{ bytes: number; actual: number }>(`SELECT SUM(bytes) AS bytes, SUM(length(CAST(body AS BLOB))) AS actual FROM cases`).one(),
    );
    expect(total.bytes).toBe(total.actual);
    expect(total.bytes).toBeLessThan(MAX_PROJECT_CASE_BYTES);
  });
});

describe("what the project remembers of deliveries and replays", () => {
  it(`remembers the latest ${count(MAX_PROJECT_ATTRIBUTIONS_REMEMBERED)} attributions handed over: one delivered again counts nothing`, async () => {
    await inProject("p_attributions_seen", async (o, sql, ref) => {
      prefill(sql, MAX_PROJECT_ATTRIBUTIONS_REMEMBERED, `INSERT INTO attributions_seen (attribution_id) SELECT 'at_old_' || i FROM k`);
      await o.recordAttribution(ref, attribution("at_1"), liveCase("r_1"));
      expect(rows(sql, "attributions_seen")).toBe(MAX_PROJECT_ATTRIBUTIONS_REMEMBERED);
      const seen = (id: string) => sql.exec(`SELECT 1 FROM attributions_seen WHERE attribution_id = ?`, id).toArray().length;
      expect([seen("at_old_1"), seen("at_old_2"), seen("at_1")]).toEqual([0, 1, 1]);

      // The outbox delivers at_1 again (now naming another run): it was seen, so nothing counts.
      await o.recordAttribution(ref, attribution("at_1"), liveCase("r_2"));
      expect(o.getCase("cs_00000000000000b1")!.occurrences).toBe(1);
      await o.recordAttribution(ref, attribution("at_2"), liveCase("r_2"));
      expect(o.getCase("cs_00000000000000b1")!.occurrences).toBe(2);
      expect(rows(sql, "attributions_seen")).toBe(MAX_PROJECT_ATTRIBUTIONS_REMEMBERED);
    });
  });

  it(`remembers the latest ${count(MAX_PROJECT_REPLAY_OUTCOMES)} replay outcomes: a run whose replay the judge passed is still flaky`, async () => {
    await inProject("p_replay_outcomes", async (o, sql, ref) => {
      await o.recordAttribution(ref, attribution("at_1"), liveCase("r_1"));
      prefill(
        sql,
        MAX_PROJECT_REPLAY_OUTCOMES,
        `INSERT INTO replay_outcomes (run_id, judge_name, reproduced, at) SELECT 'r_old_' || i, 'ci', 0, '2026-01-01T00:00:00.000Z' FROM k`,
      );
      const card: Scorecard = {
        recordId: "sc_1",
        caseId: "cs_00000000000000b1",
        ...verdictOf("not_reproduced"),
        validatedBy: "replay",
        lastValidatedAt: new Date().toISOString(),
        riskLevel: "low",
        appliesTo: [],
        doesNotApplyTo: [],
        evidenceRefs: ["run:r_replay"],
        replay: null,
      };
      await o.recordScorecard(ref, card, { originRunId: "r_1", judgeName: "ci", reproduced: false });
      expect(rows(sql, "replay_outcomes")).toBe(MAX_PROJECT_REPLAY_OUTCOMES);
      expect([
        o.replayPassed("r_old_1", "ci"),
        o.replayPassed("r_old_2", "ci"),
        o.replayPassed("r_1", "ci"),
        o.replayPassed("r_1", "lint"),
      ]).toEqual([false, true, true, false]);
      expect(o.getCase("cs_00000000000000b1")!.applicability.failureClass).toBe("flaky");
    });
  });
});
