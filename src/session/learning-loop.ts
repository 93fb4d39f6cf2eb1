import { type Brief, type BriefContext, pathsInText } from "../awtl";
import type { FailedTurnCase } from "../awtl/failed-turn-case";
import { DEFAULT_PROJECT_ID, type ProjectRef, type ProjectRpc, projectObjectName } from "../awtl/project-api";
import { RunTraceView } from "../awtl/run-view";
import { type ExternalVerdict, TraceSink } from "../awtl/trace-sink";
import {
  type AgentMessage,
  type AttributionRecord,
  HarnessError,
  type IdGenerator,
  type JudgeResult,
  type TraceDraft,
  type TraceRecord,
  TraceRecord as TraceSchema,
} from "../domain";
import { logLine } from "../log";
import { resolveWorkspacePath } from "../workspace/paths";

/**
 * How many of the latest assistant messages are searched for paths a run is about. Counted in
 * assistant messages, not messages: one wide turn's tool results would otherwise push out the very
 * calls that named its paths.
 */
export const RECENT_ASSISTANT_MESSAGES = 10;

export interface LearningLoopDeps {
  sessionId: string;
  sql: SqlStorage;
  ids: IdGenerator;
  clock: () => number;
  /** The session's project (its owner's default when it names none). */
  project(): ProjectRef;
  projects: DurableObjectNamespace<ProjectRpc>;
  /** Appends a validated trace record durably; returns its seq. */
  append(record: TraceRecord): number;
  /** The seq the next record will get (no await may come between this and `append`). */
  nextSeq(): number;
  /**
   * Whether a run replays a recorded one (a case's replay): its failures settle the case's scorecard
   * and are never handed to the project as new occurrences.
   */
  isReplay(runId: string): boolean;
  /** The session's trace records after a seq (through `throughSeq`, if given), read back from the log (R2 and SQLite). */
  readTrace(afterSeq: number, throughSeq?: number): Promise<TraceRecord[]>;
  waitUntil(work: Promise<unknown>): void;
}

/**
 * The failure-learning loop (AWTL) as one session sees it: the trace sink for its runs (built-in
 * judges and attribution at once), external verdicts, the outbox that hands cases to the project
 * (kept in SQLite in the same transaction as the attribution, so a failed delivery is retried, never
 * lost), and the brief a run asks its project for before it starts.
 */
export class LearningLoop {
  readonly sink: TraceSink;
  /** The delivery under way, and whether a call came while it ran (it then reads the outbox again). */
  private delivering: Promise<void> | null = null;
  private outboxGrew = false;

  constructor(private readonly deps: LearningLoopDeps) {
    deps.sql.exec(`CREATE TABLE IF NOT EXISTS case_outbox (attribution_id TEXT PRIMARY KEY, attribution TEXT NOT NULL, found TEXT)`);
    this.sink = new TraceSink({
      sessionId: deps.sessionId,
      ids: deps.ids,
      clock: deps.clock,
      append: (draft) => this.append(draft),
      keepsCases: (runId) => !deps.isReplay(runId),
      attributed: (attribution, found) => this.enqueue(attribution, found),
    });
  }

  /** A record of the running run, from the agent loop. */
  record(draft: TraceDraft): void {
    this.sink.record(draft);
  }

  /**
   * An external judge's verdict on one of this session's runs, whose trace lies after `startSeq` and,
   * once it has ended, through `traceEndSeq`. Only verdicts on the run follow its end, and a verdict
   * needs none of them: reading them made each verdict on a run slower than the last, tens of MB read (hunt 53).
   */
  async judge(
    runId: string,
    trace: { startSeq: number; traceEndSeq: number | null },
    verdict: ExternalVerdict,
  ): Promise<{ judge: JudgeResult; attribution: AttributionRecord | null }> {
    const run = RunTraceView.of(runId, await this.deps.readTrace(trace.startSeq, trace.traceEndSeq ?? undefined));
    if (verdict.sourceActionId !== null && !run.action(verdict.sourceActionId)) {
      throw new HarnessError(
        "action_not_found",
        `run '${runId}' has no action '${verdict.sourceActionId}' (see GET /api/sessions/:id/trace)`,
      );
    }
    const project = this.projectStub();
    const replayPassed = verdict.result === "fail" ? await project.replayPassed(runId, verdict.judgeName) : false;
    const outcome = this.sink.external(verdict, run, { replayPassed, attemptId: runId });
    // The run may be a replay whose scorecard waits for this judge.
    this.deps.waitUntil(
      project
        .verdict(this.deps.project(), { sessionId: this.deps.sessionId, runId, judgeName: verdict.judgeName, result: verdict.result })
        .catch(logFailure("verdict", { sessionId: this.deps.sessionId, runId })),
    );
    return outcome;
  }

  /**
   * The session is being deleted: a case replay pending in it can never be judged now. Best effort: a
   * lost notice leaves the replay pending, which the case's next replay replaces.
   */
  async sessionDeleted(): Promise<void> {
    await this.projectStub()
      .replaySessionDeleted(this.deps.project(), this.deps.sessionId)
      .catch(logFailure("replay session notice", { sessionId: this.deps.sessionId }));
  }

  /** The brief for a run about to start, or null (no case applies, or the project cannot be reached). */
  async brief(context: Omit<BriefContext, "paths" | "now">, prompt: string, history: readonly AgentMessage[]): Promise<Brief | null> {
    const paths = [...new Set([...pathsInText(prompt), ...recentPaths(history)])].sort();
    try {
      return await this.projectStub().brief({ ...context, paths, now: this.deps.clock() });
    } catch (err) {
      logFailure("brief", { sessionId: this.deps.sessionId })(err);
      return null;
    }
  }

  /**
   * Hands queued cases to the project; what fails stays queued for the next call (the alarm retries).
   * One delivery at a time: a call while one runs makes it read the outbox again when it is done
   * (each attribution queued starts a delivery, and a burst of N failed tool calls in one answer made
   * N deliveries that each sent the whole outbox: N^2/2 calls to the project, the isolate held for
   * 30 s at N = 600).
   */
  deliver(): Promise<void> {
    if (this.delivering) {
      this.outboxGrew = true;
      return this.delivering;
    }
    const delivering = this.drainOutbox().finally(() => {
      this.delivering = null;
      // A call that came after the last read of the outbox, while this delivery settled, joined a
      // promise that will not read it again: read it now rather than at the next alarm.
      if (this.outboxGrew) this.deps.waitUntil(this.deliver().catch(logFailure("case delivery", { sessionId: this.deps.sessionId })));
    });
    this.delivering = delivering;
    return delivering;
  }

  private async drainOutbox(): Promise<void> {
    do {
      this.outboxGrew = false;
      const rows = this.deps.sql
        .exec<{ attribution_id: string; attribution: string; found: string | null }>(`SELECT * FROM case_outbox`)
        .toArray();
      for (const row of rows) {
        const attribution = JSON.parse(row.attribution) as AttributionRecord;
        const found = row.found ? (JSON.parse(row.found) as FailedTurnCase) : null;
        await this.projectStub().recordAttribution(this.deps.project(), attribution, found);
        this.deps.sql.exec(`DELETE FROM case_outbox WHERE attribution_id = ?`, row.attribution_id);
      }
    } while (this.outboxGrew);
  }

  pending(): number {
    return this.deps.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM case_outbox`).one().n;
  }

  private append(draft: TraceDraft): TraceRecord {
    const writerSeq = this.deps.nextSeq();
    const record = TraceSchema.parse({ ...draft, writerSeq });
    const seq = this.deps.append(record);
    if (seq !== writerSeq) throw new Error(`trace record got seq ${seq}, expected ${writerSeq}`);
    return record;
  }

  private enqueue(attribution: AttributionRecord, found: FailedTurnCase | null): void {
    if (this.deps.isReplay(attribution.runId)) return;
    this.deps.sql.exec(
      `INSERT OR REPLACE INTO case_outbox (attribution_id, attribution, found) VALUES (?, ?, ?)`,
      attribution.attributionId,
      JSON.stringify(attribution),
      found ? JSON.stringify(found) : null,
    );
    this.deps.waitUntil(this.deliver().catch(logFailure("case delivery", { sessionId: this.deps.sessionId })));
  }

  private projectStub(): DurableObjectStub<ProjectRpc> {
    return this.deps.projects.getByName(projectObjectName(this.deps.project()));
  }
}

/** The project of a session: the one it names, else its owner's default project. */
export function projectOf(meta: { owner: string | null; projectId: string | null }): ProjectRef {
  return { tenant: meta.owner, projectId: meta.projectId ?? DEFAULT_PROJECT_ID };
}

/** Paths named by the tool calls of the latest assistant messages. */
export function recentPaths(history: readonly AgentMessage[]): string[] {
  const paths: string[] = [];
  let seen = 0;
  for (let i = history.length - 1; i >= 0 && seen < RECENT_ASSISTANT_MESSAGES; i--) {
    const message = history[i]!;
    if (message.kind !== "assistant") continue;
    seen++;
    for (const call of message.toolCalls ?? []) {
      const value = call.arguments.path;
      if (typeof value !== "string") continue;
      try {
        const path = resolveWorkspacePath(value);
        if (path !== "") paths.push(path);
      } catch {
        // Not a workspace path.
      }
    }
  }
  return paths;
}

function logFailure(what: string, fields: { sessionId: string; runId?: string }) {
  return (err: unknown) => logLine("warn", `awtl ${what} failed`, { ...fields, error: err instanceof Error ? err.message : String(err) });
}
