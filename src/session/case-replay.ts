import type { FailedTurnCase } from "../awtl/failed-turn-case";
import { type ProjectRef, type ProjectRpc, projectObjectName } from "../awtl/project-api";
import { type Scorecard, verdictOf } from "../awtl/scorecard";
import {
  type AgentPromptCommand,
  HarnessError,
  type IdGenerator,
  type JudgeResult,
  nowIso,
  type PromptDelivery,
  randomIds,
  TraceRecord,
  unwrapResult,
} from "../domain";
import { REPLAY_MODEL_PREFIX } from "../model";
import { withoutEndMark } from "../workspace/streams";
import { SESSION_STREAM_ORIGIN, SESSION_STREAM_PATHS } from "./session-api";
import type { DurableSessionStore } from "./session-store";

/** Run errors that mean the recording could not be played, rather than that the failure went away. */
const UNPLAYABLE: ReadonlySet<string> = new Set(["replay_exhausted", "replay_load_failed", "history_unreadable", "workspace_not_found"]);

export interface CaseReplayDeps {
  store: DurableSessionStore;
  projects: DurableObjectNamespace<ProjectRpc>;
  ids?: IdGenerator;
  clock?: () => number;
}

/**
 * Re-runs a case's failing run with the replay model against the current tools and the workspace as
 * the run found it (a fork of the origin session before the run), in a new session of the same
 * tenant and project, and records the scorecard:
 * for a built-in judge at once (did the same failure recur?), for an external one `pending` until a
 * judgement on the replay run arrives.
 */
export async function replayCase(deps: CaseReplayDeps, ref: ProjectRef, caseId: string): Promise<Scorecard> {
  const project = deps.projects.getByName(projectObjectName(ref));
  const found = await project.getCase(caseId);
  if (!found) throw new HarnessError("case_not_found", `case '${caseId}' does not exist in this project`);
  if (found.imported)
    throw new HarnessError("case_not_replayable", `case '${caseId}' comes from imported traces: there is no recording to replay`);

  const card = await replayOnce(deps, ref, found);
  const outcome =
    card.status === "pending" || card.status === "unavailable"
      ? null
      : { originRunId: found.origin.runId, judgeName: found.origin.judgeName, reproduced: card.status === "passed" };
  await project.recordScorecard(ref, card, outcome);
  return card;
}

async function replayOnce(deps: CaseReplayDeps, ref: ProjectRef, found: FailedTurnCase): Promise<Scorecard> {
  const { store } = deps;
  const ids = deps.ids ?? randomIds;
  const now = () => nowIso(deps.clock ?? Date.now);
  const base = {
    recordId: ids.next("scorecard"),
    caseId: found.caseId,
    appliesTo: [...found.applicability.pathGlobs, ...found.applicability.tools.map((t) => `tool:${t}`)],
    doesNotApplyTo: [] as string[],
  };
  const unavailable = (why: string): Scorecard => ({
    ...base,
    ...verdictOf("unreplayable"),
    validatedBy: "replay",
    lastValidatedAt: now(),
    evidenceRefs: [`replay:unavailable:${why}`],
    replay: null,
  });

  const origin = found.origin;
  const meta = await store.findOwned(origin.sessionId, ref.tenant);
  if (!meta) return unavailable("origin_session_gone");
  const info = unwrapResult(await store.stub(origin.sessionId).runInfo(origin.runId));
  if (!info) return unavailable("origin_run_unrecorded");

  // A run after the first found the workspace as the runs before it left it (their edits), and its
  // conversation: the replay starts from a fork of the origin at the message before the run, and the
  // replay model, counting the fork's assistant turns, plays the run's own turns. A first run starts
  // from the snapshot alone.
  let replaySession: string;
  let replayOffset = 0;
  try {
    const title = `replay of ${found.caseId}`;
    if (info.parentMessageId !== null) {
      replaySession = (await store.fork(origin.sessionId, ref.tenant, { atMessageId: info.parentMessageId, title })).id;
    } else {
      replaySession = (await store.create({ workspaceId: info.workspaceId, projectId: meta.projectId, title, owner: ref.tenant })).id;
      replayOffset = info.assistantOffset;
    }
  } catch (err) {
    if (err instanceof HarnessError && err.code === "workspace_not_found") return unavailable("workspace_gone");
    if (err instanceof HarnessError) return unavailable(err.code);
    throw err;
  }
  const command: AgentPromptCommand = {
    ...info.command,
    sessionId: replaySession,
    model: `${REPLAY_MODEL_PREFIX}${origin.sessionId}`,
    replayOffset,
  };
  delete command.retryOf;
  const { runId, endCode } = await runToEnd(store, replaySession, command);
  const evidenceRefs = [`session:${replaySession}`, `run:${runId}`];
  const replay = { sessionId: replaySession, runId };

  if (!origin.builtIn) {
    return { ...base, ...verdictOf("pending"), validatedBy: null, lastValidatedAt: null, evidenceRefs, replay };
  }
  const trace = await traceOf(store, replaySession, runId);
  const recurred = trace.some(
    (r): r is JudgeResult =>
      r.type === "judge_result" && r.result === "fail" && r.judgeName === origin.judgeName && r.failureKind === origin.failureKind,
  );
  if (!recurred && endCode !== null && UNPLAYABLE.has(endCode)) return { ...unavailable(endCode), evidenceRefs, replay };
  return {
    ...base,
    ...verdictOf(recurred ? "reproduced" : "not_reproduced"),
    validatedBy: "replay",
    lastValidatedAt: now(),
    evidenceRefs,
    replay,
  };
}

/** Starts the run and reads its stream to the end; its run id and the `agent_error` code it ended with, if any. */
async function runToEnd(
  store: DurableSessionStore,
  sessionId: string,
  command: AgentPromptCommand,
): Promise<{ runId: string; endCode: string | null }> {
  const url = `${SESSION_STREAM_ORIGIN}${SESSION_STREAM_PATHS.run}`;
  const delivery: PromptDelivery = { command, whenBusy: "reject", afterFailedRun: "keep" };
  const response = await store.stub(sessionId).fetch(new Request(url, { method: "POST", body: JSON.stringify(delivery) }));
  const runId = response.headers.get("x-run-id");
  const text = await response.text();
  if (!response.ok || !runId)
    throw new HarnessError("internal_error", `the replay run could not start (HTTP ${response.status}): ${text.slice(0, 200)}`);
  let endCode: string | null = null;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const event = JSON.parse(line.slice(5)) as { type?: string; code?: string };
    if (event.type === "agent_error") endCode = event.code ?? null;
  }
  return { runId, endCode };
}

async function traceOf(store: DurableSessionStore, sessionId: string, runId: string): Promise<TraceRecord[]> {
  const body = withoutEndMark(unwrapResult(await store.stub(sessionId).exportJsonl("trace")).body);
  const text = await new Response(body).text();
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => TraceRecord.parse(JSON.parse(line)))
    .filter((r) => r.runId === runId);
}
