import { beforeAll, describe, expect, it } from "vitest";
import type { AttributionRecord, FailureClass, TraceRecord } from "../../src/domain";
import {
  type Answer,
  type Api,
  actionOfCall,
  attributionsOf,
  casesOf,
  client,
  model,
  openSession,
  post,
  prompt,
  traceOf,
  uploadWorkspace,
} from "./harness";

/**
 * The labelled attribution suite: failure scenarios run for real (scripted provider, real tools over
 * an uploaded snapshot, built-in and external judges), each with the source action and class a
 * person would name. Every scenario must come out right; the accuracy is printed.
 */

const api = client();

/** Where blame should land: a tool call by its id, or the model call of turn n (1-based). */
type Source = { call: string } | { model: number };

interface Scenario {
  name: string;
  answers: Answer[] | ((ctx: Ctx) => Promise<Answer[]>);
  options?: Record<string, unknown>;
  model?: (ctx: Ctx) => Promise<string>;
  /** Text of the prompt (default: a neutral one). */
  text?: string;
  /** Something to do in the scenario's project before the run (e.g. leave a case behind). */
  before?: (ctx: Ctx) => Promise<void>;
  /** An external verdict on the run; `source` names a tool call. */
  judgement?: { judgeName: string; result: "pass" | "fail" | "warn"; source?: string; artifactRefs: string[] };
  /** Something to do after the run and before the verdict (e.g. replay the case). */
  after?: (ctx: Ctx & { sessionId: string; runId: string }) => Promise<void>;
  expected: null | {
    judgeName: string;
    failureKind: string;
    sources: Source[];
    rule: AttributionRecord["rule"];
    classification: FailureClass;
    touched?: string[];
    /** The attribution names the cases of the brief the run was given. */
    memoryFromBrief?: boolean;
  };
}

interface Ctx {
  api: Api;
  workspaceId: string;
  projectId: string;
  notes: Record<string, string>;
}

const T = model.tools;
const call = (id: string, name: string, args: unknown) => ({ id, name, args });
const done = model.text("Done.");

/** A run in the project that ends with a failing CI verdict on src/math.ts: leaves one case behind. */
async function leaveMathCase(ctx: Ctx): Promise<void> {
  const { sessionId } = await openSession(ctx.api, {
    workspaceId: ctx.workspaceId,
    projectId: ctx.projectId,
    answers: [T(call("p_e", "edit", { path: "src/math.ts", oldText: "a + b", newText: "a - b" })), done],
  });
  const { runId } = await prompt(ctx.api, sessionId, { text: "change add", allowWrite: true });
  const res = await ctx.api(
    `/api/sessions/${sessionId}/judgements`,
    post({ runId, judgeName: "ci", result: "fail", artifactRefs: ["src/math.ts"], detail: "add(2,2) != 4" }),
  );
  expect(res.status).toBe(201);
  ctx.notes.caseId = (await casesOf(ctx.api, ctx.projectId))[0]!.caseId;
}

/** An empty session of the same tenant: replaying it ends with replay_exhausted at once. */
async function emptyRecording(ctx: Ctx): Promise<string> {
  const { sessionId } = await openSession(ctx.api);
  return `replay:${sessionId}`;
}

const scenarios: Scenario[] = [
  // Built-in judges: tool errors (agent)
  {
    name: "read of a missing file",
    answers: [T(call("m1", "read", { path: "src/missing.ts" })), done],
    expected: { judgeName: "tool-error", failureKind: "not_found", sources: [{ call: "m1" }], rule: "given", classification: "agent" },
  },
  {
    name: "edit whose oldText is not in the file",
    answers: [T(call("e1", "edit", { path: "src/math.ts", oldText: "a - b", newText: "a * b" })), done],
    options: { allowWrite: true },
    expected: { judgeName: "tool-error", failureKind: "no_match", sources: [{ call: "e1" }], rule: "given", classification: "agent" },
  },
  {
    name: "edit whose oldText occurs twice",
    answers: [T(call("e1", "edit", { path: "src/math.ts", oldText: "number", newText: "bigint" })), done],
    options: { allowWrite: true },
    expected: {
      judgeName: "tool-error",
      failureKind: "ambiguous_match",
      sources: [{ call: "e1" }],
      rule: "given",
      classification: "agent",
    },
  },
  {
    name: "bash command that exits non-zero",
    answers: [T(call("b1", "bash", { command: "cat src/none.ts" })), done],
    options: { allowBash: true },
    expected: { judgeName: "tool-error", failureKind: "exit_status", sources: [{ call: "b1" }], rule: "given", classification: "agent" },
  },
  {
    name: "grep with an invalid regex",
    answers: [T(call("g1", "grep", { pattern: "add(" })), done],
    expected: { judgeName: "tool-error", failureKind: "invalid_regex", sources: [{ call: "g1" }], rule: "given", classification: "agent" },
  },
  {
    name: "ls of a file",
    answers: [T(call("l1", "ls", { path: "README.md" })), done],
    expected: {
      judgeName: "tool-error",
      failureKind: "not_a_directory",
      sources: [{ call: "l1" }],
      rule: "given",
      classification: "agent",
    },
  },
  {
    name: "read of a directory",
    answers: [T(call("r1", "read", { path: "src" })), done],
    expected: { judgeName: "tool-error", failureKind: "is_directory", sources: [{ call: "r1" }], rule: "given", classification: "agent" },
  },
  {
    name: "the failing call after several good ones",
    answers: [
      T(call("ok1", "read", { path: "src/math.ts" }), call("ok2", "ls", { path: "src" })),
      T(call("bad", "read", { path: "src/maths.ts" })),
      done,
    ],
    expected: { judgeName: "tool-error", failureKind: "not_found", sources: [{ call: "bad" }], rule: "given", classification: "agent" },
  },
  // Built-in judges: policy denials
  {
    name: "write without allowWrite",
    answers: [T(call("w1", "write", { path: "src/new.ts", content: "x" })), done],
    expected: { judgeName: "policy", failureKind: "write_not_allowed", sources: [{ call: "w1" }], rule: "given", classification: "policy" },
  },
  {
    name: "bash without allowBash",
    answers: [T(call("b1", "bash", { command: "ls" })), done],
    expected: { judgeName: "policy", failureKind: "bash_not_allowed", sources: [{ call: "b1" }], rule: "given", classification: "policy" },
  },
  {
    name: "read outside the workspace",
    answers: [T(call("r1", "read", { path: "../../etc/passwd" })), done],
    expected: { judgeName: "policy", failureKind: "path_escape", sources: [{ call: "r1" }], rule: "given", classification: "policy" },
  },
  {
    name: "a tool that does not exist",
    answers: [T(call("u1", "deploy", { target: "prod" })), done],
    expected: { judgeName: "policy", failureKind: "unknown_tool", sources: [{ call: "u1" }], rule: "given", classification: "policy" },
  },
  {
    name: "arguments that do not fit the schema",
    answers: [T(call("r1", "read", { file: "src/math.ts" })), done],
    expected: { judgeName: "policy", failureKind: "invalid_arguments", sources: [{ call: "r1" }], rule: "given", classification: "policy" },
  },
  {
    name: "a denied edit after a good read",
    answers: [
      T(call("r1", "read", { path: "src/math.ts" })),
      T(call("e1", "edit", { path: "src/math.ts", oldText: "a + b", newText: "b + a" })),
      done,
    ],
    expected: { judgeName: "policy", failureKind: "write_not_allowed", sources: [{ call: "e1" }], rule: "given", classification: "policy" },
  },
  // Built-in judges: limits
  {
    name: "tool budget spent",
    answers: [T(call("r1", "read", { path: "README.md" }), call("r2", "read", { path: "src/util.ts" })), done],
    options: { maxToolCalls: 1 },
    expected: {
      judgeName: "run-limit",
      failureKind: "tool_budget_exhausted",
      sources: [{ call: "r2" }],
      rule: "given",
      classification: "agent",
    },
  },
  {
    name: "max turns reached",
    answers: [T(call("r1", "read", { path: "README.md" }))],
    options: { maxTurns: 1 },
    expected: {
      judgeName: "run-limit",
      failureKind: "max_turns_reached",
      sources: [{ call: "r1" }],
      rule: "last_action",
      classification: "agent",
    },
  },
  // Built-in judges: the model call failed
  {
    name: "provider refuses the key",
    answers: [model.unauthorized()],
    expected: {
      judgeName: "model-error",
      failureKind: "auth_failed",
      sources: [{ model: 1 }],
      rule: "given",
      classification: "environment",
    },
  },
  {
    name: "provider rate limit",
    answers: [T(call("r1", "read", { path: "README.md" })), model.rateLimited()],
    expected: {
      judgeName: "model-error",
      failureKind: "rate_limited",
      sources: [{ model: 2 }],
      rule: "given",
      classification: "environment",
    },
  },
  {
    name: "provider refuses the request (not the agent's doing: no case)",
    answers: [model.badRequest()],
    expected: {
      judgeName: "model-error",
      failureKind: "bad_request",
      sources: [{ model: 1 }],
      rule: "given",
      classification: "environment",
    },
  },
  {
    name: "provider stream breaks",
    answers: [model.brokenStream()],
    expected: {
      judgeName: "model-error",
      failureKind: "provider_error",
      sources: [{ model: 1 }],
      rule: "given",
      classification: "environment",
    },
  },
  {
    name: "the replayed recording runs out (a harness failure)",
    answers: [],
    model: emptyRecording,
    expected: {
      judgeName: "model-error",
      failureKind: "replay_exhausted",
      sources: [{ model: 1 }],
      rule: "given",
      classification: "harness",
    },
  },
  // External judges
  {
    name: "CI names the action",
    answers: [T(call("e1", "edit", { path: "src/math.ts", oldText: "a + b", newText: "a - b" })), done],
    options: { allowWrite: true },
    judgement: { judgeName: "ci", result: "fail", source: "e1", artifactRefs: ["src/math.ts"] },
    expected: { judgeName: "ci", failureKind: "external", sources: [{ call: "e1" }], rule: "given", classification: "agent" },
  },
  {
    name: "two edits of the same file: the latest writer",
    answers: [
      T(call("e1", "edit", { path: "src/math.ts", oldText: "a + b", newText: "b + a" })),
      T(call("e2", "edit", { path: "src/math.ts", oldText: "a * b", newText: "a * a" })),
      done,
    ],
    options: { allowWrite: true },
    judgement: { judgeName: "ci", result: "fail", artifactRefs: ["src/math.ts"] },
    expected: {
      judgeName: "ci",
      failureKind: "external",
      sources: [{ call: "e2" }],
      rule: "wrote_artifact",
      classification: "agent",
      touched: ["e1"],
    },
  },
  {
    name: "only read: the latest reader",
    answers: [T(call("r1", "read", { path: "src/util.ts" }), call("r2", "read", { path: "README.md" })), done],
    judgement: { judgeName: "review", result: "fail", artifactRefs: ["src/util.ts"] },
    expected: { judgeName: "review", failureKind: "external", sources: [{ call: "r1" }], rule: "read_artifact", classification: "agent" },
  },
  {
    name: "written then read back: the writer, not the later reader",
    answers: [
      T(call("e1", "edit", { path: "src/math.ts", oldText: "a + b", newText: "b + a" })),
      T(call("r1", "read", { path: "src/math.ts" })),
      done,
    ],
    options: { allowWrite: true },
    judgement: { judgeName: "ci", result: "fail", artifactRefs: ["src/math.ts"] },
    expected: {
      judgeName: "ci",
      failureKind: "external",
      sources: [{ call: "e1" }],
      rule: "wrote_artifact",
      classification: "agent",
      touched: ["r1"],
    },
  },
  {
    name: "read, edit, read the same file: the edit, with both reads touched",
    answers: [
      T(call("r1", "read", { path: "src/math.ts" })),
      T(call("e1", "edit", { path: "src/math.ts", oldText: "a * b", newText: "b * a" })),
      T(call("r2", "read", { path: "src/math.ts", offset: 1, limit: 3 })),
      done,
    ],
    options: { allowWrite: true },
    judgement: { judgeName: "ci", result: "fail", artifactRefs: ["src/math.ts"] },
    expected: {
      judgeName: "ci",
      failureKind: "external",
      sources: [{ call: "e1" }],
      rule: "wrote_artifact",
      classification: "agent",
      touched: ["r1", "r2"],
    },
  },
  {
    name: "the artifact is a directory holding the written file",
    answers: [
      T(call("w1", "write", { path: "src/extra.ts", content: "export {};\n" })),
      T(call("r1", "read", { path: "docs/guide.md" })),
      done,
    ],
    options: { allowWrite: true },
    judgement: { judgeName: "lint", result: "fail", artifactRefs: ["src"] },
    expected: { judgeName: "lint", failureKind: "external", sources: [{ call: "w1" }], rule: "wrote_artifact", classification: "agent" },
  },
  {
    name: "a file: ref",
    answers: [T(call("e1", "edit", { path: "src/format.ts", oldText: "toFixed(2)", newText: "toFixed(3)" })), done],
    options: { allowWrite: true },
    judgement: { judgeName: "ci", result: "fail", artifactRefs: ["file:src/format.ts"] },
    expected: { judgeName: "ci", failureKind: "external", sources: [{ call: "e1" }], rule: "wrote_artifact", classification: "agent" },
  },
  {
    name: "not the latest action: the write of the failing file",
    answers: [
      T(call("w1", "write", { path: "src/new.ts", content: "export const n = 1;\n" })),
      T(call("w2", "write", { path: "docs/notes.md", content: "notes\n" })),
      done,
    ],
    options: { allowWrite: true },
    judgement: { judgeName: "ci", result: "fail", artifactRefs: ["src/new.ts"] },
    expected: { judgeName: "ci", failureKind: "external", sources: [{ call: "w1" }], rule: "wrote_artifact", classification: "agent" },
  },
  {
    name: "a file written by bash (seen by the shell's filesystem)",
    answers: [
      T(call("b1", "bash", { command: "echo 'export const g = 1;' > src/gen.ts" })),
      T(call("r1", "read", { path: "README.md" })),
      done,
    ],
    // bash writes to the overlay only when the run allows writes too.
    options: { allowBash: true, allowWrite: true },
    judgement: { judgeName: "ci", result: "fail", artifactRefs: ["src/gen.ts"] },
    expected: { judgeName: "ci", failureKind: "external", sources: [{ call: "b1" }], rule: "wrote_artifact", classification: "agent" },
  },
  {
    name: "nothing touched the artifact: the run's last action",
    answers: [T(call("r1", "read", { path: "src/util.ts" })), done],
    judgement: { judgeName: "review", result: "fail", artifactRefs: ["docs/other.md"] },
    expected: { judgeName: "review", failureKind: "external", sources: [{ model: 2 }], rule: "last_action", classification: "agent" },
  },
  {
    name: "CI names the failing test, not the change: the run's write",
    answers: [
      T(call("e1", "edit", { path: "src/math.ts", oldText: "a + b", newText: "a - b" })),
      T(call("r1", "read", { path: "src/util.ts" })),
      done,
    ],
    options: { allowWrite: true },
    judgement: { judgeName: "ci", result: "fail", artifactRefs: ["test/math.test.js"] },
    expected: { judgeName: "ci", failureKind: "external", sources: [{ call: "e1" }], rule: "wrote_in_run", classification: "agent" },
  },
  {
    name: "the failing test was read, the source changed: the change, not the read",
    answers: [
      T(call("r1", "read", { path: "test/math.test.js" })),
      T(call("e1", "edit", { path: "src/math.ts", oldText: "a + b", newText: "a - b" })),
      done,
    ],
    options: { allowWrite: true },
    judgement: { judgeName: "ci", result: "fail", artifactRefs: ["test/math.test.js"] },
    expected: { judgeName: "ci", failureKind: "external", sources: [{ call: "e1" }], rule: "wrote_in_run", classification: "agent" },
  },
  {
    name: "a verdict naming nothing on a run that changed two files: both writes",
    answers: [
      T(call("e1", "edit", { path: "src/math.ts", oldText: "a + b", newText: "a - b" })),
      T(call("b1", "bash", { command: "echo 'export const x = 1;' > src/gen.ts" })),
      done,
    ],
    options: { allowWrite: true, allowBash: true },
    judgement: { judgeName: "ci", result: "fail", artifactRefs: [] },
    expected: {
      judgeName: "ci",
      failureKind: "external",
      sources: [{ call: "e1" }, { call: "b1" }],
      rule: "wrote_in_run",
      classification: "agent",
    },
  },
  {
    name: "a denied write changed nothing: the reader of the artifact",
    answers: [T(call("w1", "write", { path: "src/new.ts", content: "x" })), T(call("r1", "read", { path: "src/util.ts" })), done],
    judgement: { judgeName: "review", result: "fail", artifactRefs: ["src/util.ts"] },
    expected: { judgeName: "review", failureKind: "external", sources: [{ call: "r1" }], rule: "read_artifact", classification: "agent" },
  },
  {
    name: "a limit hit after a write: the run's last action, not the write (a built-in judge)",
    answers: [
      T(call("e1", "edit", { path: "src/math.ts", oldText: "a + b", newText: "b + a" })),
      T(call("r1", "read", { path: "README.md" })),
    ],
    options: { allowWrite: true, maxTurns: 2 },
    expected: {
      judgeName: "run-limit",
      failureKind: "max_turns_reached",
      sources: [{ call: "r1" }],
      rule: "last_action",
      classification: "agent",
    },
  },
  {
    name: "a command the shell does not have (exit 127)",
    answers: [T(call("b1", "bash", { command: "cat src/math.ts && node test/math.test.js" })), done],
    options: { allowBash: true },
    expected: {
      judgeName: "tool-error",
      failureKind: "command_not_found",
      sources: [{ call: "b1" }],
      rule: "given",
      classification: "agent",
    },
  },
  {
    name: "the provider never answered before the run's time ran out (environment)",
    answers: [model.silent()],
    options: { timeoutMs: 1000 },
    expected: {
      judgeName: "run-limit",
      failureKind: "run_timeout",
      sources: [{ model: 1 }],
      rule: "last_action",
      classification: "environment",
    },
  },
  {
    name: "CI fails a run whose provider never answered (environment)",
    answers: [model.silent()],
    options: { allowWrite: true, timeoutMs: 1000 },
    judgement: { judgeName: "ci", result: "fail", artifactRefs: ["src/math.ts"] },
    expected: { judgeName: "ci", failureKind: "external", sources: [{ model: 1 }], rule: "last_action", classification: "environment" },
  },
  {
    name: "a verdict naming a denied call",
    answers: [T(call("w1", "write", { path: "src/new.ts", content: "x" })), done],
    judgement: { judgeName: "review", result: "fail", source: "w1", artifactRefs: ["src/new.ts"] },
    expected: { judgeName: "review", failureKind: "external", sources: [{ call: "w1" }], rule: "given", classification: "agent" },
  },
  {
    name: "the run itself was rate limited (environment)",
    answers: [T(call("r1", "read", { path: "src/util.ts" })), model.rateLimited()],
    judgement: { judgeName: "ci", result: "fail", artifactRefs: ["src/util.ts"] },
    expected: { judgeName: "ci", failureKind: "external", sources: [{ call: "r1" }], rule: "read_artifact", classification: "environment" },
  },
  {
    name: "the run died of a harness failure (replay ran out)",
    answers: [],
    model: emptyRecording,
    judgement: { judgeName: "ci", result: "fail", artifactRefs: [] },
    expected: { judgeName: "ci", failureKind: "external", sources: [{ model: 1 }], rule: "last_action", classification: "harness" },
  },
  {
    name: "a misleading brief: the failure names the brief's case",
    before: leaveMathCase,
    text: "make add in src/math.ts faster",
    answers: [T(call("e1", "edit", { path: "src/math.ts", oldText: "a + b", newText: "a - b" })), done],
    options: { allowWrite: true },
    judgement: { judgeName: "ci", result: "fail", artifactRefs: ["src/math.ts"] },
    expected: {
      judgeName: "ci",
      failureKind: "external",
      sources: [{ call: "e1" }],
      rule: "wrote_artifact",
      classification: "agent",
      memoryFromBrief: true,
    },
  },
  {
    name: "the same judge passed on a replay (flaky)",
    answers: [T(call("e1", "edit", { path: "src/util.ts", oldText: "Math.min", newText: "Math.max" })), done],
    options: { allowWrite: true },
    after: async (ctx) => {
      // A first failing verdict makes a case; its replay is judged a pass by the same judge.
      const first = await ctx.api(
        `/api/sessions/${ctx.sessionId}/judgements`,
        post({ runId: ctx.runId, judgeName: "ci", result: "fail", artifactRefs: ["src/util.ts"] }),
      );
      expect(first.status).toBe(201);
      const [found] = await casesOf(ctx.api, ctx.projectId);
      const replay = await ctx.api(`/api/projects/${ctx.projectId}/cases/${found!.caseId}/replay`, post({}));
      expect(replay.status).toBe(201);
      const { scorecard } = (await replay.json()) as { scorecard: { status: string; replay: { sessionId: string; runId: string } } };
      expect(scorecard.status).toBe("pending");
      const pass = await ctx.api(
        `/api/sessions/${scorecard.replay.sessionId}/judgements`,
        post({ runId: scorecard.replay.runId, judgeName: "ci", result: "pass", artifactRefs: ["src/util.ts"] }),
      );
      expect(pass.status).toBe(201);
      await waitFor(async () => {
        const res = await ctx.api(`/api/projects/${ctx.projectId}/cases/${found!.caseId}`);
        return ((await res.json()) as { scorecard: { status: string } | null }).scorecard?.status === "stale";
      });
    },
    judgement: { judgeName: "ci", result: "fail", artifactRefs: ["src/util.ts"] },
    expected: { judgeName: "ci", failureKind: "external", sources: [{ call: "e1" }], rule: "wrote_artifact", classification: "flaky" },
  },
  {
    name: "a warning is recorded but not attributed",
    answers: [T(call("e1", "edit", { path: "src/math.ts", oldText: "a + b", newText: "b + a" })), done],
    options: { allowWrite: true },
    judgement: { judgeName: "style", result: "warn", artifactRefs: ["src/math.ts"] },
    expected: null,
  },
  {
    name: "a pass is recorded but not attributed",
    answers: [T(call("r1", "read", { path: "src/math.ts" })), done],
    judgement: { judgeName: "ci", result: "pass", artifactRefs: ["src/math.ts"] },
    expected: null,
  },
];

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("condition not reached");
}

/** The action id a Source names in a trace. */
function actionOf(trace: TraceRecord[], source: Source): string {
  if ("call" in source) return actionOfCall(trace, source.call);
  const models = trace.filter((r) => r.type === "action" && r.actor === "model");
  const found = models[source.model - 1];
  if (found?.type !== "action") throw new Error(`no model call ${source.model}`);
  return found.actionId;
}

/** Runs a scenario; returns what went wrong (empty when the attribution is exactly as labelled). */
async function runScenario(scenario: Scenario, index: number, workspaceId: string): Promise<string[]> {
  const ctx: Ctx = { api, workspaceId, projectId: `p_suite_${index}`, notes: {} };
  await scenario.before?.(ctx);
  const answers = typeof scenario.answers === "function" ? await scenario.answers(ctx) : scenario.answers;
  const { sessionId } = await openSession(api, { workspaceId, projectId: ctx.projectId, answers });
  const body: Record<string, unknown> = { text: scenario.text ?? "please look at the project", ...scenario.options };
  if (scenario.model) body.model = await scenario.model(ctx);
  const { runId } = await prompt(api, sessionId, body);
  await scenario.after?.({ ...ctx, sessionId, runId });

  let attribution: AttributionRecord | null = null;
  const trace = await traceOf(api, sessionId);
  if (scenario.judgement) {
    const { source, ...verdict } = scenario.judgement;
    const res = await api(
      `/api/sessions/${sessionId}/judgements`,
      post({ runId, ...verdict, ...(source ? { sourceActionId: actionOfCall(trace, source) } : {}), detail: scenario.name }),
    );
    if (res.status !== 201) return [`judgement answered ${res.status}: ${await res.text()}`];
    attribution = ((await res.json()) as { attribution: AttributionRecord | null }).attribution;
  } else if (scenario.expected) {
    const all = await attributionsOf(api, sessionId);
    attribution = all.find((a) => a.judgeName === scenario.expected!.judgeName && a.failureKind === scenario.expected!.failureKind) ?? null;
  }

  const want = scenario.expected;
  if (want === null) return attribution === null ? [] : [`expected no attribution, got ${attribution.rule} ${attribution.classification}`];
  if (attribution === null) return [`no ${want.judgeName}/${want.failureKind} attribution`];
  const after = await traceOf(api, sessionId);
  const wrong: string[] = [];
  const check = (what: string, got: unknown, expected: unknown) => {
    if (JSON.stringify(got) !== JSON.stringify(expected))
      wrong.push(`${what}: got ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
  };
  check(
    "sources",
    attribution.sourceActionIds,
    want.sources.map((s) => actionOf(after, s)),
  );
  check("rule", attribution.rule, want.rule);
  check("classification", attribution.classification, want.classification);
  check("runId", attribution.runId, runId);
  if (want.touched)
    check(
      "touched",
      attribution.touchedActionIds,
      want.touched.map((c) => actionOfCall(after, c)),
    );
  check("memory reads", attribution.memoryReadNodeIds, want.memoryFromBrief ? [ctx.notes.caseId] : []);
  return wrong;
}

describe("attribution: the labelled suite", () => {
  let workspaceId = "";
  beforeAll(async () => {
    workspaceId = await uploadWorkspace(api);
  });

  it(`has at least 30 scenarios (${scenarios.length}), each attributed exactly as labelled`, async () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(30);
    const failures: Record<string, string[]> = {};
    for (const [i, scenario] of scenarios.entries()) {
      const wrong = await runScenario(scenario, i, workspaceId);
      if (wrong.length > 0) failures[scenario.name] = wrong;
    }
    const right = scenarios.length - Object.keys(failures).length;
    console.log(`attribution accuracy: ${right}/${scenarios.length} (${((100 * right) / scenarios.length).toFixed(1)} %)`);
    expect(failures).toEqual({});
  }, 120_000);
});
