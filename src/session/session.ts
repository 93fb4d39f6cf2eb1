import type { ExternalVerdict } from "../awtl/trace-sink";
import {
  AgentEvent,
  AgentMessage,
  AgentPromptCommand,
  type AttributionRecord,
  type CompactionMessage,
  ERROR_REGISTRY,
  eventJsonWithSeq,
  failure,
  formatIssues,
  HarnessError,
  type JudgeResult,
  nowIso,
  ok,
  type AgentPromptCommand as PromptCommand,
  type TraceRecord,
  unwrapResult,
} from "../domain";
import type { AppEnv } from "../env";
import { modelConfigFromEnv, REPLAY_MODEL_PREFIX } from "../model";
import { type RunOutcome, runAgent } from "../runtime/agent-runtime";
import { type ClosingRecord, closingRecords, runLeftovers } from "../runtime/run-closing";
import type { RunLog } from "../runtime/run-log";
import { setupRun } from "../runtime/run-setup";
import { BUILTIN_TOOLS } from "../tools/registry";
import { FlushScheduler } from "./flush-scheduler";
import { decodeEventLine, decodeMessageLine, decodeTraceLine, encodeLine } from "./jsonl";
import { LearningLoop, projectOf } from "./learning-loop";
import { EventHub, type SeqEvent } from "./live-events";
import { readLog, readLogLines, type SeqLine } from "./log-reader";
import { MessageHistory } from "./message-history";
import { sessionKeys } from "./r2-layout";
import { type ActiveRun, RunRegistry } from "./run-registry";
import { RunSupervisor } from "./run-supervisor";
import { SegmentFlusher } from "./segment-flusher";
import { type FlushSummary, type RunInfo, SESSION_STREAM_PATHS, type SessionInfo, type SessionResult } from "./session-api";
import { compactOnDemand, contextStatus, type SessionModelContext } from "./session-context";
import type { SessionDeps } from "./session-deps";
import { type LogStream, RecordTooLargeError, SessionLog } from "./session-log";
import { type OwnedSessionMeta, publicMeta, SessionMetaTable } from "./session-meta";
import { DurableSessionStore } from "./session-store";
import { SessionWorkspace } from "./session-workspace";
import { sseResponse } from "./sse";

const STREAM_SCHEMA = { messages: AgentMessage, events: AgentEvent } as const;

/**
 * A session that exists in this object's storage, with the collaborators that do its work: the
 * ordered log (SessionLog) and its flushes to R2 (SegmentFlusher, FlushScheduler), the message
 * history, live streams (EventHub), the workspace view and the run slot (RunSupervisor).
 */
export class Session {
  readonly id: string;
  private readonly meta: SessionMetaTable;
  private readonly log: SessionLog;
  private readonly flusher: SegmentFlusher;
  private readonly flushes: FlushScheduler;
  private readonly hub = new EventHub();
  private readonly history: MessageHistory;
  private readonly workspace: SessionWorkspace;
  private readonly registry: RunRegistry;
  private readonly runs: RunSupervisor;
  private readonly learning: LearningLoop;
  private readonly transactionSync: <T>(fn: () => T) => T;
  private compacting = false;

  constructor(
    ctx: DurableObjectState,
    private readonly env: AppEnv,
    private readonly deps: SessionDeps,
    meta: OwnedSessionMeta,
  ) {
    const sql = ctx.storage.sql;
    this.id = meta.id;
    this.transactionSync = (fn) => ctx.storage.transactionSync(fn);
    this.meta = new SessionMetaTable(sql);
    this.log = new SessionLog(sql);
    this.flusher = new SegmentFlusher(meta.id, this.log, this.transactionSync, deps.bucket);
    this.flushes = new FlushScheduler({
      flush: async () => {
        const result = await this.flusher.flush();
        if (result.recordsFlushed > 0) await this.writeMetaObject();
        return result;
      },
      measureUnflushedBytes: () => this.log.unflushedBytes(),
      setAlarm: (atMs) => ctx.storage.setAlarm(atMs),
      waitUntil: (work) => ctx.waitUntil(work),
      now: deps.clock,
    });
    this.history = new MessageHistory(async () =>
      (await readLogLines(this.log, deps.bucket, "messages")).map((line) => decodeMessageLine(line.body, line.seq, this.id)),
    );
    this.workspace = new SessionWorkspace(sql, this.transactionSync, deps.bucket);
    this.registry = new RunRegistry(sql);
    this.learning = new LearningLoop({
      sessionId: meta.id,
      sql,
      ids: deps.ids,
      clock: deps.clock,
      project: () => projectOf(this.describe()),
      projects: env.PROJECTS,
      append: (record) => unwrapResult(this.appendValid("trace", [record]))[0]!,
      nextSeq: () => this.log.lastSeq() + 1,
      isReplay: (runId) => isReplayCommand(this.registry.find(runId)?.command ?? null),
      readTrace: (afterSeq) => this.readTrace(afterSeq),
      waitUntil: (work) => ctx.waitUntil(work),
    });
    this.runs = new RunSupervisor({
      registry: this.registry,
      ids: deps.ids,
      clock: deps.clock,
      lastSeq: () => this.log.lastSeq(),
      execute: (run, command) => this.execute(run, command),
      afterRun: async () => {
        // Normally the terminal event already ended them; this covers a run that died without one.
        this.hub.closeAll();
        await this.flush();
      },
      heartbeat: () => this.flushes.armAlarm(),
      waitUntil: (work) => ctx.waitUntil(work),
    });
  }

  /** Mirrors the meta to R2 after creation; if R2 is down now, the next flush writes it. */
  async created(): Promise<void> {
    await this.writeMetaObject().catch(() => this.flushes.armAlarm());
  }

  describe(): OwnedSessionMeta {
    return this.meta.get()!;
  }

  async info(): Promise<SessionInfo> {
    const base = {
      ...publicMeta(this.describe()),
      status: this.busy() ? ("running" as const) : ("idle" as const),
      counts: this.log.counts(),
    };
    try {
      return { ...base, ...contextStatus(await this.history.load(), this.modelContext()) };
    } catch {
      // The log cannot be read back now: the session is still described, without its context figures.
      return { ...base, usage: null, contextTokens: null, contextWindow: null };
    }
  }

  /** A run or a compaction holds the session. */
  private busy(): boolean {
    return this.runs.active !== null || this.compacting;
  }

  private modelContext(): SessionModelContext {
    return {
      config: { ...modelConfigFromEnv(this.env), fetch: this.deps.modelFetch },
      workspaceId: this.describe().workspaceId,
      command: this.registry.latestCommand(),
    };
  }

  /**
   * Compacts the history now, with the model the session runs on (`POST .../compact`). Refused with
   * `session_busy` while a run (or another compaction) is active; a prompt meanwhile is refused too.
   */
  async compact(instructions?: string): Promise<SessionResult<{ messageId: string; tokensBefore: number; tokensAfter: number }>> {
    if (this.busy()) return failure("session_busy", "a run or a compaction is active in this session; wait for it or abort it");
    this.compacting = true;
    try {
      const history = await this.history.load();
      const meta = this.describe();
      const result = await compactOnDemand(history, {
        ...this.modelContext(),
        ...(instructions ? { instructions } : {}),
        loadRecording: (sessionId) => this.loadRecording(sessionId, meta),
        log: {
          event: (body) => unwrapResult(this.appendValid("events", [this.envelope("event", body) as AgentEvent])),
          append: (record) => {
            const message = { ...this.envelope("message", record), parentId: this.meta.lastMessageId() } as CompactionMessage;
            unwrapResult(this.appendValid("messages", [message]));
            return message;
          },
        },
      });
      if (result.ok) return ok({ messageId: result.messageId, tokensBefore: result.tokensBefore, tokensAfter: result.tokensAfter });
      if (result.code === "nothing_to_compact") return failure("nothing_to_compact", result.message);
      return failure("compaction_failed", `${result.code}: ${result.message}`);
    } catch (err) {
      if (err instanceof HarnessError) return failure("history_unreadable", err.message);
      return failure("history_unreadable", `the session's log could not be read: ${(err as Error).message}`);
    } finally {
      this.compacting = false;
      await this.flush();
    }
  }

  /** id, session and time for a record written outside a run. */
  private envelope<T extends object>(kind: "message" | "event", body: T) {
    const at = nowIso(this.deps.clock);
    return kind === "message"
      ? { id: this.deps.ids.next("message"), sessionId: this.id, createdAt: at, ...body }
      : { eventId: this.deps.ids.next("event"), sessionId: this.id, createdAt: at, ...body };
  }

  /** Validates and appends records of one stream; all or nothing. */
  append(stream: "messages" | "events", records: unknown[]): SessionResult<number[]> {
    const parsed: (AgentMessage | AgentEvent)[] = [];
    for (const [i, record] of records.entries()) {
      const result = STREAM_SCHEMA[stream].safeParse(record);
      if (!result.success) return failure("invalid_record", `record ${i}: ${formatIssues(result.error.issues)}`);
      if (result.data.sessionId !== this.id)
        return failure("invalid_record", `record ${i} belongs to session '${result.data.sessionId}', not '${this.id}'`);
      parsed.push(result.data);
    }
    return this.appendValid(stream, parsed);
  }

  async loadMessages(): Promise<SessionResult<AgentMessage[]>> {
    return readable(() => this.history.load());
  }

  async loadEvents(afterSeq = 0): Promise<SessionResult<SeqEvent[]>> {
    return readable(async () => {
      const lines = await readLogLines(this.log, this.deps.bucket, "events", afterSeq);
      return lines.map((line) => ({ seq: line.seq, event: decodeEventLine(line.body, line.seq, this.id) }));
    });
  }

  /**
   * The stream as JSONL bytes: flushed segments, then the unflushed tail. The first batch is read
   * before answering, so a log that cannot be read is a `history_unreadable` error rather than a
   * 200 that breaks off (a failure further on can only end the body early).
   */
  async exportJsonl(stream: LogStream): Promise<SessionResult<ReadableStream<Uint8Array>>> {
    const batches = readLog(this.log, this.deps.bucket, stream);
    const first = await readable(() => batches.next());
    if (!first.ok) return first;
    const encoder = new TextEncoder();
    // Events go out with their seq (`{"seq":N,...}`), so a client that loaded them knows where to resume.
    const line = stream === "events" ? (l: SeqLine) => eventJsonWithSeq(l.seq, l.body) : (l: SeqLine) => l.body;
    const encode = (lines: SeqLine[]) => encoder.encode(lines.map((l) => `${line(l)}\n`).join(""));
    let pending: IteratorResult<SeqLine[]> | null = first.value;
    return ok(
      new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = pending ?? (await batches.next());
          pending = null;
          if (next.done) return controller.close();
          controller.enqueue(encode(next.value));
        },
        async cancel() {
          await batches.return(undefined);
        },
      }),
    );
  }

  /** Flushes the unflushed tail to R2 now. A failure is reported, not thrown: the rows stay and the alarm retries. */
  async flush(): Promise<SessionResult<FlushSummary>> {
    try {
      return ok(await this.flushes.flush());
    } catch (err) {
      await this.flushes.armAlarm();
      return failure("flush_failed", `flush to R2 failed and will be retried: ${(err as Error).message}`);
    }
  }

  async alarm(): Promise<void> {
    this.flushes.alarmFired();
    const result = await this.flush();
    await this.learning.deliver().catch(() => {});
    // While a run is active the alarm doubles as a heartbeat: a streaming model fetch alone may not
    // keep the object in memory.
    const behind = (result.ok && this.log.flushState().flushedSeq < this.log.lastSeq()) || this.learning.pending() > 0;
    if (this.runs.active || behind) await this.flushes.armAlarm();
  }

  /** The streaming endpoints (see SESSION_STREAM_PATHS); the Worker has authenticated and validated. */
  async handleStream(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (request.method === "POST" && url.pathname === SESSION_STREAM_PATHS.run) {
      const command = AgentPromptCommand.parse(await request.json());
      if (command.retryOf !== undefined && !this.registry.find(command.retryOf)) {
        const message = `retryOf: session '${this.id}' has no run '${command.retryOf}'`;
        return Response.json({ error: { code: "run_not_found", message } }, { status: ERROR_REGISTRY.run_not_found.status });
      }
      if (this.compacting) {
        const message = "the session's history is being compacted; send the prompt again when it is done";
        return Response.json({ error: { code: "session_busy", message } }, { status: 409 });
      }
      const started = this.runs.start(command);
      if (!started.ok) return Response.json({ error: { code: started.code, message: started.message } }, { status: 409 });
      return sseResponse(this.openEventStream(started.value.startSeq), started.value.runId);
    }
    if (request.method === "GET" && url.pathname === SESSION_STREAM_PATHS.events) {
      const after = Number(url.searchParams.get("after") ?? "0");
      // Nothing to send and nothing coming: 204 tells an EventSource to stop reconnecting.
      if (!this.runs.active && this.log.lastSeqOf("events") <= after) return new Response(null, { status: 204 });
      return sseResponse(this.openEventStream(after), this.runs.active?.runId ?? null);
    }
    return Response.json(
      { error: { code: "route_not_found", message: `no session route ${request.method} ${url.pathname}` } },
      { status: 404 },
    );
  }

  abortRun(): { aborted: boolean; runId: string | null } {
    return this.runs.abort();
  }

  async readFile(path: string): Promise<SessionResult<Uint8Array>> {
    return this.withWorkspace((meta, wid) => this.workspace.readFile(wid, meta.owner, path));
  }

  async changes(): Promise<SessionResult<string>> {
    return this.withWorkspace((meta, wid) => this.workspace.changes(wid, meta.owner));
  }

  /**
   * Closes runs that were active when the object died: every unanswered tool call gets an error
   * result, the text streamed so far is kept in an ERROR message, and `agent_error run_interrupted`
   * ends the run, so the history stays one that providers accept and live streams end.
   */
  async recoverInterruptedRuns(): Promise<void> {
    for (const run of this.registry.orphaned()) {
      await this.closeRun(run, "run_interrupted", "the run was interrupted (the server restarted); send the prompt again");
      this.registry.finish(run.runId, "ERROR", nowIso(this.deps.clock));
    }
  }

  private async execute(run: ActiveRun, command: PromptCommand): Promise<RunOutcome> {
    const meta = this.describe();
    let history: AgentMessage[];
    try {
      history = await this.history.load();
    } catch (err) {
      await this.closeRun(
        run,
        "history_unreadable",
        `the run could not start: the session's history could not be read (${(err as Error).message})`,
      );
      return { stopReason: "ERROR" };
    }
    const setup = await setupRun({
      command,
      model: { ...modelConfigFromEnv(this.env), fetch: this.deps.modelFetch },
      loadRecording: (sessionId) => this.loadRecording(sessionId, meta),
      openWorkspace: () => (meta.workspaceId ? this.workspace.open(meta.workspaceId, meta.owner) : Promise.resolve(null)),
      ids: this.deps.ids,
    });
    const brief =
      setup.ok && setup.tools
        ? await this.briefFor(
            command,
            history,
            setup.tools.definitions().map((d) => d.name),
          )
        : null;
    return runAgent(command.userText, command.options, {
      sessionId: this.id,
      runId: run.runId,
      workspaceId: meta.workspaceId,
      history,
      setup,
      log: this.runLog(),
      ids: this.deps.ids,
      clock: this.deps.clock,
      signal: run.controller.signal,
      retryOf: command.retryOf ?? null,
      brief,
    });
  }

  /** The Failure Prevention Brief for a run that offers `offered` tools (only sessions with a workspace have tools). */
  private async briefFor(command: PromptCommand, history: readonly AgentMessage[], offered: string[]) {
    // A replay plays recorded answers: a brief could not change them, and would muddle the verdict.
    if (offered.length === 0 || isReplayCommand(command)) return null;
    const denied = BUILTIN_TOOLS.map((t) => t.name).filter((name) => !offered.includes(name));
    return this.learning.brief({ offeredTools: offered, deniedTools: denied, retryOf: command.retryOf ?? null }, command.userText, history);
  }

  /** An external judge's verdict on a run of this session: recorded, and attributed when it is a fail. */
  async judge(
    runId: string,
    verdict: ExternalVerdict,
  ): Promise<SessionResult<{ judgeResult: JudgeResult; attribution: AttributionRecord | null }>> {
    const run = this.registry.find(runId);
    if (!run) return failure("run_not_found", `session '${this.id}' has no run '${runId}'`);
    try {
      const { judge, attribution } = await this.learning.judge(runId, run.startSeq, verdict);
      return ok({ judgeResult: judge, attribution });
    } catch (err) {
      if (err instanceof HarnessError) return failure(err.code, err.message);
      throw err;
    }
  }

  async attributions(): Promise<SessionResult<AttributionRecord[]>> {
    return readable(() => this.learning.attributions());
  }

  /** What a replay of one of this session's runs needs: its command and how many assistant turns came before it. */
  async runInfo(runId: string): Promise<SessionResult<RunInfo | null>> {
    const run = this.registry.find(runId);
    if (!run?.command) return ok(null);
    return readable(async () => {
      // The run's first message is its prompt; the replay starts at the assistant turns after it.
      const [first] = await readLogLines(this.log, this.deps.bucket, "messages", run.startSeq);
      const history = await this.history.load();
      const at = first ? history.findIndex((m) => m.id === decodeMessageLine(first.body, first.seq, this.id).id) : history.length;
      const assistantOffset = history.slice(0, at < 0 ? history.length : at).filter((m) => m.kind === "assistant").length;
      return { command: run.command!, assistantOffset, workspaceId: this.describe().workspaceId };
    });
  }

  private async readTrace(afterSeq: number): Promise<TraceRecord[]> {
    return (await readLogLines(this.log, this.deps.bucket, "trace", afterSeq)).map((l) => decodeTraceLine(l.body, l.seq, this.id));
  }

  /** A recorded session to replay: this one, or another of the same tenant. */
  private async loadRecording(sessionId: string, meta: OwnedSessionMeta): Promise<AgentMessage[]> {
    if (sessionId === this.id) return this.history.load();
    const store = new DurableSessionStore(this.env);
    if (!(await store.findOwned(sessionId, meta.owner))) throw new Error(`session '${sessionId}' does not exist`);
    return store.loadMessages(sessionId);
  }

  /** Appends the records that end a run the runtime could not end itself. */
  private async closeRun(
    run: { runId: string; startSeq: number },
    code: "run_interrupted" | "history_unreadable",
    message: string,
  ): Promise<void> {
    let records: ClosingRecord[];
    try {
      const messages = (await readLogLines(this.log, this.deps.bucket, "messages", run.startSeq)).map((l) =>
        decodeMessageLine(l.body, l.seq, this.id),
      );
      const events = (await readLogLines(this.log, this.deps.bucket, "events", run.startSeq)).map((l) =>
        decodeEventLine(l.body, l.seq, this.id),
      );
      records = closingRecords({ ...this.closing(run.runId, code, message), leftovers: runLeftovers(messages, events) });
    } catch {
      // The run's own records cannot be read: close it with what is certain.
      records = closingRecords({
        ...this.closing(run.runId, code, message),
        leftovers: { unanswered: [], started: new Set(), partial: null },
      });
    }
    for (const record of records) unwrapResult(this.appendValid(record.stream, [record.record]));
  }

  private closing(runId: string, code: "run_interrupted" | "history_unreadable", message: string) {
    return { sessionId: this.id, runId, parentId: this.meta.lastMessageId(), code, message, ids: this.deps.ids, clock: this.deps.clock };
  }

  private async withWorkspace<T>(fn: (meta: OwnedSessionMeta, workspaceId: string) => Promise<T>): Promise<SessionResult<T>> {
    const meta = this.describe();
    if (!meta.workspaceId) return failure("no_workspace", "this session has no workspace");
    try {
      return ok(await fn(meta, meta.workspaceId));
    } catch (err) {
      if (err instanceof HarnessError) return failure(err.code, err.message);
      throw err;
    }
  }

  /** The run's writes: durable appends first, then live subscribers. */
  private runLog(): RunLog {
    return {
      appendMessage: (message) => unwrapResult(this.appendValid("messages", [message])),
      appendEvent: (event) => unwrapResult(this.appendValid("events", [event])),
      appendTrace: (draft) => this.learning.record(draft),
    };
  }

  private openEventStream(afterSeq: number): ReadableStream<Uint8Array> {
    const replay = async (): Promise<SeqEvent[]> => unwrapResult(await this.loadEvents(afterSeq));
    return this.hub.open(afterSeq, replay, () => this.runs.active !== null);
  }

  private appendValid(stream: LogStream, records: (AgentMessage | AgentEvent | TraceRecord)[]): SessionResult<number[]> {
    const bodies = records.map((record) => ({ stream, body: encodeLine(record) }));
    let seqs: number[];
    try {
      seqs = this.log.append(bodies, this.transactionSync);
    } catch (err) {
      if (err instanceof RecordTooLargeError) return failure("record_too_large", err.message);
      throw err;
    }
    if (stream === "messages") {
      const messages = records as AgentMessage[];
      const newest = messages[messages.length - 1]!;
      this.meta.recordMessage(newest.id, newest.createdAt);
      this.history.appended(messages);
    } else if (stream === "events") {
      for (const [i, event] of records.entries()) this.hub.publish({ seq: seqs[i]!, event: event as AgentEvent });
    }
    this.flushes.afterAppend(bodies.reduce((n, b) => n + b.body.length, 0));
    return ok(seqs);
  }

  private async writeMetaObject(): Promise<void> {
    await this.deps.bucket.put(sessionKeys.meta(this.id), JSON.stringify(publicMeta(this.describe())), {
      httpMetadata: { contentType: "application/json" },
    });
  }
}

/** A read of the stored log; any failure (a lost segment, a corrupt line, R2 down) is `history_unreadable`. */
async function readable<T>(read: () => Promise<T>): Promise<SessionResult<T>> {
  try {
    return ok(await read());
  } catch (err) {
    return failure("history_unreadable", `the session's log could not be read: ${(err as Error).message}`);
  }
}

/** A prompt that replays a recorded session (`replay:<sessionId>`), as a case's replay does. */
function isReplayCommand(command: PromptCommand | null): boolean {
  return command?.model?.startsWith(REPLAY_MODEL_PREFIX) ?? false;
}
