import { type AgentPromptCommand, failure, type IdGenerator, nowIso, ok } from "../domain";
import type { RunOutcome } from "../runtime/agent-runtime";
import { logRunEnd, type RunEnding } from "./run-ending";
import type { ActiveRun, RunRegistry } from "./run-registry";
import type { SessionResult } from "./session-api";

export interface RunSupervisorDeps {
  /** The session, for the log line of each run's end. */
  sessionId: string;
  registry: RunRegistry;
  ids: IdGenerator;
  clock: () => number;
  /** The seq of the newest record: a run's stream replays from there. */
  lastSeq(): number;
  /**
   * Logs the run's `agent_started`, in the step that takes the slot: nothing another client sends
   * meanwhile (a queued prompt's events) can come before it.
   */
  announce(run: ActiveRun): void;
  /** Runs one prompt to its end; never throws (failures end the run with agent_error). */
  execute(run: ActiveRun, command: AgentPromptCommand): Promise<RunEnding>;
  /**
   * Right after a run is recorded as ended, in the same synchronous step: the next queued
   * follow-up starts here, so the slot is never free while the queue holds one.
   */
  onRunEnded(runId: string, outcome: RunOutcome): void;
  /** After every run, however it ended: flush the log, end live streams. */
  afterRun(): Promise<void>;
  /** Keeps the object alive while a run is going (the alarm heartbeat). */
  heartbeat(): Promise<void>;
  waitUntil(work: Promise<unknown>): void;
}

/** Ids given to a run before it starts (a queued follow-up announced them when it was queued). */
export interface RunIds {
  runId: string;
  userMessageId: string;
}

/**
 * Owns the session's one run slot: starts a run in the background (a client that disconnects does not
 * cancel it), aborts it on request, and records its end (and logs it: one `run ended` line per run).
 * The run itself is the runtime's business.
 */
export class RunSupervisor {
  private running: Promise<void> | null = null;

  constructor(private readonly deps: RunSupervisorDeps) {}

  get active(): ActiveRun | null {
    return this.deps.registry.current();
  }

  /** Takes the slot and starts the run, or answers `session_busy`. */
  start(command: AgentPromptCommand, ids?: RunIds): SessionResult<ActiveRun> {
    const { registry } = this.deps;
    const runId = ids?.runId ?? this.deps.ids.next("run");
    const userMessageId = ids?.userMessageId ?? this.deps.ids.next("message");
    const run = registry.begin(runId, userMessageId, this.deps.lastSeq(), nowIso(this.deps.clock), command);
    if (!run)
      return failure("session_busy", `a run (${registry.current()!.runId}) is already active in this session; wait for it or abort it`);
    this.deps.announce(run);
    const startedMs = this.deps.clock();
    const done = this.deps
      .execute(run, command)
      .catch(
        (err: unknown): RunEnding => ({
          stopReason: "ERROR",
          error: { code: "internal_error", message: "the run failed unexpectedly" },
          cause: err instanceof Error ? err.stack : String(err),
        }),
      )
      .then((ending) => {
        registry.finish(runId, ending.stopReason, nowIso(this.deps.clock));
        logRunEnd(this.deps.sessionId, runId, ending, this.deps.clock() - startedMs);
        this.deps.onRunEnded(runId, ending);
      })
      .finally(() => this.deps.afterRun());
    this.running = done;
    this.deps.waitUntil(done);
    this.deps.waitUntil(this.deps.heartbeat());
    return ok(run);
  }

  /**
   * Cancels the active run (model request and tools); it ends with ABORTED. With `runId`, only that
   * run: when another is active (the named one ended, and a queued one started), nothing is aborted.
   */
  abort(runId?: string): { aborted: boolean; runId: string | null } {
    const run = this.deps.registry.current();
    if (!run) return { aborted: false, runId: runId ?? null };
    if (runId !== undefined && run.runId !== runId) return { aborted: false, runId };
    run.controller.abort();
    return { aborted: true, runId: run.runId };
  }

  /** Resolves once the current run, and any run it started, has ended and its end work is done. */
  async idle(): Promise<void> {
    for (let run = this.running; run; run = this.running) {
      await run.catch(() => {});
      if (this.running === run) return;
    }
  }
}
