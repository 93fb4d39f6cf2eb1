import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { projectObjectName } from "../../src/awtl/project-api";
import { projectPrefix } from "../../src/awtl/project-do";
import { MAX_APPROVERS_PER_CASE, MAX_PROJECT_CASES } from "../../src/domain";
import { casesOf, client, model, openSession, post, prompt, uploadWorkspace } from "./harness";

/** A project's cases over HTTP: pages, deletion, and the bound as an import meets it. */

const api = client();

type Case = { caseId: string; occurrences: number; origin: { judgeName: string } };
type Page = { cases: Case[]; nextCursor: string | null };

async function errorOf(res: Response): Promise<[number, string]> {
  return [res.status, ((await res.json()) as { error: { code: string } }).error.code];
}

/** Imports one foreign run that fails one judge per name, each on its own file: a new case per name. */
async function importFailures(projectId: string, runId: string, names: string[]) {
  const lines = [JSON.stringify({ type: "action", runId, actionId: "a1", tool: "write", writes: ["src/a.ts"] })];
  for (const name of names)
    lines.push(JSON.stringify({ type: "judge_result", runId, judgeName: name, result: "fail", artifactRefs: [`src/${name}.ts`] }));
  const res = await api(`/api/projects/${projectId}/traces`, {
    method: "POST",
    headers: { "content-type": "application/x-ndjson" },
    body: lines.join("\n"),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { caseIds: string[]; casesNotKept: number; casesEvicted: number };
}

async function page(projectId: string, query: string): Promise<Page> {
  const res = await api(`/api/projects/${projectId}/cases${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Page;
}

async function allCases(projectId: string): Promise<Case[]> {
  const all: Case[] = [];
  let cursor: string | null = null;
  do {
    const next: Page = await page(projectId, `?limit=200${cursor ? `&cursor=${cursor}` : ""}`);
    all.push(...next.cases);
    cursor = next.nextCursor;
  } while (cursor);
  return all;
}

const names = (cases: Case[]) => cases.map((c) => c.origin.judgeName);

let workspaceId = "";
beforeAll(async () => {
  workspaceId = await uploadWorkspace(api);
});

/** A run in `projectId` whose edit of src/math.ts the judge "ci" fails: one live case. */
async function failedEdit(projectId: string) {
  const { sessionId } = await openSession(api, {
    workspaceId,
    projectId,
    answers: [
      model.tools({ id: "e1", name: "edit", args: { path: "src/math.ts", oldText: "a + b", newText: "a - b" } }),
      model.text("done"),
    ],
  });
  const { runId } = await prompt(api, sessionId, { text: "edit add", allowWrite: true });
  const res = await api(
    `/api/sessions/${sessionId}/judgements`,
    post({ runId, judgeName: "ci", result: "fail", artifactRefs: ["src/math.ts"] }),
  );
  expect(res.status).toBe(201);
  const { attribution } = (await res.json()) as { attribution: { caseId: string } };
  for (let i = 0; i < 100 && (await api(`/api/projects/${projectId}/cases/${attribution.caseId}`)).status !== 200; i++)
    await new Promise((r) => setTimeout(r, 20));
  return { sessionId, caseId: attribution.caseId };
}

describe("GET /api/projects/:pid/cases", () => {
  it("pages newest first without gaps or repeats; a case added meanwhile stays off later pages, one seen again keeps its place", async () => {
    const P = "p_case_pages";
    await openSession(api, { projectId: P });
    await importFailures(P, "ext-1", ["j0", "j1", "j2", "j3", "j4", "j5", "j6"]);

    const first = await page(P, "?limit=3");
    expect(names(first.cases)).toEqual(["j6", "j5", "j4"]);
    expect(first.nextCursor).toEqual(expect.any(String));
    // Meanwhile: a new case, and j2 seen again in another run.
    await importFailures(P, "ext-2", ["j7", "j2"]);
    const second = await page(P, `?limit=3&cursor=${first.nextCursor}`);
    expect([names(second.cases), second.cases.map((c) => c.occurrences)]).toEqual([
      ["j3", "j2", "j1"],
      [1, 2, 1],
    ]);
    const third = await page(P, `?limit=3&cursor=${second.nextCursor}`);
    expect([names(third.cases), third.nextCursor]).toEqual([["j0"], null]);

    const fresh = await page(P, "");
    expect([names(fresh.cases), fresh.nextCursor]).toEqual([["j7", "j6", "j5", "j4", "j3", "j2", "j1", "j0"], null]);
  });

  it("refuses a cursor it did not hand out and a limit outside 1-200", async () => {
    const P = "p_case_pages_bad";
    await openSession(api, { projectId: P });
    expect(await errorOf(await api(`/api/projects/${P}/cases?cursor=nope`))).toEqual([400, "invalid_cursor"]);
    for (const query of ["limit=0", "limit=201", "limit=ten", "limit=2&after=1"])
      expect(await errorOf(await api(`/api/projects/${P}/cases?${query}`)), query).toEqual([400, "invalid_query"]);
    expect(await errorOf(await api("/api/projects/p_never_named_here/cases?limit=2"))).toEqual([404, "project_not_found"]);
  });
});

describe("POST /api/projects/:pid/cases/:caseId/approve", () => {
  it("keeps one approval per approver (the latest) and the latest 20 approvers of a case", async () => {
    const P = "p_case_approvals";
    const { caseId } = await failedEdit(P);
    for (let i = 0; i < 3; i++)
      expect((await api(`/api/projects/${P}/cases/${caseId}/approve`, post({ approvedBy: "dana", note: `n${i}` }))).status).toBe(201);
    const rows = () =>
      runInDurableObject(env.PROJECTS.getByName(projectObjectName({ tenant: null, projectId: P })), async (_o, state) =>
        state.storage.sql
          .exec<{ approved_by: string; note: string }>(`SELECT approved_by, note FROM approvals ORDER BY rowid`)
          .toArray()
          .map((r) => `${r.approved_by}:${r.note}`),
      );
    expect(await rows()).toEqual(["dana:n2"]);
    for (let i = 0; i < 25; i++) await api(`/api/projects/${P}/cases/${caseId}/approve`, post({ approvedBy: `a${i}` }));
    const kept = await rows();
    expect(kept.length).toBe(MAX_APPROVERS_PER_CASE);
    expect(kept).toEqual(Array.from({ length: 20 }, (_, i) => `a${i + 5}:`));
    expect((await api(`/api/projects/${P}/memory/promote`, post({ caseId, write: true }))).status).toBe(201);
  });
});

describe("DELETE /api/projects/:pid/cases/:caseId", () => {
  it("removes the case, its approval, scorecard and memory rule (and the rule's mirror); then 404; the failure makes it again", async () => {
    const P = "p_case_delete";
    const { caseId } = await failedEdit(P);
    expect((await api(`/api/projects/${P}/cases/${caseId}/approve`, post({ approvedBy: "dana" }))).status).toBe(201);
    expect((await api(`/api/projects/${P}/memory/promote`, post({ caseId, write: true }))).status).toBe(201);
    const mirror = async () =>
      (await (await env.STORE.get(`${projectPrefix({ tenant: null, projectId: P })}/memory.jsonl`))!.text()).trim();
    expect(JSON.parse(await mirror())).toMatchObject({ caseId });

    const deleted = await api(`/api/projects/${P}/cases/${caseId}`, { method: "DELETE" });
    expect([deleted.status, await deleted.text()]).toEqual([204, ""]);
    expect(await errorOf(await api(`/api/projects/${P}/cases/${caseId}`))).toEqual([404, "case_not_found"]);
    expect(await page(P, "")).toEqual({ cases: [], nextCursor: null });
    expect(await (await api(`/api/projects/${P}/memory`)).json()).toEqual({ rules: [] });
    expect(await mirror()).toBe("");
    // As a session's delete: a second one is 404.
    expect(await errorOf(await api(`/api/projects/${P}/cases/${caseId}`, { method: "DELETE" }))).toEqual([404, "case_not_found"]);
    expect(await errorOf(await api(`/api/projects/${P}/cases/${caseId}/approve`, post({ approvedBy: "dana" })))).toEqual([
      404,
      "case_not_found",
    ]);

    // A run that names the file gets no brief from it any more.
    const { sessionId } = await openSession(api, { workspaceId, projectId: P, answers: [model.text("ok")] });
    const { frames } = await prompt(api, sessionId, { text: "fix src/math.ts", allowWrite: true });
    expect(frames.map((f) => f.data.type)).not.toContain("brief_injected");

    // The same failure in a new run is a new sighting: the case comes back, unapproved, seen once.
    const again = await failedEdit(P);
    expect(again.caseId).toBe(caseId);
    expect((await casesOf(api, P)).map((c) => [c.caseId, c.occurrences])).toEqual([[caseId, 1]]);
    expect(await (await api(`/api/projects/${P}/memory/promote`, post({ caseId, write: true }))).status).toBe(409);
  });

  it("an unknown case or project id is refused", async () => {
    await openSession(api, { projectId: "p_case_delete_bad" });
    expect(await errorOf(await api("/api/projects/p_case_delete_bad/cases/cs_none", { method: "DELETE" }))).toEqual([
      404,
      "case_not_found",
    ]);
    expect(await errorOf(await api("/api/projects/nope/cases/cs_none", { method: "DELETE" }))).toEqual([400, "invalid_project_id"]);
  });
});

describe("the bound on a project's cases, as an import meets it", () => {
  it(`an import keeps ${MAX_PROJECT_CASES} cases and counts the rest; a later one evicts the least recently seen imported cases; a live case evicts one too`, async () => {
    const P = "p_case_bound";
    await openSession(api, { projectId: P });
    const many = Array.from({ length: MAX_PROJECT_CASES + 10 }, (_, i) => `k${i}`);
    const first = await importFailures(P, "ext-1", many);
    expect([first.caseIds.length, first.casesNotKept, first.casesEvicted]).toEqual([MAX_PROJECT_CASES, 10, 0]);
    const kept = await allCases(P);
    expect(new Set(kept.map((c) => c.caseId)).size).toBe(MAX_PROJECT_CASES);
    // The first ones of the import were kept, in order.
    expect(names(kept).reverse()).toEqual(many.slice(0, MAX_PROJECT_CASES));

    // All seen at the same time: the least recently seen are the smallest case ids.
    const oldest = [...first.caseIds].sort();
    const second = await importFailures(P, "ext-2", ["n0", "n1", "n2", "n3", "n4"]);
    expect([second.caseIds.length, second.casesNotKept, second.casesEvicted]).toEqual([5, 0, 5]);
    let ids = new Set((await allCases(P)).map((c) => c.caseId));
    expect([ids.size, oldest.slice(0, 5).filter((id) => ids.has(id)), ids.has(oldest[5]!)]).toEqual([MAX_PROJECT_CASES, [], true]);

    // A case of the project's own runs goes before imported ones: it evicts the next oldest.
    const { caseId } = await failedEdit(P);
    ids = new Set((await allCases(P)).map((c) => c.caseId));
    expect([ids.size, ids.has(caseId), ids.has(oldest[5]!), ids.has(oldest[6]!)]).toEqual([MAX_PROJECT_CASES, true, false, true]);
  });
});
