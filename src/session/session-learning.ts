import type { ProjectRpc } from "../awtl/project-api";
import type { ExternalVerdict } from "../awtl/trace-sink";
import {
  type AgentMessage,
  type AgentPromptCommand,
  type AttributionRecord,
  failure,
  HarnessError,
  type IdGenerator,
  type JudgeResult,
  MAX_ATTRIBUTION_PAGE_BYTES,
  ok,
  type RunErrorCode,
  type TraceDraft,
  type TraceRecord,
} from "../domain";
import { logLine } from "../log";
import { REPLAY_MODEL_PREFIX } from "../model";
import type { RunBrief } from "../runtime/agent-runtime";
import { closingTrace } from "../runtime/run-closing";
import { BUILTIN_TOOLS } from "../tools/registry";
import { attributionPageJson } from "./attribution-pages";
import { decodeMessageLine, decodeTraceLine } from "./jsonl";
import { JudgeRequests } from "./judge-requests";
import { LearningLoop, projectOf } from "./learning-loop";
import { readable, readLog, readLogLines } from "./log-reader";
import { loadStoredMessages } from "./message-history";
import type { RunRegistry } from "./run-registry";
import type { RunInfo, SessionResult } from "./session-api";
import type { SessionLog } from "./session-log";
import type { OwnedSessionMeta } from "./session-meta";

export type JudgeOutcome = { judgeResult: JudgeResult; attribution: AttributionRecord | null };

export interface SessionLearningDeps {
  sql: SqlStorage;
  ids: IdGenerator;
  clock: () => number;
  bucket: R2Bucket;
  projects: DurableObjectNamespace<ProjectRpc>;
  log: SessionLog;
  registry: RunRegistry;
  /** Whether a run id is a follow-up still waiting in the queue. */
  queued(runId: string): boolean;
  describe(): OwnedSessionMeta;
  /** Appends a validated trace record durably; returns its seq. */
  appendTrace(record: TraceRecord): number;
  waitUntil(work: Promise<unknown>): void;
}

/**
 * The failure-learning loop's side of one session, as the session's API and runs use it: trace
 * records of its runs, judgements on them (recorded once per idempotency key), attributions, what a
 * replay of a run needs, and the brief for a run about to start.
 */
export class SessionLearning {
  private readonly loop: LearningLoop;
  private readonly judgeRequests: JudgeRequests<JudgeOutcome>;
  private readonly id: string;

  constructor(private readonly deps: SessionLearningDeps) {
    this.id = deps.describe().id;
    this.judgeRequests = new JudgeRequests(deps.sql, deps.clock);
    this.loop = new LearningLoop({
      sessionId: this.id,
      sql: deps.sql,
      ids: deps.ids,
      clock: deps.clock,
      project: () => projectOf(deps.describe()),
      projects: deps.projects,
      append: (record) => {
        const seq = deps.appendTrace(record);
        if (record.type === "span_end" && record.kind === "run") deps.registry.traceEnded(record.runId, seq);
        return seq;
      },
      nextSeq: () => deps.log.lastSeq() + 1,
      isReplay: (runId) => isReplayCommand(deps.registry.find(runId)?.command ?? null),
      readTrace: (afterSeq, throughSeq) => this.readTrace(afterSeq, throughSeq),
      waitUntil: deps.waitUntil,
    });
  }

  /** A trace record of the running run (from the runtime). */
  record(draft: TraceDraft): void {
    this.loop.record(draft);
  }

  /**
   * Ends the trace of a run that was cut off (`closingTrace`), read back from the log. A fault here is
   * logged: closing the run's messages and events must not wait on the trace.
   */
  async closeRun(runId: string, startSeq: number, code: RunErrorCode, message: string): Promise<void> {
    try {
      const drafts = closingTrace(await this.readTrace(startSeq), {
        sessionId: this.id,
        runId,
        code,
        message,
        ids: this.deps.ids,
        clock: this.deps.clock,
      });
      for (const draft of drafts) this.loop.record(draft);
    } catch (err) {
      logLine("error", "the trace of a cut-off run was not closed", { sessionId: this.id, runId, error: String(err) });
    }
  }

  /** Tells the project the session is being deleted (a replay pending in it becomes unavailable). */
  sessionDeleted(): Promise<void> {
    // Only a session a replay ran in can hold a pending one: telling the project of any other deletion
    // would wake its object for nothing, or create its database.
    if (!this.deps.registry.hasRunOfModel(REPLAY_MODEL_PREFIX)) return Promise.resolve();
    return this.loop.sessionDeleted();
  }

  /** Hands queued cases to the project (the alarm retries what fails). */
  deliver(): Promise<void> {
    return this.loop.deliver();
  }

  /** Cases not yet handed to the project. */
  pending(): number {
    return this.loop.pending();
  }

  /** The Failure Prevention Brief for a run that offers `offered` tools (only sessions with a workspace have tools). */
  async briefFor(command: AgentPromptCommand, history: readonly AgentMessage[], offered: string[]): Promise<RunBrief | null> {
    // A replay plays recorded answers: a brief could not change them, and would muddle the verdict.
    if (offered.length === 0 || isReplayCommand(command)) return null;
    const denied = BUILTIN_TOOLS.map((t) => t.name).filter((name) => !offered.includes(name));
    return this.loop.brief({ offeredTools: offered, deniedTools: denied, retryOf: command.retryOf ?? null }, command.userText, history);
  }

  /** An external judge's verdict on a run of this session: recorded (once per key), and attributed when it is a fail. */
  async judge(runId: string, verdict: ExternalVerdict, idempotencyKey?: string): Promise<SessionResult<JudgeOutcome>> {
    if (idempotencyKey === undefined) return this.judgeOnce(runId, verdict);
    return this.judgeRequests.once(idempotencyKey, () => this.judgeOnce(runId, verdict));
  }

  /** The page of attributions after a seq (0: from the first) as JSON text: `limit` at most, within MAX_ATTRIBUTION_PAGE_BYTES. */
  attributionsJson(afterSeq: number, limit: number): AsyncGenerator<string> {
    return attributionPageJson(
      readLog(this.deps.log, this.deps.bucket, "trace", afterSeq),
      (line) => decodeTraceLine(line.body, line.seq, this.id),
      { limit, maxBytes: MAX_ATTRIBUTION_PAGE_BYTES },
    );
  }

  /** What a replay of one of this session's runs needs: its command and how many assistant turns came before it. */
  async runInfo(runId: string): Promise<SessionResult<RunInfo | null>> {
    const run = this.deps.registry.find(runId);
    if (!run?.command) return ok(null);
    const command = run.command;
    return readable(async () => {
      // The run's first message is its prompt; the replay starts at the assistant turns after it.
      const [first] = await readLogLines(this.deps.log, this.deps.bucket, "messages", run.startSeq);
      const prompt = first ? decodeMessageLine(first.body, first.seq, this.id) : null;
      const history = await loadStoredMessages(this.deps.log, this.deps.bucket, this.id);
      const at = prompt ? history.findIndex((m) => m.id === prompt.id) : history.length;
      const assistantOffset = history.slice(0, at < 0 ? history.length : at).filter((m) => m.kind === "assistant").length;
      // Before the run: the parent of its prompt, or (no message of its own yet) the session's newest one.
      const parentMessageId = prompt ? prompt.parentId : (history.at(-1)?.id ?? null);
      return { command, assistantOffset, workspaceId: this.deps.describe().workspaceId, parentMessageId };
    });
  }

  private async judgeOnce(runId: string, verdict: ExternalVerdict): Promise<SessionResult<JudgeOutcome>> {
    const run = this.deps.registry.find(runId);
    // A queued follow-up's id was given to its client, though the run has not started (hunt 95: 404).
    if (!run && this.deps.queued(runId)) {
      return failure("run_in_progress", `run '${runId}' is queued and has not started; post the verdict once it has ended`);
    }
    if (!run) return failure("run_not_found", `session '${this.id}' has no run '${runId}'`);
    // Attributed now, the verdict would blame what the run has done so far, and nothing revisits it.
    if (this.deps.registry.current()?.runId === runId) {
      return failure("run_in_progress", `run '${runId}' is still going; post the verdict once it has ended`);
    }
    try {
      const trace = { startSeq: run.startSeq, traceEndSeq: this.deps.registry.traceBound(run) };
      const { judge, attribution } = await this.loop.judge(runId, trace, verdict);
      return ok({ judgeResult: judge, attribution });
    } catch (err) {
      if (err instanceof HarnessError) return failure(err.code, err.message);
      throw err;
    }
  }

  private async readTrace(afterSeq: number, throughSeq?: number): Promise<TraceRecord[]> {
    const records: TraceRecord[] = [];
    for (const line of await readLogLines(this.deps.log, this.deps.bucket, "trace", afterSeq, "r2", throughSeq)) {
      const record = decodeTraceLine(line.body, line.seq, this.id);
      // A run of an older object kept no trace end (`traceBound`): the first read that meets it keeps it.
      if (record.type === "span_end" && record.kind === "run") this.deps.registry.traceEndFound(record.runId, line.seq);
      records.push(record);
    }
    return records;
  }
}

/** A prompt that replays a recorded session (`replay:<sessionId>`), as a case's replay does. */
export function isReplayCommand(command: AgentPromptCommand | null): boolean {
  return command?.model?.startsWith(REPLAY_MODEL_PREFIX) ?? false;
}
