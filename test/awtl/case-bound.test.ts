import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type BriefContext, buildBrief } from "../../src/awtl/brief";
import { CaseIndex } from "../../src/awtl/case-index";
import type { FailedTurnCase } from "../../src/awtl/failed-turn-case";
import { type ProjectRef, projectObjectName } from "../../src/awtl/project-api";
import { ProjectDO } from "../../src/awtl/project-do";
import { MIRROR_DELAY_MS, ProjectMirror, projectPrefix } from "../../src/awtl/project-mirror";
import { type Scorecard, verdictOf } from "../../src/awtl/scorecard";
import {
  type AttributionRecord,
  encodeCursor,
  MAX_CASE_BYTES,
  MAX_CASE_MEMORY_READS,
  MAX_CASE_PAGE_BYTES,
  MAX_PROJECT_CASE_BYTES,
  MAX_PROJECT_CASES,
  MAX_TRACE_ID_CHARS,
  unwrapResult,
} from "../../src/domain";
import { withoutEndMark } from "../../src/workspace/streams";

/** The project object's side of the bound, the brief's case selection and the R2 mirror, driven directly. */

const T0 = Date.UTC(2026, 0, 1);

/** Case `n`: about `path` (default src/d<n>/x.ts), last seen n seconds after T0. */
function makeCase(
  n: number,
  opts: { path?: string; paths?: string[]; imported?: boolean; scope?: "paths" | "denied_tools" | "retry"; tools?: string[] } = {},
): FailedTurnCase {
  const paths = opts.paths ?? [opts.path ?? `src/d${n}/x.ts`];
  const seen = new Date(T0 + n * 1000).toISOString();
  const scope = opts.scope ?? "paths";
  return {
    schemaVersion: 1,
    caseId: `cs_${String(n).padStart(16, "0")}`,
    turnId: `t_${n}`,
    failureTurnId: `t_${n}`,
    failureEventId: `jd_${n}`,
    artifactRefs: paths,
    memoryReadNodeIds: [],
    preventionHint: `Run ci again on ${paths[0]!.slice(0, 200)} after changing it (case ${n}).`,
    applicability: { tools: opts.tools ?? ["write"], pathGlobs: scope === "paths" ? paths : [], failureClass: "agent", scope },
    evidenceRefs: [`run:r_${n}`],
    occurrences: 1,
    firstSeenAt: seen,
    lastSeenAt: seen,
    origin: { sessionId: "s_origin", runId: `r_${n}`, judgeName: "ci", failureKind: "external", builtIn: false },
    imported: opts.imported ?? false,
  };
}

const attribution = (n: number) => ({ attributionId: `at_${n}` }) as AttributionRecord;

function card(caseId: string, outcome: "pending" | "reproduced"): Scorecard {
  const pending = outcome === "pending";
  return {
    recordId: `sc_${caseId}`,
    caseId,
    ...verdictOf(outcome),
    validatedBy: pending ? null : "replay",
    lastValidatedAt: pending ? null : new Date().toISOString(),
    riskLevel: "low",
    appliesTo: [],
    doesNotApplyTo: [],
    evidenceRefs: ["run:r_replay"],
    replay: pending ? { sessionId: "s_replay", runId: "r_replay" } : null,
  };
}

function project(projectId: string) {
  const ref: ProjectRef = { tenant: null, projectId };
  return { ref, stub: env.PROJECTS.getByName(projectObjectName(ref)) };
}

function inProject<T>(projectId: string, fn: (o: ProjectDO, state: DurableObjectState, ref: ProjectRef) => Promise<T> | T): Promise<T> {
  const { ref, stub } = project(projectId);
  return runInDurableObject(stub, (o: ProjectDO, state) => fn(o, state, ref));
}

/** Every case id of the project, newest first. */
function ids(o: ProjectDO): string[] {
  return o.listCases(MAX_PROJECT_CASES + 10, null).cases.map((c) => c.caseId);
}

async function record(o: ProjectDO, ref: ProjectRef, cases: FailedTurnCase[]): Promise<void> {
  for (const c of cases) await o.recordAttribution(ref, attribution(Number(c.caseId.slice(3))), c);
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe("the bound on a project's cases", () => {
  it("a new live case evicts the least recently seen case nothing relies on: not promoted, approved, verified, pending or being replayed", async () => {
    await inProject("p_bound_live", async (o, state, ref) => {
      await record(
        o,
        ref,
        range(0, MAX_PROJECT_CASES).map((n) => makeCase(n)),
      );
      const id = (n: number) => makeCase(n).caseId;
      state.storage.sql.exec(`INSERT INTO memory (case_id, body, promoted_at) VALUES (?, '{}', ?)`, id(0), new Date().toISOString());
      expect((await o.approve(ref, id(1), "dana", "")).ok).toBe(true);
      await o.recordScorecard(ref, card(id(2), "pending"), null);
      await o.recordScorecard(ref, card(id(3), "reproduced"), null);
      const lease = o.replayStarted(id(4));

      await record(o, ref, [makeCase(MAX_PROJECT_CASES)]);
      let kept = ids(o);
      expect([kept.length, kept[0], range(0, 6).map((n) => kept.includes(id(n)))]).toEqual([
        MAX_PROJECT_CASES,
        id(MAX_PROJECT_CASES),
        [true, true, true, true, true, false],
      ]);
      // A lease ended no longer holds its case.
      o.replayEnded(lease);
      await record(o, ref, [makeCase(MAX_PROJECT_CASES + 1)]);
      kept = ids(o);
      expect([kept.includes(id(4)), kept.includes(id(6))]).toEqual([false, true]);

      // When every case is relied on, a new one is not kept and nothing is lost.
      state.storage.sql.exec(
        `INSERT OR IGNORE INTO approvals (case_id, approved_by, note, approved_at) SELECT case_id, 'dana', '', '' FROM cases`,
      );
      const before = ids(o);
      await record(o, ref, [makeCase(MAX_PROJECT_CASES + 2)]);
      expect(ids(o)).toEqual(before);
    });
  });

  it("an import evicts only imported cases; a live case evicts imported ones before older live ones", async () => {
    await inProject("p_bound_import", async (o, _state, ref) => {
      const id = (n: number) => makeCase(n).caseId;
      const failures = (runId: string, judges: string[]) =>
        new TextEncoder().encode(
          [
            JSON.stringify({ type: "action", runId, actionId: "a1", tool: "write", writes: ["src/a.ts"] }),
            ...judges.map((j) =>
              JSON.stringify({ type: "judge_result", runId, judgeName: j, result: "fail", artifactRefs: [`src/${j}.ts`] }),
            ),
          ].join("\n"),
        );
      await record(
        o,
        ref,
        range(0, MAX_PROJECT_CASES - 2).map((n) => makeCase(n)),
      );
      await record(o, ref, [makeCase(5000, { imported: true }), makeCase(5001, { imported: true })]);
      const first = unwrapResult(await o.importTraces(ref, failures("ext-1", ["a", "b", "c"])));
      expect([first.caseIds.length, first.casesNotKept, first.casesEvicted]).toEqual([2, 1, 2]);
      expect([ids(o).length, ids(o).includes(id(5000)), ids(o).includes(id(5001)), ids(o).includes(id(0))]).toEqual([
        MAX_PROJECT_CASES,
        false,
        false,
        true,
      ]);

      // Live cases push out the imported ones, however recent, before the oldest live one.
      await record(o, ref, [makeCase(MAX_PROJECT_CASES - 2), makeCase(MAX_PROJECT_CASES - 1)]);
      expect([ids(o).length, first.caseIds.filter((c) => ids(o).includes(c)), ids(o).includes(id(0))]).toEqual([
        MAX_PROJECT_CASES,
        [],
        true,
      ]);

      // Full of the project's own cases: an import keeps none of its new ones and evicts nothing.
      const second = unwrapResult(await o.importTraces(ref, failures("ext-2", ["d", "e"])));
      expect([second.caseIds, second.casesNotKept, second.casesEvicted]).toEqual([[], 2, 0]);
      expect(ids(o)).toEqual(range(0, MAX_PROJECT_CASES).reverse().map(id));
    });
  });

  it(`holds the cases within ${MAX_PROJECT_CASE_BYTES} bytes of JSON: big cases evict the oldest`, async () => {
    await inProject("p_bound_bytes", async (o, state, ref) => {
      const big = (n: number) =>
        makeCase(n, { paths: range(0, 100).map((i) => `src/${String(i).padStart(3, "0")}/${"x".repeat(400)}.ts`) });
      const size = new TextEncoder().encode(JSON.stringify(big(10))).byteLength;
      const fit = Math.floor(MAX_PROJECT_CASE_BYTES / size);
      await record(o, ref, range(10, 10 + fit + 20).map(big));
      const { bytes } = state.storage.sql.exec<{ bytes: number }>(`SELECT SUM(bytes) AS bytes FROM cases`).one();
      expect([ids(o).length, bytes <= MAX_PROJECT_CASE_BYTES, ids(o).at(-1)]).toEqual([fit, true, big(10 + 20).caseId]);
    });
  });
});

// Hunt 53: only a new case was held to the bound; one seen again grew without a check (its memory
// reads a union with no cap), 22 cases reached 34.8 MB and listing them failed.
describe("a case seen again", () => {
  const bytesOf = (c: FailedTurnCase) => new TextEncoder().encode(JSON.stringify(c)).byteLength;
  /** Case `n` of exactly `target` bytes of JSON: as many long paths as fit, and an evidence ref padded to fill it. */
  const sized = (n: number, target: number): FailedTurnCase => {
    const withPaths = (k: number) =>
      makeCase(n, { paths: range(0, k).map((i) => `src/${String(i).padStart(3, "0")}/${"x".repeat(400)}.ts`) });
    let k = 1;
    while (bytesOf(withPaths(k + 1)) < target) k++;
    const base = withPaths(k);
    const c = { ...base, evidenceRefs: [`run:r_${n}:${"e".repeat(target - bytesOf(base) - 1)}`] };
    expect([bytesOf(c), c.evidenceRefs[0]!.length < 1000]).toEqual([target, true]);
    return c;
  };
  const totals = (sql: SqlStorage) =>
    sql
      .exec<{ n: number; bytes: number; actual: number }>(
        `SELECT COUNT(*) AS n, SUM(bytes) AS bytes, SUM(length(CAST(body AS BLOB))) AS actual FROM cases`,
      )
      .one();
  const reads = (tag: string, n: number) => range(0, n).map((i) => `${tag}-${i}-${"m".repeat(MAX_TRACE_ID_CHARS - 20)}`);

  it("grows within the bound: it evicts the least recently seen others (never itself), and keeps its newest brief case ids", async () => {
    await inProject("p_grow_live", async (o, state, ref) => {
      // 100 cases filling the budget to within 8 bytes.
      const each = Math.floor(MAX_PROJECT_CASE_BYTES / 100);
      const cases = range(0, 100).map((n) => sized(n, each));
      await record(o, ref, cases);
      expect(totals(state.storage.sql)).toEqual({ n: 100, bytes: 100 * each, actual: 100 * each });

      // The oldest case, seen in a new run that was given 30 briefs' cases: it keeps the newest 20 and evicts case 1.
      const again = (runId: string, memory: string[], at: number): FailedTurnCase => ({
        ...cases[0]!,
        memoryReadNodeIds: memory,
        lastSeenAt: new Date(T0 + at * 1000).toISOString(),
        origin: { ...cases[0]!.origin, runId },
      });
      await o.recordAttribution(ref, attribution(1000), again("r_again", reads("a", 30), 500));
      const first = o.getCase(cases[0]!.caseId)!;
      expect([first.occurrences, first.memoryReadNodeIds]).toEqual([2, reads("a", 30).slice(-MAX_CASE_MEMORY_READS)]);
      expect(ids(o).length).toBe(99);
      expect(range(0, 3).map((n) => ids(o).includes(cases[n]!.caseId))).toEqual([true, false, true]);
      let t = totals(state.storage.sql);
      expect([t.n, t.bytes, t.bytes <= MAX_PROJECT_CASE_BYTES, t.bytes - 98 * each]).toEqual([99, t.actual, true, bytesOf(first)]);

      // Seen again with 20 other ids: it replaces them, grows by nothing and evicts nothing.
      await o.recordAttribution(ref, attribution(1001), again("r_third", reads("b", MAX_CASE_MEMORY_READS), 501));
      expect([ids(o).length, o.getCase(cases[0]!.caseId)!.memoryReadNodeIds]).toEqual([99, reads("b", MAX_CASE_MEMORY_READS)]);

      // Filled up again (to within 8 bytes), with every other case relied on, it cannot grow: it keeps
      // what it held and only counts the run.
      await record(o, ref, [sized(100, MAX_PROJECT_CASE_BYTES - totals(state.storage.sql).bytes - 8)]);
      state.storage.sql.exec(
        `INSERT OR IGNORE INTO approvals (case_id, approved_by, note, approved_at) SELECT case_id, 'dana', '', '' FROM cases`,
      );
      const held = o.getCase(cases[0]!.caseId)!;
      const bigger = { ...again("r_fourth", reads("c", MAX_CASE_MEMORY_READS), 502), evidenceRefs: ["e".repeat(1000)] };
      await o.recordAttribution(ref, attribution(1002), bigger);
      expect(o.getCase(cases[0]!.caseId)).toEqual({ ...held, occurrences: 4, lastSeenAt: bigger.lastSeenAt });
      t = totals(state.storage.sql);
      expect([t.n, t.bytes, t.actual]).toEqual([100, MAX_PROJECT_CASE_BYTES - 8, MAX_PROJECT_CASE_BYTES - 8]);
    });
  });

  it("an import that makes an imported case grow evicts other imported cases, and counts them", async () => {
    await inProject("p_grow_import", async (o, state, ref) => {
      const failure = (runId: string, memory: string[][]) =>
        new TextEncoder().encode(
          [
            JSON.stringify({ type: "action", runId, actionId: "a1", tool: "write", writes: ["src/a.ts"] }),
            ...memory.map((caseIds) => JSON.stringify({ type: "memory_read", runId, caseIds })),
            JSON.stringify({ type: "judge_result", runId, judgeName: "ci", result: "fail", artifactRefs: ["src/a.ts"] }),
          ].join("\n"),
        );
      const [caseId] = unwrapResult(await o.importTraces(ref, failure("ext-1", []))).caseIds;
      const small = state.storage.sql.exec<{ bytes: number }>(`SELECT bytes FROM cases`).one().bytes;
      // 99 imported cases of the same size fill the rest, to within 99 bytes.
      const each = Math.floor((MAX_PROJECT_CASE_BYTES - small) / 99);
      await record(
        o,
        ref,
        range(0, 99).map((n) => ({ ...sized(n, each), imported: true })),
      );
      expect(totals(state.storage.sql).n).toBe(100);

      // Seen again in a run given 3 briefs of 50 cases each: the newest 20 of them, and two others go.
      const memory = range(0, 3).map((b) => reads(`b${b}`, 50));
      const second = unwrapResult(await o.importTraces(ref, failure("ext-2", memory)));
      expect([second.caseIds, second.casesNotKept, second.casesEvicted]).toEqual([[caseId], 0, 1]);
      const grown = o.getCase(caseId!)!;
      expect([grown.occurrences, grown.memoryReadNodeIds]).toEqual([2, memory.flat().slice(-MAX_CASE_MEMORY_READS)]);
      expect([ids(o).length, ids(o).includes(sized(0, each).caseId), ids(o).includes(sized(1, each).caseId)]).toEqual([99, false, true]);
      const t = totals(state.storage.sql);
      expect([t.bytes, t.bytes <= MAX_PROJECT_CASE_BYTES]).toEqual([t.actual, true]);
    });
  });

  it(`one case holds at most ${MAX_CASE_BYTES} bytes: its first artifact refs that fit`, async () => {
    await inProject("p_case_max", async (o, _state, ref) => {
      const paths = range(0, 150).map((i) => `src/${String(i).padStart(3, "0")}/${"y".repeat(3000)}.ts`);
      const c = makeCase(1, { paths });
      await record(o, ref, [c]);
      const stored = o.getCase(c.caseId)!;
      const k = stored.artifactRefs.length;
      const withRefs = (n: number) =>
        bytesOf({ ...c, artifactRefs: paths.slice(0, n), applicability: { ...c.applicability, pathGlobs: paths.slice(0, n) } });
      expect([
        stored.artifactRefs,
        stored.applicability.pathGlobs,
        withRefs(k) <= MAX_CASE_BYTES,
        withRefs(k + 1) > MAX_CASE_BYTES,
      ]).toEqual([paths.slice(0, k), paths.slice(0, k), true, true]);
      expect(k).toBe(Math.floor((MAX_CASE_BYTES - (bytesOf(c) - 150 * 2 * (paths[0]!.length + 3))) / (2 * (paths[0]!.length + 3))));
    });
  });

  it("cases stored larger before the bound: a page ends before 8 MiB, and reopened, each is bounded in place", async () => {
    await inProject("p_grow_legacy", async (o, state, ref) => {
      await record(o, ref, [makeCase(1), makeCase(2)]);
      const sql = state.storage.sql;
      // As an older version left them: 1.5 MB of memory reads each.
      const legacy = (n: number) => ({ ...makeCase(n), memoryReadNodeIds: reads(`l${n}`, 3000) });
      for (const n of [1, 2]) {
        const body = JSON.stringify(legacy(n));
        sql.exec(
          `UPDATE cases SET body = ?, bytes = ? WHERE case_id = ?`,
          body,
          new TextEncoder().encode(body).byteLength,
          makeCase(n).caseId,
        );
      }
      for (const n of range(3, 8)) {
        const body = JSON.stringify(legacy(n));
        sql.exec(
          `INSERT INTO cases (rowid, case_id, body, last_seen_at, imported, bytes) VALUES (?, ?, ?, ?, 0, ?)`,
          n,
          legacy(n).caseId,
          body,
          legacy(n).lastSeenAt,
          new TextEncoder().encode(body).byteLength,
        );
      }
      const each = bytesOf(legacy(3));
      const perPage = Math.floor(MAX_CASE_PAGE_BYTES / each);
      const first = o.listCases(50, null);
      expect([first.cases.map((c) => c.caseId), first.next]).toEqual([
        range(8 - perPage, 8)
          .reverse()
          .map((n) => makeCase(n).caseId),
        8 - perPage,
      ]);
      const rest = o.listCases(50, first.next);
      expect([rest.cases.map((c) => c.caseId), rest.next]).toEqual([
        range(1, 8 - perPage)
          .reverse()
          .map((n) => makeCase(n).caseId),
        null,
      ]);

      const reopened = new ProjectDO(state, env);
      const bounded = reopened.listCases(50, null).cases;
      expect(bounded).toEqual(
        range(1, 8)
          .reverse()
          .map((n) => ({ ...legacy(n), memoryReadNodeIds: reads(`l${n}`, 3000).slice(-MAX_CASE_MEMORY_READS) })),
      );
      expect(totals(sql).bytes).toBe(bounded.reduce((sum, c) => sum + bytesOf(c), 0));
    });
  });
});

describe("a page of cases as the API answers it", () => {
  it("is the JSON of the page, made as it is read; a project serves 4 at once, and one read to its end gives its place back", async () => {
    await inProject("p_case_pages", async (o, _state, ref) => {
      await record(
        o,
        ref,
        range(1, 6).map((n) => makeCase(n)),
      );
      const text = async (page: Awaited<ReturnType<ProjectDO["casesPage"]>>) => new Response(withoutEndMark(unwrapResult(page))).text();
      // What the route answered before it streamed: c.json of the page, byte for byte.
      const first = o.listCases(2, null);
      expect(await text(await o.casesPage(2, null))).toBe(
        JSON.stringify({ cases: first.cases, nextCursor: encodeCursor({ position: first.next! }) }),
      );
      const last = o.listCases(10, first.next);
      expect([last.cases.map((c) => c.caseId), last.next]).toEqual([
        range(1, 4)
          .reverse()
          .map((n) => makeCase(n).caseId),
        null,
      ]);
      expect(await text(await o.casesPage(10, first.next))).toBe(JSON.stringify({ cases: last.cases, nextCursor: null }));

      const open = [];
      for (let i = 0; i < 4; i++) open.push(unwrapResult(await o.casesPage(10, null)));
      expect(await o.casesPage(10, null)).toEqual({
        ok: false,
        code: "too_many_downloads",
        message: "the project is already serving 4 pages of its cases; retry once one of them has ended",
        retryAfterSeconds: undefined,
      });
      expect(JSON.parse(await new Response(withoutEndMark(open[0]!)).text()).cases).toHaveLength(5);
      const again = await o.casesPage(10, null);
      expect(again.ok).toBe(true);
      for (const page of [...open.slice(1), unwrapResult(again)]) await page.cancel();
    });
  });
});

describe("deleting a case", () => {
  it("takes what is kept about it; a replay's scorecard that arrives after is not kept", async () => {
    await inProject("p_delete_direct", async (o, state, ref) => {
      const c = makeCase(1);
      await record(o, ref, [c]);
      expect((await o.approve(ref, c.caseId, "dana", "")).ok).toBe(true);
      await o.recordScorecard(ref, card(c.caseId, "pending"), null);
      o.replayStarted(c.caseId);
      expect(await o.deleteCase(ref, c.caseId)).toBe(true);
      const left = (table: string) => state.storage.sql.exec(`SELECT COUNT(*) AS n FROM ${table} WHERE case_id = ?`, c.caseId).one().n;
      expect(["cases", "case_runs", "case_keys", "scorecards", "approvals", "replay_leases"].map(left)).toEqual([0, 0, 0, 0, 0, 0]);
      await o.recordScorecard(ref, card(c.caseId, "reproduced"), null);
      expect([o.scorecard(c.caseId), await o.deleteCase(ref, c.caseId)]).toEqual([null, false]);
      // A delivery of the same attribution again does not bring it back.
      await o.recordAttribution(ref, attribution(1), c);
      expect(o.getCase(c.caseId)).toBeNull();
    });
  });
});

describe("choosing a brief's cases", () => {
  const ctx = (over: Partial<BriefContext>): BriefContext => ({
    paths: [],
    offeredTools: ["read", "write", "edit"],
    deniedTools: [],
    retryOf: null,
    now: T0 + 86_400_000,
    ...over,
  });

  it("looks up only the cases a run's paths, denied tools or retried run name, and briefs as a scan of every case would", async () => {
    await inProject("p_brief_index", async (o, state, ref) => {
      const cases = [
        ...range(0, 300).map((n) => makeCase(n)),
        makeCase(300, { path: "src/d7" }),
        makeCase(301, { scope: "denied_tools", tools: ["bash"] }),
        makeCase(302, { scope: "retry" }),
        makeCase(303, { path: "src/d7/x.tsx" }),
      ];
      await record(o, ref, cases);
      const index = new CaseIndex(state.storage.sql);
      const id = (n: number) => makeCase(n).caseId;
      const contexts = [
        ctx({ paths: ["src/d7/x.ts"] }),
        ctx({ paths: ["src/d7/x.ts"], offeredTools: ["read"] }),
        ctx({ paths: ["src/d7"] }),
        ctx({ deniedTools: ["bash"] }),
        ctx({ retryOf: "r_302" }),
        ctx({ paths: ["docs/guide.md"] }),
      ];
      expect(contexts.map((c) => index.candidates(c))).toEqual([[id(7), id(300)], [id(7), id(300)], [id(300)], [id(301)], [id(302)], []]);
      for (const c of contexts) expect(o.brief(c)).toEqual(buildBrief(cases, new Map(), new Set(), { ...c, retriedCaseIds: [] }));
    });
  });

  it("an imported case reaches a brief once a person approved it (the project tells the brief which were)", async () => {
    await inProject("p_brief_approved", async (o, _state, ref) => {
      const imported = makeCase(1, { path: "src/i.ts", imported: true });
      await record(o, ref, [imported]);
      const run = ctx({ paths: ["src/i.ts"] });
      expect(o.brief(run)).toBeNull();
      expect((await o.approve(ref, imported.caseId, "dana", "")).ok).toBe(true);
      expect(o.brief(run)?.caseIds).toEqual([imported.caseId]);
    });
  });

  it("an object from before one approval per approver keeps each approver's latest approval of a case", async () => {
    await inProject("p_approvals_legacy", async (o, state, ref) => {
      const c = makeCase(1);
      await record(o, ref, [c]);
      state.storage.sql.exec(`DROP INDEX approvals_by_approver`);
      for (const [by, note] of [
        ["dana", "1"],
        ["eve", "2"],
        ["dana", "3"],
        ["dana", "4"],
      ])
        state.storage.sql.exec(`INSERT INTO approvals (case_id, approved_by, note, approved_at) VALUES (?, ?, ?, '')`, c.caseId, by, note);
      new ProjectDO(state, env);
      const rows = state.storage.sql
        .exec<{ approved_by: string; note: string }>(`SELECT approved_by, note FROM approvals ORDER BY rowid`)
        .toArray()
        .map((r) => `${r.approved_by}:${r.note}`);
      expect(rows).toEqual(["eve:2", "dana:4"]);
    });
  });

  it("a case stored before its runs were kept still knows its origin run: seen there again, it counts once and keeps its origin", async () => {
    await inProject("p_case_runs_legacy", async (o, state, ref) => {
      const old = makeCase(1);
      await record(o, ref, [old]);
      state.storage.sql.exec(`DROP TABLE case_runs`);
      const reopened = new ProjectDO(state, env);
      const again: FailedTurnCase = {
        ...old,
        failureEventId: "jd_again",
        evidenceRefs: ["run:r_1", "judgement:jd_again"],
        lastSeenAt: new Date(T0 + 60_000).toISOString(),
      };
      await reopened.recordAttribution(ref, attribution(101), again);
      const stored = reopened.listCases(10, null).cases;
      expect(stored.map((c) => [c.occurrences, c.origin.runId, c.failureEventId])).toEqual([[1, "r_1", "jd_1"]]);
    });
  });

  it("a case stored with an older version's wording is promoted with today's: the rule is written from its facts", async () => {
    await inProject("p_old_hint", async (o, _state, ref) => {
      // makeCase's hint is worded as before hunt 30: names and paths unquoted.
      const old = makeCase(1);
      await record(o, ref, [old]);
      expect((await o.approve(ref, old.caseId, "dana", "")).ok).toBe(true);
      const promoted = unwrapResult(await o.promote(ref, old.caseId, true));
      expect([old.preventionHint, promoted.rule, o.memory().map((r) => r.rule)]).toEqual([
        "Run ci again on src/d1/x.ts after changing it (case 1).",
        "Run `ci` again on `src/d1/x.ts` after any change to it: it failed a run on it.",
        ["Run `ci` again on `src/d1/x.ts` after any change to it: it failed a run on it."],
      ]);
    });
  });

  it("indexes the cases stored before the index existed", async () => {
    await inProject("p_brief_legacy", async (o, state, ref) => {
      await record(o, ref, [makeCase(1), makeCase(2, { path: "lib" })]);
      const sql = state.storage.sql;
      sql.exec(`DROP TABLE case_keys`);
      sql.exec(`DROP INDEX cases_by_eviction`);
      sql.exec(`ALTER TABLE cases DROP COLUMN imported`);
      sql.exec(`ALTER TABLE cases DROP COLUMN bytes`);
      const reopened = new ProjectDO(state, env);
      expect(reopened.brief(ctx({ paths: ["lib/a.ts"] }))?.caseIds).toEqual([makeCase(2).caseId]);
      const rows = sql.exec<{ imported: number; bytes: number }>(`SELECT imported, bytes FROM cases ORDER BY case_id`).toArray();
      expect(rows).toEqual(
        [1, 2].map((n) => ({
          imported: 0,
          bytes: new TextEncoder().encode(JSON.stringify(makeCase(n, n === 2 ? { path: "lib" } : {}))).byteLength,
        })),
      );
    });
  });
});

describe("the R2 mirror", () => {
  it(`writes cases and scorecards once, from the alarm, within ${MIRROR_DELAY_MS} ms of the first change; also after a restart`, async () => {
    const P = "p_mirror_alarm";
    const { ref, stub } = project(P);
    const key = `${projectPrefix(ref)}/cases.jsonl`;
    const alarm = await inProject(P, async (o, state) => {
      const before = Date.now();
      await record(o, ref, [makeCase(1)]);
      const after = Date.now();
      const at = (await state.storage.getAlarm())!;
      expect([at >= before + MIRROR_DELAY_MS, at <= after + MIRROR_DELAY_MS]).toEqual([true, true]);
      await record(o, ref, [makeCase(2), makeCase(3)]);
      expect(await state.storage.getAlarm()).toBe(at);
      return at;
    });
    expect([alarm !== null, await env.STORE.get(key)]).toEqual([true, null]);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const lines = async () =>
      (await (await env.STORE.get(key))!.text())
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as FailedTurnCase).caseId);
    expect(await lines()).toEqual([3, 2, 1].map((n) => makeCase(n).caseId));
    expect(await (await env.STORE.get(`${projectPrefix(ref)}/scorecards.jsonl`))!.text()).toBe("");

    await inProject(P, (o) => record(o, ref, [makeCase(4)]));
    await abortAllDurableObjects();
    // A stub of before the restart is broken: a new one reaches the object as it comes back.
    const restarted = project(P).stub;
    expect(await runDurableObjectAlarm(restarted)).toBe(true);
    expect(await lines()).toEqual([4, 3, 2, 1].map((n) => makeCase(n).caseId));
    expect(await runDurableObjectAlarm(restarted)).toBe(false);
  });

  it("a write that fails stays due and sets the alarm again", async () => {
    await inProject("p_mirror_retry", async (_o, state, ref) => {
      const puts: string[] = [];
      let failures = 1;
      const store = {
        put: async (k: string) => {
          if (failures-- > 0) throw new Error("R2 is down");
          puts.push(k);
          return {} as R2Object;
        },
      } as unknown as R2Bucket;
      const mirror = new ProjectMirror(state.storage, store, () => ["{}"]);
      await mirror.changed(ref);
      await state.storage.deleteAlarm();
      const cases = `${projectPrefix(ref)}/cases.jsonl`;
      await mirror.flush();
      expect([puts.includes(cases), (await state.storage.getAlarm()) !== null]).toEqual([false, true]);
      await mirror.flush();
      expect(puts.filter((k) => k === cases).length).toBe(1);
      // Written: nothing is due any more.
      await mirror.flush();
      expect(puts.filter((k) => k === cases).length).toBe(1);
    });
  });
});
