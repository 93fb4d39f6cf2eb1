import { describe, expect, it } from "vitest";
import { casesOf, client, model, openSession, post, prompt, uploadWorkspace } from "./harness";

/**
 * What a judged failure teaches, and to which later runs: the case an external verdict becomes when
 * it names the failing test rather than the change, when it names nothing, when the run only read,
 * when the shell lacked a command, and when the provider never answered.
 */

const api = client();

type Case = {
  caseId: string;
  artifactRefs: string[];
  preventionHint: string;
  applicability: { tools: string[]; pathGlobs: string[]; scope: string; failureClass: string };
};

const editMath = model.tools({ id: "e1", name: "edit", args: { path: "src/math.ts", oldText: "a + b", newText: "a - b" } });

async function judge(sessionId: string, runId: string, verdict: Record<string, unknown>): Promise<void> {
  const res = await api(`/api/sessions/${sessionId}/judgements`, post({ runId, judgeName: "ci", result: "fail", ...verdict }));
  expect(res.status).toBe(201);
}

/** Whether a run in the project with this prompt and these permissions starts with a brief. */
async function briefed(workspaceId: string, projectId: string, body: Record<string, unknown>): Promise<boolean> {
  const { sessionId } = await openSession(api, { workspaceId, projectId, answers: [model.text("ok")] });
  const { frames } = await prompt(api, sessionId, body);
  return frames.some((f) => f.data.type === "brief_injected");
}

describe("the case an external verdict becomes", () => {
  it("CI names the failing test: the case is about the file the run changed, and reaches runs that may change it", async () => {
    const P = "p_verdict_test_named";
    const workspaceId = await uploadWorkspace(api);
    const read = model.tools({ id: "r1", name: "read", args: { path: "test/math.test.js" } });
    const { sessionId } = await openSession(api, { workspaceId, projectId: P, answers: [read, editMath, model.text("done")] });
    const { runId } = await prompt(api, sessionId, { text: "make add faster", allowWrite: true });
    await judge(sessionId, runId, { artifactRefs: ["test/math.test.js"], detail: "add(2, 2) returned 0" });

    const [found] = (await casesOf(api, P)) as unknown as Case[];
    expect([found!.artifactRefs, found!.applicability, found!.preventionHint]).toEqual([
      ["src/math.ts"],
      { tools: ["edit"], pathGlobs: ["src/math.ts"], failureClass: "agent", scope: "paths" },
      "Run `ci` again on `src/math.ts` after any change to it: it failed a run on it.",
    ]);
    expect(await briefed(workspaceId, P, { text: "please fix the bug in src/math.ts", allowWrite: true })).toBe(true);
    expect(await briefed(workspaceId, P, { text: "explain what test/math.test.js checks" })).toBe(false);
    expect(await briefed(workspaceId, P, { text: "explain src/math.ts" })).toBe(false);
  });

  it("a verdict that names no file, on a run that changed nothing, teaches its retries only, in words that name no file", async () => {
    const P = "p_verdict_nothing";
    const workspaceId = await uploadWorkspace(api);
    const read = model.tools({ id: "r1", name: "read", args: { path: "src/util.ts" } });
    const { sessionId } = await openSession(api, { workspaceId, projectId: P, answers: [read, model.text("done")] });
    const { runId } = await prompt(api, sessionId, { text: "look around" });
    await judge(sessionId, runId, { artifactRefs: [] });

    const [found] = (await casesOf(api, P)) as unknown as Case[];
    expect([found!.applicability.scope, found!.applicability.pathGlobs, found!.preventionHint]).toEqual([
      "retry",
      [],
      "Check your work against `ci` before you finish: it failed the attempt this run retries.",
    ]);
  });

  it("a verdict on what a read-only run concluded from a file asks the next run to check that file, not to re-run after a change", async () => {
    const P = "p_verdict_read";
    const workspaceId = await uploadWorkspace(api);
    const read = model.tools({ id: "r1", name: "read", args: { path: "src/util.ts" } });
    const { sessionId } = await openSession(api, { workspaceId, projectId: P, answers: [read, model.text("clamp rounds")] });
    const { runId } = await prompt(api, sessionId, { text: "what does clamp do?" });
    const res = await api(
      `/api/sessions/${sessionId}/judgements`,
      post({ runId, judgeName: "review", result: "fail", artifactRefs: ["src/util.ts"] }),
    );
    expect(res.status).toBe(201);

    const [found] = (await casesOf(api, P)) as unknown as Case[];
    expect(found!.preventionHint).toBe(
      "Check what you conclude from `src/util.ts` against it before you answer: `review` failed a run that read it.",
    );
  });

  it("a write that did not happen is not blamed: a failed edit after the breaking write, a denied write before a read (hunt 95)", async () => {
    const P = "p_verdict_planned";
    const workspaceId = await uploadWorkspace(api);
    const write = model.tools({ id: "w1", name: "write", args: { path: "src/math.ts", content: "export const add = (a, b) => a - b;\n" } });
    const failedEdit = model.tools({ id: "e1", name: "edit", args: { path: "src/math.ts", oldText: "no such text", newText: "x" } });
    const ciCases = async (atLeast: number) =>
      ((await casesOf(api, P, atLeast)) as unknown as (Case & { occurrences: number; origin: { judgeName: string } })[]).filter(
        (c) => c.origin.judgeName === "ci",
      );
    // The same breaking write, with and without a failed edit after it: one failure, one case.
    for (const answers of [
      [write, failedEdit, model.text("done")],
      [write, model.text("done")],
    ]) {
      const { sessionId } = await openSession(api, { workspaceId, projectId: P, answers });
      const { runId } = await prompt(api, sessionId, { text: "make add faster", allowWrite: true });
      await judge(sessionId, runId, { artifactRefs: ["src/math.ts"] });
    }
    const [ci] = await ciCases(2);
    expect([ci!.occurrences, ci!.applicability.tools, ci!.preventionHint]).toEqual([
      2,
      ["write"],
      "Run `ci` again on `src/math.ts` after any change to it: it failed a run on it.",
    ]);

    // A read-only run whose write was denied, then read the file: the review judged what it read.
    const R = "p_verdict_denied";
    const { sessionId } = await openSession(api, {
      workspaceId,
      projectId: R,
      answers: [write, model.tools({ id: "r1", name: "read", args: { path: "src/math.ts" } }), model.text("add subtracts")],
    });
    const { runId } = await prompt(api, sessionId, { text: "what does add do?" });
    const res = await api(
      `/api/sessions/${sessionId}/judgements`,
      post({ runId, judgeName: "review", result: "fail", artifactRefs: ["src/math.ts"] }),
    );
    expect(res.status).toBe(201);
    const { attribution } = (await res.json()) as { attribution: { rule: string } };
    expect(attribution.rule).toBe("read_artifact");
    const review = ((await casesOf(api, R, 2)) as unknown as (Case & { origin: { judgeName: string } })[]).find(
      (c) => c.origin.judgeName === "review",
    );
    expect([review!.applicability.tools, review!.preventionHint]).toEqual([
      ["read"],
      "Check what you conclude from `src/math.ts` against it before you answer: `review` failed a run that read it.",
    ]);
  });

  it("CI jobs that see one failure add occurrences to one case; the jobs' refs are its evidence (hunt 95)", async () => {
    const P = "p_verdict_jobs";
    const workspaceId = await uploadWorkspace(api);
    for (const refs of [
      ["src/math.ts", "ci:job-12"],
      ["ci:job-13", "src/math.ts", "ci:job-13"],
    ]) {
      const { sessionId } = await openSession(api, { workspaceId, projectId: P, answers: [editMath, model.text("done")] });
      const { runId } = await prompt(api, sessionId, { text: "make add faster", allowWrite: true });
      await judge(sessionId, runId, { artifactRefs: refs });
    }
    const cases = (await casesOf(api, P)) as unknown as (Case & { occurrences: number; evidenceRefs: string[] })[];
    expect(cases.map((c) => [c.occurrences, c.artifactRefs])).toEqual([[2, ["src/math.ts"]]]);
    expect(cases[0]!.evidenceRefs.filter((ref) => ref.startsWith("ci:"))).toEqual(["ci:job-12", "ci:job-13"]);
  });

  it("a command the shell lacks (exit 127) is a case about the command, for retries only, not about the files the line read", async () => {
    const P = "p_verdict_127";
    const workspaceId = await uploadWorkspace(api);
    const bash = model.tools({ id: "b1", name: "bash", args: { command: "cat src/math.ts && node test/math.test.js" } });
    const { sessionId } = await openSession(api, { workspaceId, projectId: P, answers: [bash, model.text("done")] });
    await prompt(api, sessionId, { text: "run the tests", allowBash: true });

    const [found] = (await casesOf(api, P)) as unknown as Case[];
    expect([found!.artifactRefs, found!.applicability, found!.preventionHint]).toEqual([
      ["tool:bash"],
      { tools: ["bash"], pathGlobs: [], failureClass: "agent", scope: "retry" },
      "Use only the commands the bash tool's description lists: a command the failed attempt called does not exist in this shell.",
    ]);
    expect(await briefed(workspaceId, P, { text: "run the tests for src/math.ts", allowBash: true })).toBe(false);
  });

  it("a run whose provider never answered teaches nothing: neither its timeout nor a CI verdict on it becomes a case", async () => {
    const P = "p_verdict_silent";
    const workspaceId = await uploadWorkspace(api);
    const { sessionId } = await openSession(api, { workspaceId, projectId: P, answers: [model.silent()] });
    const { runId, frames } = await prompt(api, sessionId, { text: "fix src/math.ts", allowWrite: true, timeoutMs: 1000 });
    expect(frames.at(-1)!.data).toMatchObject({
      type: "agent_error",
      code: "run_timeout",
      message: "the run did not finish within 1000 ms: the provider sent nothing of its answer in that time",
    });
    await judge(sessionId, runId, { artifactRefs: ["src/math.ts"] });

    const attributions = (await (await api(`/api/sessions/${sessionId}/attributions`)).json()) as {
      attributions: { judgeName: string; failureKind: string; classification: string; caseId: string | null }[];
    };
    expect(attributions.attributions.map((a) => [a.judgeName, a.failureKind, a.classification, a.caseId])).toEqual([
      ["model-error", "provider_timeout", "environment", null],
      ["run-limit", "run_timeout", "environment", null],
      ["ci", "external", "environment", null],
    ]);
    expect(((await (await api(`/api/projects/${P}/cases`)).json()) as { cases: unknown[] }).cases).toEqual([]);
  });

  it("a run whose time ran out while the provider was sending a tool call is not a silent provider's (hunt 105)", async () => {
    const P = "p_verdict_slow_call";
    const workspaceId = await uploadWorkspace(api);
    const { sessionId } = await openSession(api, { workspaceId, projectId: P, answers: [model.stalledCall()] });
    const { frames } = await prompt(api, sessionId, { text: "write big.txt", allowWrite: true, timeoutMs: 1000 });
    expect(frames.at(-1)!.data).toMatchObject({
      type: "agent_error",
      code: "run_timeout",
      message: "the run did not finish within 1000 ms",
    });
    const attributions = (await (await api(`/api/sessions/${sessionId}/attributions`)).json()) as {
      attributions: { judgeName: string; failureKind: string; classification: string }[];
    };
    // The run's own limit, the agent's (its answer was too slow), not the provider's silence (`provider_timeout`, environment).
    expect(attributions.attributions.map((a) => [a.judgeName, a.failureKind, a.classification])).toEqual([
      ["run-limit", "run_timeout", "agent"],
    ]);
  });
});

describe("the case an imported trace's verdict becomes", () => {
  async function importLines(projectId: string, lines: unknown[]): Promise<void> {
    const res = await api(`/api/projects/${projectId}/traces`, {
      method: "POST",
      headers: { "content-type": "application/x-ndjson" },
      body: lines.map((l) => JSON.stringify(l)).join("\n"),
    });
    expect(res.status).toBe(201);
  }

  it("blames the foreign run's write: its observations hold an exit code at most, its actions the files (hunt 96)", async () => {
    const P = "p_verdict_import_writes";
    await openSession(api, { projectId: P });
    await importLines(P, [
      { type: "action", run_id: "ext-1", action_id: "a1", tool: "edit", writes: ["app/main.py"] },
      { type: "observation", run_id: "ext-1", action_id: "a1", exit_code: 0, summary: "edited" },
      { type: "action", run_id: "ext-1", action_id: "a2", tool: "read", reads: ["app/main.py"] },
      { type: "observation", run_id: "ext-1", action_id: "a2", exit_code: 0, summary: "read" },
      { type: "judge_result", run_id: "ext-1", judge_name: "pytest", result: "failed", artifact_refs: ["app/main.py"] },
      // A write with no observation, then the test command that failed.
      { type: "action", run_id: "ext-2", action_id: "b1", tool: "write", writes: ["app/util.py"] },
      { type: "action", run_id: "ext-2", action_id: "b2", tool: "bash", command: "pytest -q" },
      { type: "observation", run_id: "ext-2", action_id: "b2", exit_code: 1, summary: "1 failed" },
      { type: "judge_result", run_id: "ext-2", judge_name: "pytest", result: "failed", artifact_refs: ["app/util.py"] },
    ]);
    const cases = (await casesOf(api, P, 2)) as unknown as Case[];
    expect(cases.map((c) => [c.artifactRefs, c.applicability.tools, c.preventionHint]).sort()).toEqual([
      [["app/main.py"], ["edit"], "Run `pytest` again on `app/main.py` after any change to it: it failed a run on it."],
      [["app/util.py"], ["write"], "Run `pytest` again on `app/util.py` after any change to it: it failed a run on it."],
    ]);
  });
});

describe("approvals", () => {
  it("a case's approvals can be read back, one per name, the latest first", async () => {
    const P = "p_verdict_approvals";
    const workspaceId = await uploadWorkspace(api);
    const { sessionId } = await openSession(api, { workspaceId, projectId: P, answers: [editMath, model.text("done")] });
    const { runId } = await prompt(api, sessionId, { text: "change add", allowWrite: true });
    await judge(sessionId, runId, { artifactRefs: ["src/math.ts"] });
    const [found] = await casesOf(api, P);
    const detail = async () =>
      ((await (await api(`/api/projects/${P}/cases/${found!.caseId}`)).json()) as { approvals: { approvedBy: string; note: string }[] })
        .approvals;
    expect(await detail()).toEqual([]);
    for (const [approvedBy, note] of [
      ["dana", "first look"],
      ["eve", "agreed"],
      ["dana", "checked again"],
    ]) {
      expect((await api(`/api/projects/${P}/cases/${found!.caseId}/approve`, post({ approvedBy, note }))).status).toBe(201);
      await new Promise((r) => setTimeout(r, 5));
    }
    expect((await detail()).map((a) => [a.approvedBy, a.note])).toEqual([
      ["dana", "checked again"],
      ["eve", "agreed"],
    ]);
    // A name is one line, as a judge's is (hunt 95: "a\nb" was stored and shown).
    for (const approvedBy of ["a\nb", " dana", "\u202eana", ""]) {
      const res = await api(`/api/projects/${P}/cases/${found!.caseId}/approve`, post({ approvedBy }));
      expect([approvedBy, res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([
        approvedBy,
        400,
        "invalid_body",
      ]);
    }
    expect((await detail()).map((a) => a.approvedBy)).toEqual(["dana", "eve"]);
  });
});
