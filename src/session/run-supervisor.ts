import { type AgentPromptCommand, failure, type IdGenerator, nowIso, ok } from "../domain";
import type { RunOutcome } from "../runtime/agent-runtime";
import type { ActiveRun, RunRegistry } from "./run-registry";
import type { SessionResult } from "./session-api";

export interface RunSupervisorDeps {
  registry: RunRegistry;
  ids: IdGenerator;
  clock: () => number;
  /** The seq of the newest record: a run's stream replays from there. */
  lastSeq(): number;
  /** Runs one prompt to its end; never throws (failures end the run with agent_error). */
  execute(run: ActiveRun, command: AgentPromptCommand): Promise<RunOutcome>;
  /** After every run, however it ended: flush the log, end live streams. */
  afterRun(): Promise<void>;
  /** Keeps the object alive while a run is going (the alarm heartbeat). */
  heartbeat(): Promise<void>;
  waitUntil(work: Promise<unknown>): void;
}

/**
 * Owns the session's one run slot: starts a run in the background (a client that disconnects does not
 * cancel it), aborts it on request, and records its end. The run itself is the runtime's business.
 */
export class RunSupervisor {
  constructor(private readonly deps: RunSupervisorDeps) {}

  get active(): ActiveRun | null {
    return this.deps.registry.current();
  }

  /** Takes the slot and starts the run, or answers `session_busy`. */
  start(command: AgentPromptCommand): SessionResult<ActiveRun> {
    const { registry } = this.deps;
    const runId = this.deps.ids.next("run");
    const run = registry.begin(runId, this.deps.lastSeq(), nowIso(this.deps.clock), command);
    if (!run)
      return failure("session_busy", `a run (${registry.current()!.runId}) is already active in this session; wait for it or abort it`);
    const done = this.deps
      .execute(run, command)
      .catch((): RunOutcome => ({ stopReason: "ERROR" }))
      .then((outcome) => registry.finish(runId, outcome.stopReason, nowIso(this.deps.clock)))
      .finally(() => this.deps.afterRun());
    this.deps.waitUntil(done);
    this.deps.waitUntil(this.deps.heartbeat());
    return ok(run);
  }

  /** Cancels the active run (model request and tools); it ends with ABORTED. */
  abort(): { aborted: boolean; runId: string | null } {
    const run = this.deps.registry.current();
    if (!run) return { aborted: false, runId: null };
    run.controller.abort();
    return { aborted: true, runId: run.runId };
  }
}
