import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BRIEF_HEADER } from "../../src/awtl";
import { projectPrefix } from "../../src/awtl/project-do";
import { actionOfCall, casesOf, client, model, openSession, post, prompt, systemPromptOf, traceOf, uploadWorkspace } from "./harness";

const api = client();
const P = "p_calc";

/**
 * The failure-learning loop as a user drives it over HTTP: a run's edit breaks a test; CI posts a
 * failing judgement; a case appears; the next run on that file gets the brief; a replay passes; the
 * case is promoted; a run on an unrelated file gets no brief.
 */
describe("the failure-learning loop, end to end", () => {
  it("learns from a judged failure and warns the next run on that file only", async () => {
    const workspaceId = await uploadWorkspace(api);

    // 1. The agent "simplifies" add() and breaks it.
    const first = await openSession(api, {
      workspaceId,
      projectId: P,
      answers: [
        model.tools({ id: "r1", name: "read", args: { path: "src/math.ts" } }),
        model.tools({ id: "e1", name: "edit", args: { path: "src/math.ts", oldText: "return a + b;", newText: "return a - b;" } }),
        model.text("Simplified add."),
      ],
    });
    const broken = await prompt(api, first.sessionId, { text: "tidy up src/math.ts", allowWrite: true });
    expect(broken.frames.at(-1)!.data.type).toBe("agent_completed");
    const diff = await (await api(`/api/sessions/${first.sessionId}/changes`)).text();
    expect(diff).toContain("-  return a + b;\n+  return a - b;");

    // 2. CI applies /changes, runs the tests, and posts the failure.
    const judged = await api(
      `/api/sessions/${first.sessionId}/judgements`,
      post({
        runId: broken.runId,
        judgeName: "ci",
        result: "fail",
        artifactRefs: ["src/math.ts"],
        detail: "test/math.test.js: add(2, 2) returned 0",
      }),
    );
    expect(judged.status).toBe(201);
    const { attribution } = (await judged.json()) as {
      attribution: { sourceActionIds: string[]; touchedActionIds: string[]; classification: string; rule: string; caseId: string };
    };
    const trace = await traceOf(api, first.sessionId);
    expect(attribution).toMatchObject({
      sourceActionIds: [actionOfCall(trace, "e1")],
      touchedActionIds: [actionOfCall(trace, "r1")],
      classification: "agent",
      rule: "wrote_artifact",
    });

    // 3. A case appears: compact, with an imperative hint about the file and no raw logs.
    const [found] = await casesOf(api, P);
    expect(found!.caseId).toBe(attribution.caseId);
    expect(found).toMatchObject({ artifactRefs: ["src/math.ts"], occurrences: 1, imported: false });
    expect(found!.preventionHint).toContain("src/math.ts");
    expect(found!.preventionHint).not.toContain("add(2, 2) returned 0");

    // 4. The next run on that file gets the brief, in the system prompt, as an event and in the trace.
    const next = await openSession(api, { workspaceId, projectId: P, answers: [model.text("I will run the tests after editing.")] });
    const warned = await prompt(api, next.sessionId, { text: "add a sub() function to src/math.ts", allowWrite: true });
    expect(warned.frames.map((f) => f.data.type).slice(0, 3)).toEqual(["agent_started", "user_message_appended", "brief_injected"]);
    expect(warned.frames[2]!.data).toMatchObject({ runId: warned.runId, caseIds: [found!.caseId] });
    const system = systemPromptOf(next.log, 0);
    expect(system.endsWith(`\n\n${BRIEF_HEADER}\n- ${found!.preventionHint}`)).toBe(true);
    const reads = (await traceOf(api, next.sessionId)).filter((r) => r.type === "memory_read");
    expect(reads).toMatchObject([{ runId: warned.runId, caseIds: [found!.caseId], promotedCaseIds: [] }]);

    // 5. A replay re-runs the failing turn; CI judges the replay's changes: the failure reproduces.
    const replayed = await api(`/api/projects/${P}/cases/${found!.caseId}/replay`, post({}));
    expect(replayed.status).toBe(201);
    const { scorecard } = (await replayed.json()) as { scorecard: { status: string; replay: { sessionId: string; runId: string } } };
    expect(scorecard.status).toBe("pending");
    const replayDiff = await (await api(`/api/sessions/${scorecard.replay.sessionId}/changes`)).text();
    expect(replayDiff).toBe(diff.replaceAll(first.sessionId, scorecard.replay.sessionId));
    const ci = await api(
      `/api/sessions/${scorecard.replay.sessionId}/judgements`,
      post({
        runId: scorecard.replay.runId,
        judgeName: "ci",
        result: "fail",
        artifactRefs: ["src/math.ts"],
        detail: "add(2, 2) returned 0 again",
      }),
    );
    expect(ci.status).toBe(201);
    let status = "";
    for (let i = 0; i < 100 && status !== "passed"; i++) {
      status = ((await (await api(`/api/projects/${P}/cases/${found!.caseId}`)).json()) as { scorecard: { status: string } }).scorecard
        .status;
      if (status !== "passed") await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe("passed");
    expect((await casesOf(api, P)).map((c) => c.occurrences)).toEqual([1]);

    // 6. The case is promoted to project memory (mirrored to R2).
    const promoted = await api(`/api/projects/${P}/memory/promote`, post({ caseId: found!.caseId, write: true }));
    expect(promoted.status).toBe(201);
    const { rules } = (await (await api(`/api/projects/${P}/memory`)).json()) as { rules: { caseId: string; verifiedBy: string }[] };
    expect(rules.map((r) => [r.caseId, r.verifiedBy])).toEqual([[found!.caseId, "replay"]]);
    const mirror = await env.STORE.get(`${projectPrefix({ tenant: null, projectId: P })}/memory.jsonl`);
    expect((await mirror!.text()).split("\n").filter(Boolean).length).toBe(1);

    // 7. A run on an unrelated file gets no brief: its system prompt is that of a project with no cases.
    const unrelated = await openSession(api, { workspaceId, projectId: P, answers: [model.text("ok")] });
    const plain = await prompt(api, unrelated.sessionId, { text: "fix the typo in docs/guide.md", allowWrite: true });
    expect(plain.frames.map((f) => f.data.type)).not.toContain("brief_injected");
    const control = await openSession(api, { workspaceId, projectId: "p_calc_control", answers: [model.text("ok")] });
    await prompt(api, control.sessionId, { text: "fix the typo in docs/guide.md", allowWrite: true });
    expect(systemPromptOf(unrelated.log, 0)).toBe(systemPromptOf(control.log, 0));

    // And a later run on the file gets the promoted rule, marked verified.
    const later = await openSession(api, { workspaceId, projectId: P, answers: [model.text("ok")] });
    await prompt(api, later.sessionId, { text: "rename mul in src/math.ts", allowWrite: true });
    expect(systemPromptOf(later.log, 0).endsWith(`\n- [verified] ${found!.preventionHint}`)).toBe(true);
  });
});
