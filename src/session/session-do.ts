import { DurableObject } from "cloudflare:workers";
import { AgentEvent, AgentMessage, AgentPromptCommand, formatIssues, randomIds, type IdGenerator } from "../domain";
import { runAgent, type RunOutcome } from "../runtime/agent-runtime";
import type { RunLog, ToolRunner } from "../runtime/run-log";
import { EventHub, type SeqEvent } from "./live-events";
import { RunRegistry } from "./run-registry";
import { SessionWorkspace } from "./session-workspace";
import { BUILTIN_TOOLS } from "../tools/registry";
import { ToolExecutionService } from "../tools/execution-service";
import { WorkspaceError } from "../workspace/errors";
import { runModel } from "./run-model";
import { sseResponse } from "./sse";
import type { AppEnv } from "../env";
import { decodeEventLine, decodeMessageLine, encodeLine } from "./jsonl";
import { readLog, readLogLines } from "./log-reader";
import { sessionKeys } from "./r2-layout";
import { SegmentFlusher, type FlushResult } from "./segment-flusher";
import { FlushScheduler } from "./flush-scheduler";
import { MAX_RECORD_BYTES, RecordTooLargeError, SessionLog, type LogStream } from "./session-log";
import { publicMeta, SessionMetaTable, type OwnedSessionMeta, type SessionMeta } from "./session-meta";

export { FLUSH_INTERVAL_MS, FLUSH_THRESHOLD_BYTES } from "./flush-scheduler";

export type SessionStatus = "idle" | "running";

export interface SessionInfo extends SessionMeta {
  status: SessionStatus;
  counts: { messages: number; events: number };
}

/** Expected failures cross the RPC boundary as values, so the code survives serialisation. */
export type SessionResult<T> = { ok: true; value: T } | { ok: false; code: SessionErrorCode; message: string };
export type SessionErrorCode =
  | "session_not_found"
  | "session_exists"
  | "invalid_record"
  | "record_too_large"
  | "flush_failed"
  | "session_busy"
  | "no_workspace"
  | WorkspaceError["code"];

export interface CreateSessionInput {
  id: string;
  workspaceId: string | null;
  projectId: string | null;
  title: string | null;
  owner: string | null;
  createdAt: string;
}

const STREAM_SCHEMA = { messages: AgentMessage, events: AgentEvent } as const;

/**
 * One per session, and the only writer of that session: it orders every record (SessionLog),
 * flushes the log to R2 (SegmentFlusher) and serves reads. Collaborators do the work; this class wires them.
 */
export class SessionDO extends DurableObject<AppEnv> {
  private readonly meta: SessionMetaTable;
  private readonly log: SessionLog;
  private segmentFlusher: SegmentFlusher | null = null;
  private readonly transactionSync: <T>(fn: () => T) => T;
  private readonly runs: RunRegistry;
  private readonly hub = new EventHub();
  private readonly workspace: SessionWorkspace;
  private messageCache: AgentMessage[] | null = null;
  /** Bumped on every message append, so a history load that raced an append is not cached. */
  private messageVersion = 0;
  private readonly flushes: FlushScheduler;

  /** The `fetch` the model client uses; tests answer model requests by replacing it. */
  modelFetch: typeof fetch = (input, init) => fetch(input, init);
  /** Id source for runs; tests make it deterministic. */
  ids: IdGenerator = randomIds;

  constructor(ctx: DurableObjectState, env: AppEnv) {
    super(ctx, env);
    this.transactionSync = (fn) => ctx.storage.transactionSync(fn);
    this.meta = new SessionMetaTable(ctx.storage.sql);
    this.log = new SessionLog(ctx.storage.sql);
    this.runs = new RunRegistry(ctx.storage.sql);
    this.workspace = new SessionWorkspace(ctx.storage.sql, this.transactionSync, env.STORE);
    this.flushes = new FlushScheduler({
      flush: async () => {
        const result = await this.flusher.flush();
        if (result.recordsFlushed > 0) await this.writeMetaObject();
        return result;
      },
      measureUnflushedBytes: () => this.log.unflushedBytes(),
      setAlarm: (atMs) => ctx.storage.setAlarm(atMs),
      waitUntil: (work) => ctx.waitUntil(work),
      now: Date.now,
    });
    this.closeOrphanedRuns();
  }

  /** The flusher of this session (only exists once the session does); tests swap its bucket. */
  get flusher(): SegmentFlusher {
    const meta = this.meta.get();
    if (!meta) throw new Error("session not created");
    this.segmentFlusher ??= new SegmentFlusher(meta.id, this.log, this.transactionSync, this.env.STORE);
    return this.segmentFlusher;
  }

  /** Creates the session; refused when this object already holds one. */
  async create(input: CreateSessionInput): Promise<SessionResult<SessionMeta>> {
    if (this.meta.get()) return { ok: false, code: "session_exists", message: `session '${input.id}' already exists` };
    const meta: OwnedSessionMeta = { ...input, updatedAt: input.createdAt };
    this.meta.insert(meta);
    // session.json is a mirror; if R2 is down now, the next flush writes it.
    await this.writeMetaObject().catch(() => this.flushes.armAlarm());
    return { ok: true, value: publicMeta(meta) };
  }

  /** The session's meta including its owner, or null when this object holds no session. */
  describe(): OwnedSessionMeta | null {
    return this.meta.get();
  }

  info(): SessionInfo | null {
    const meta = this.meta.get();
    if (!meta) return null;
    return { ...publicMeta(meta), status: this.runs.current() ? "running" : "idle", counts: this.log.counts() };
  }

  appendMessages(records: unknown[]): SessionResult<number[]> {
    return this.append("messages", records);
  }

  appendEvents(records: unknown[]): SessionResult<number[]> {
    return this.append("events", records);
  }

  async loadMessages(): Promise<SessionResult<AgentMessage[]>> {
    const meta = this.meta.get();
    if (!meta) return notFound();
    while (!this.messageCache) {
      const version = this.messageVersion;
      const loaded = (await readLogLines(this.log, this.env.STORE, "messages")).map((line) => decodeMessageLine(line.body, line.seq, meta.id));
      if (version === this.messageVersion) this.messageCache = loaded;
    }
    return { ok: true, value: [...this.messageCache] };
  }

  async loadEvents(afterSeq = 0): Promise<SessionResult<{ seq: number; event: AgentEvent }[]>> {
    const meta = this.meta.get();
    if (!meta) return notFound();
    const lines = await readLogLines(this.log, this.env.STORE, "events", afterSeq);
    return { ok: true, value: lines.map((line) => ({ seq: line.seq, event: decodeEventLine(line.body, line.seq, meta.id) })) };
  }

  /** The stream as JSONL bytes: flushed segments, then the unflushed tail. */
  exportJsonl(stream: LogStream): SessionResult<ReadableStream<Uint8Array>> {
    if (!this.meta.get()) return notFound();
    const batches = readLog(this.log, this.env.STORE, stream);
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await batches.next();
        if (next.done) return controller.close();
        controller.enqueue(encoder.encode(next.value.map((line) => line.body + "\n").join("")));
      },
      async cancel() {
        await batches.return(undefined);
      },
    });
    return { ok: true, value: body };
  }

  /**
   * Flushes the unflushed tail to R2 now (end of a run, size threshold, alarm). A failure is
   * reported, not thrown: the rows stay in SQLite and the alarm retries.
   */
  async flush(): Promise<SessionResult<FlushResult>> {
    if (!this.meta.get()) return notFound();
    try {
      return { ok: true, value: await this.flushes.flush() };
    } catch (err) {
      await this.flushes.armAlarm();
      return { ok: false, code: "flush_failed", message: `flush to R2 failed and will be retried: ${(err as Error).message}` };
    }
  }

  override async alarm(): Promise<void> {
    this.flushes.alarmFired();
    if (!this.meta.get()) return;
    const result = await this.flush();
    // While a run is active the alarm doubles as a heartbeat: a streaming model fetch alone may not
    // keep the object in memory.
    if (this.runs.current() || (result.ok && this.log.flushState().flushedSeq < this.log.lastSeq())) await this.flushes.armAlarm();
  }

  /**
   * Streaming endpoints, reached through `stub.fetch` so the SSE body flows straight to the client
   * and a client's disconnect reaches the stream's cancel(). The Worker has already authenticated,
   * checked ownership and validated the request.
   *   POST /run      body: AgentPromptCommand  -> the run's events as SSE (409 when busy)
   *   GET  /events?after=<seq>                  -> replay after seq, then the live tail, then end
   */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const meta = this.meta.get();
    if (!meta) return jsonError(404, "session_not_found", "session not found");
    if (request.method === "POST" && url.pathname === "/run") {
      const command = AgentPromptCommand.parse(await request.json());
      const started = this.startRun(command);
      if (!started.ok) return jsonError(409, started.code, started.message);
      return sseResponse(this.openEventStream(started.value.startSeq), started.value.runId);
    }
    if (request.method === "GET" && url.pathname === "/events") {
      return sseResponse(this.openEventStream(Number(url.searchParams.get("after") ?? "0")), this.runs.current()?.runId ?? null);
    }
    return jsonError(404, "route_not_found", `no session route ${request.method} ${url.pathname}`);
  }

  /** Cancels the active run (model request and tools); it ends with ABORTED. */
  abortRun(): { aborted: boolean; runId: string | null } {
    const run = this.runs.current();
    if (!run) return { aborted: false, runId: null };
    run.controller.abort();
    return { aborted: true, runId: run.runId };
  }

  private startRun(command: AgentPromptCommand): SessionResult<{ runId: string; startSeq: number }> {
    const meta = this.meta.get()!;
    const runId = this.ids.next("run");
    const run = this.runs.begin(runId, this.log.lastSeq(), new Date().toISOString());
    if (!run) return { ok: false, code: "session_busy", message: `a run (${this.runs.current()!.runId}) is already active in this session; wait for it or abort it` };
    const done = this.executeRun(meta, command, run.runId, run.controller.signal).finally(async () => {
      await this.flush();
    });
    this.ctx.waitUntil(done);
    this.ctx.waitUntil(this.flushes.armAlarm());
    return { ok: true, value: { runId, startSeq: run.startSeq } };
  }

  private async executeRun(meta: OwnedSessionMeta, command: AgentPromptCommand, runId: string, signal: AbortSignal): Promise<void> {
    let outcome: RunOutcome = { stopReason: "ERROR" };
    try {
      const history = unwrapLocal(await this.loadMessages());
      const tools = await this.toolsFor(meta, command).catch((err: unknown) => ({ code: (err as WorkspaceError).code ?? "internal_error", message: (err as Error).message }));
      outcome = await runAgent(command.userText, command.options, {
        sessionId: meta.id,
        runId,
        workspaceId: meta.workspaceId,
        history,
        model: runModel(this.env, meta, command.model, this.modelFetch),
        tools: "execute" in tools ? tools : null,
        setupError: "execute" in tools ? undefined : tools,
        log: this.runLog(),
        ids: this.ids,
        clock: Date.now,
        signal,
      });
    } catch (err) {
      // The runtime never throws; this is a failure before it could start (e.g. the history is unreadable).
      this.recordRunFailure(runId, "internal_error", `the run could not start: ${(err as Error).message}`);
    } finally {
      this.runs.finish(runId, outcome.stopReason, new Date().toISOString());
      // Normally the terminal event already closed them; this covers a run that died without one.
      this.hub.closeAll();
    }
  }

  /** The run's tools behind its policy; a session without a workspace gets an empty tool list. */
  private async toolsFor(meta: OwnedSessionMeta, command: AgentPromptCommand): Promise<ToolRunner> {
    const fs = meta.workspaceId ? await this.workspace.open(meta.workspaceId, meta.owner) : null;
    return new ToolExecutionService({ tools: BUILTIN_TOOLS, fs, options: command.options });
  }

  /** `GET /sessions/:id/files/<path>`: the file as the agent sees it, overlay first. */
  async readFile(path: string): Promise<SessionResult<Uint8Array>> {
    return this.withWorkspace((meta, wid) => this.workspace.readFile(wid, meta.owner, path));
  }

  /** `GET /sessions/:id/changes`: the session's changes as a unified diff. */
  async changes(): Promise<SessionResult<string>> {
    return this.withWorkspace((meta, wid) => this.workspace.changes(wid, meta.owner));
  }

  private async withWorkspace<T>(fn: (meta: OwnedSessionMeta, workspaceId: string) => Promise<T>): Promise<SessionResult<T>> {
    const meta = this.meta.get();
    if (!meta) return notFound();
    if (!meta.workspaceId) return { ok: false, code: "no_workspace", message: "this session has no workspace" };
    try {
      return { ok: true, value: await fn(meta, meta.workspaceId) };
    } catch (err) {
      if (err instanceof WorkspaceError) return { ok: false, code: err.code, message: err.message };
      throw err;
    }
  }

  /** The run's writes: durable appends first, then live subscribers. */
  private runLog(): RunLog {
    return {
      appendMessage: (message) => {
        unwrapLocal(this.append("messages", [message]));
      },
      appendEvent: (event) => {
        unwrapLocal(this.append("events", [event]));
      },
    };
  }

  private openEventStream(afterSeq: number): ReadableStream<Uint8Array> {
    const replay = async (): Promise<SeqEvent[]> => unwrapLocal(await this.loadEvents(afterSeq));
    return this.hub.open(afterSeq, replay, () => this.runs.current() !== null);
  }

  /** Runs that were active when the object died are closed, so the session stays usable and readable. */
  private closeOrphanedRuns(): void {
    const meta = this.meta.get();
    if (!meta) return;
    for (const runId of this.runs.orphaned()) {
      this.recordRunFailure(runId, "run_interrupted", "the run was interrupted (the server restarted); send the prompt again");
      this.runs.finish(runId, "ERROR", new Date().toISOString());
    }
  }

  /** Ends a run the runtime could not end itself: an ERROR assistant message and agent_error. */
  private recordRunFailure(runId: string, code: string, message: string): void {
    const meta = this.meta.get()!;
    const now = new Date().toISOString();
    const parentId = this.meta.lastMessageId();
    this.append("messages", [{ kind: "assistant", id: this.ids.next("message"), sessionId: meta.id, parentId, createdAt: now, text: "", stopReason: "ERROR" }]);
    this.append("events", [{ type: "agent_error", eventId: this.ids.next("event"), sessionId: meta.id, createdAt: now, runId, code, message }]);
  }

  private append(stream: LogStream, records: unknown[]): SessionResult<number[]> {
    const meta = this.meta.get();
    if (!meta) return notFound();
    const parsed: (AgentMessage | AgentEvent)[] = [];
    for (const [i, record] of records.entries()) {
      const result = STREAM_SCHEMA[stream].safeParse(record);
      if (!result.success) return { ok: false, code: "invalid_record", message: `record ${i}: ${formatIssues(result.error.issues)}` };
      if (result.data.sessionId !== meta.id) {
        return { ok: false, code: "invalid_record", message: `record ${i} belongs to session '${result.data.sessionId}', not '${meta.id}'` };
      }
      parsed.push(result.data);
    }
    const bodies = parsed.map((record) => ({ stream, body: encodeLine(record) }));
    let seqs: number[];
    try {
      seqs = this.log.append(bodies, this.transactionSync);
    } catch (err) {
      if (err instanceof RecordTooLargeError) return { ok: false, code: "record_too_large", message: err.message };
      throw err;
    }
    if (stream === "messages") {
      const newest = parsed[parsed.length - 1] as AgentMessage;
      this.meta.recordMessage(newest.id, newest.createdAt);
      this.messageVersion++;
      this.messageCache?.push(...(parsed as AgentMessage[]));
    }
    if (stream === "events") parsed.forEach((event, i) => this.hub.publish({ seq: seqs[i]!, event: event as AgentEvent }));
    this.flushes.afterAppend(bodies.reduce((n, b) => n + b.body.length, 0));
    return { ok: true, value: seqs };
  }

  private async writeMetaObject(): Promise<void> {
    const meta = this.meta.get();
    if (!meta) return;
    await this.env.STORE.put(sessionKeys.meta(meta.id), JSON.stringify(publicMeta(meta)), {
      httpMetadata: { contentType: "application/json" },
    });
  }
}

function unwrapLocal<T>(result: SessionResult<T>): T {
  if (result.ok) return result.value;
  throw new Error(`${result.code}: ${result.message}`);
}

function jsonError(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status });
}

function notFound(): { ok: false; code: "session_not_found"; message: string } {
  return { ok: false, code: "session_not_found", message: "session not found" };
}

export { MAX_RECORD_BYTES };
