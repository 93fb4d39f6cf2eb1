import type { ExternalVerdict } from "../awtl/trace-sink";
import {
  AgentEvent,
  AgentMessage,
  type CompactionMessage,
  ERROR_REGISTRY,
  eventJsonWithSeq,
  failure,
  formatIssues,
  HarnessError,
  nowIso,
  ok,
  type AgentPromptCommand as PromptCommand,
  PromptDelivery,
  type TraceRecord,
  unwrapResult,
} from "../domain";
import type { AppEnv } from "../env";
import { logLine } from "../log";
import { isRecordedTurn, modelConfigFromEnv } from "../model";
import { runAgent } from "../runtime/agent-runtime";
import { type ClosingRecord, closingRecords, runLeftovers } from "../runtime/run-closing";
import type { RunLog, RunRecord } from "../runtime/run-log";
import { setupRun } from "../runtime/run-setup";
import { tenantObjectName } from "../tenant/tenant-api";
import { Downloads } from "../workspace/downloads";
import type { OverlayVersionRef, StagedChange } from "../workspace/overlay";
import { textStream } from "../workspace/streams";
import { FlushScheduler } from "./flush-scheduler";
import { decodeEventLine, decodeMessageLine, encodeLine } from "./jsonl";
import { EventHub, type SeqEvent, type StreamScope } from "./live-events";
import { readable, readLog, readLogLines, type SeqLine, unreadableMessage } from "./log-reader";
import { Backfills } from "./log-tables";
import { HistoryStartRow, loadMessagesAfter, loadStoredMessages, MessageHistory, type RunHistory } from "./message-history";
import { OlderObjects } from "./older-objects";
import { type IntakeEvent, PromptIntake } from "./prompt-intake";
import { PromptQueue } from "./prompt-queue";
import { deleteSessionObjects, sessionKeys } from "./r2-layout";
import { type RunEnding, RunTally } from "./run-ending";
import { type ActiveRun, RunRegistry } from "./run-registry";
import { RunSupervisor } from "./run-supervisor";
import { SegmentFlusher } from "./segment-flusher";
import { type FlushSummary, type RunInfo, SESSION_STREAM_PATHS, type SessionInfo, type SessionResult } from "./session-api";
import { compactOnDemand, contextStatus, type SessionModelContext } from "./session-context";
import type { SessionDeps } from "./session-deps";
import {
  type ForkOrigin,
  ForkOriginTable,
  type ForkSource,
  forkClosingResults,
  forkSource,
  messageLines,
  readMessageLines,
} from "./session-fork";
import { type JudgeOutcome, SessionLearning } from "./session-learning";
import { type LogStream, RecordTooLargeError, SessionLog } from "./session-log";
import { type OwnedSessionMeta, publicMeta, type SessionMeta, SessionMetaTable } from "./session-meta";
import { DurableSessionStore } from "./session-store";
import { SessionWorkspace } from "./session-workspace";
import { sseResponse } from "./sse";
import { refusal, StreamResume } from "./stream-resume";

const STREAM_SCHEMA = { messages: AgentMessage, events: AgentEvent } as const;

/** A record for the log, with its stream. */
type LogRecord = RunRecord | { stream: "trace"; record: TraceRecord };

/**
 * A session that exists in this object's storage, with the collaborators that do its work: the
 * ordered log (SessionLog) and its flushes to R2 (SegmentFlusher, FlushScheduler), the message
 * history, live streams (EventHub) and where a reconnecting one resumes (StreamResume), the workspace
 * view and the run slot (RunSupervisor).
 */
export class Session {
  readonly id: string;
  private readonly meta: SessionMetaTable;
  private readonly log: SessionLog;
  /** Lookups in the log for what objects of older versions lack. */
  private readonly older: OlderObjects;
  private readonly resumes: StreamResume;
  private readonly flusher: SegmentFlusher;
  private readonly flushes: FlushScheduler;
  private readonly hub = new EventHub();
  private readonly downloads = new Downloads();
  private readonly history: MessageHistory;
  private readonly workspace: SessionWorkspace;
  private readonly registry: RunRegistry;
  private readonly runs: RunSupervisor;
  private readonly queue: PromptQueue;
  private readonly intake: PromptIntake;
  private readonly learning: SessionLearning;
  private readonly transactionSync: <T>(fn: () => T) => T;
  private readonly waitUntil: (work: Promise<unknown>) => void;
  private readonly storage: DurableObjectStorage;
  private readonly forkOrigin: ForkOriginTable;
  /** Set by `destroy`: nothing more is written, to SQLite or R2. */
  private destroyed = false;
  /** Writes of `session.json` under way: a deletion lets them land before it removes the session's objects. */
  private readonly metaWrites = new Set<Promise<unknown>>();
  /** A deletion has begun: nothing new starts. */
  private deleting = false;

  isDeleting(): boolean {
    return this.deleting;
  }
  private compacting = false;
  /** The manual compaction under way: a deletion or the client's abort cancels it (its model request too); a deletion waits for it. */
  private compaction: { controller: AbortController; done: Promise<void>; abortedByClient: boolean } | null = null;

  constructor(
    ctx: DurableObjectState,
    private readonly env: AppEnv,
    private readonly deps: SessionDeps,
    meta: OwnedSessionMeta,
  ) {
    const sql = ctx.storage.sql;
    // Tables a version that had them kept up to date: nothing to fill from the log for them.
    const kept = new Set(
      sql
        .exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('open_compaction', 'withdrawn_runs')`)
        .toArray()
        .map((r) => r.name),
    );
    // A manual compaction between its compaction_started and its end: a restart closes it (recovery).
    sql.exec(`CREATE TABLE IF NOT EXISTS open_compaction (id INTEGER PRIMARY KEY CHECK (id = 1))`);
    this.id = meta.id;
    this.transactionSync = (fn) => ctx.storage.transactionSync(fn);
    this.waitUntil = (work) => ctx.waitUntil(work);
    this.storage = ctx.storage;
    this.meta = new SessionMetaTable(sql);
    this.log = new SessionLog(sql);
    const backfills = new Backfills(sql, this.log.lastSeq(), [
      ...(kept.has("open_compaction") ? (["open_compaction"] as const) : []),
      ...(kept.has("withdrawn_runs") ? (["withdrawn_runs"] as const) : []),
    ]);
    // After a restart the newest message comes from the log (the session row is only brought up to date at flushes).
    this.meta.restoreHead(this.log.newestMessage());
    this.flusher = new SegmentFlusher(meta.id, this.log, this.transactionSync, deps.bucket);
    this.flushes = new FlushScheduler({
      flush: async () => {
        // A flush that a running one chained (`flushAgain`) may come after a deletion began.
        if (this.destroyed) return { segmentsWritten: 0, recordsFlushed: 0, flushedSeq: 0 };
        const result = await this.flusher.flush();
        if (result.recordsFlushed > 0) {
          this.meta.saveHead();
          await this.writeMetaObject();
        }
        return result;
      },
      measureUnflushedBytes: () => this.log.unflushedBytes(),
      setAlarm: (atMs) => ctx.storage.setAlarm(atMs),
      waitUntil: (work) => ctx.waitUntil(work),
      now: deps.clock,
    });
    this.history = new MessageHistory((afterSeq) => loadMessagesAfter(this.log, deps.bucket, this.id, afterSeq), new HistoryStartRow(sql));
    // Each workspace change is stamped with the log's last seq, so the workspace at a message can be rebuilt.
    this.workspace = new SessionWorkspace(sql, this.transactionSync, deps.bucket, () => this.log.lastSeq());
    this.forkOrigin = new ForkOriginTable(sql);
    this.registry = new RunRegistry(sql);
    this.learning = new SessionLearning({
      sql,
      ids: deps.ids,
      clock: deps.clock,
      bucket: deps.bucket,
      projects: env.PROJECTS,
      log: this.log,
      registry: this.registry,
      queued: (runId) => this.queue.hasRun(runId),
      describe: () => this.describe(),
      appendTrace: (record) => unwrapResult(this.appendValid("trace", [record]))[0]!,
      waitUntil: (work) => ctx.waitUntil(work),
    });
    this.runs = new RunSupervisor({
      sessionId: meta.id,
      registry: this.registry,
      ids: deps.ids,
      clock: deps.clock,
      lastSeq: () => this.log.lastSeq(),
      announce: (run) => this.appendEvent({ type: "agent_started", runId: run.runId }),
      execute: (run, command) => this.execute(run, command),
      onRunEnded: (_runId, outcome) => this.intake.runEnded(outcome),
      afterRun: async () => {
        // Normally the terminal event already ended them; this covers a run that died without one.
        this.hub.closeAll((runId) => this.intake.waiting(runId));
        this.reportSummary();
        await this.flush();
      },
      heartbeat: () => this.flushes.armAlarm(),
      waitUntil: (work) => ctx.waitUntil(work),
    });
    this.queue = new PromptQueue(sql);
    this.intake = new PromptIntake({
      sql,
      queue: this.queue,
      runs: this.runs,
      ids: deps.ids,
      clock: deps.clock,
      lastSeq: () => this.log.lastSeq(),
      appendEvent: (event) => this.appendEvent(event),
    });
    this.older = new OlderObjects({
      sessionId: meta.id,
      log: this.log,
      bucket: deps.bucket,
      backfills,
      registry: this.registry,
      intake: this.intake,
    });
    this.resumes = new StreamResume({
      sessionId: meta.id,
      log: this.log,
      bucket: deps.bucket,
      older: this.older,
      registry: this.registry,
      queue: this.queue,
      activeRunId: () => this.runs.active?.runId ?? null,
      answer: (runId, afterSeq, scope) => this.streamAnswer(runId, afterSeq, scope),
    });
  }

  /** Mirrors the meta to R2 after creation; if R2 is down now, the next flush writes it. */
  async created(): Promise<void> {
    await this.writeMetaObject().catch(() => this.flushes.armAlarm());
  }

  describe(): OwnedSessionMeta {
    return this.meta.get()!;
  }

  /** The session this one was forked from, if it is a fork. */
  forkedFrom(): ForkOrigin | null {
    return this.forkOrigin.get();
  }

  async info(): Promise<SessionInfo> {
    const base = {
      ...publicMeta(this.describe()),
      forkedFrom: this.forkedFrom(),
      status: this.busy() ? ("running" as const) : ("idle" as const),
      counts: this.log.counts(),
      queue: this.queue.snapshot(),
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
    if (this.deleting) return failure("session_not_found", `session '${this.id}' is being deleted`);
    if (this.busy()) return failure("session_busy", "a run or a compaction is active in this session; wait for it or abort it");
    this.compacting = true;
    const controller = new AbortController();
    let finished = () => {};
    const compaction = { controller, done: new Promise<void>((resolve) => (finished = resolve)), abortedByClient: false };
    this.compaction = compaction;
    // Cut off by the session's deletion, or by the client (`abortRun`).
    const cutOff = () =>
      compaction.abortedByClient && !this.deleting
        ? failure("compaction_aborted" as const, "the compaction was aborted before it finished; nothing was compacted")
        : failure("session_not_found" as const, `session '${this.id}' was deleted during the compaction`);
    try {
      const history = await this.history.load();
      const meta = this.describe();
      const result = await compactOnDemand(history.messages, {
        ...this.modelContext(),
        signal: controller.signal,
        abortedByClient: () => compaction.abortedByClient,
        assistantsBefore: history.before.assistants,
        ...(instructions ? { instructions } : {}),
        loadRecording: (sessionId) => this.loadRecording(sessionId, meta),
        log: {
          event: (body) => {
            // Marked in the same step as the event is stored, so a restart finds what it has to close.
            if (body.type === "compaction_started") this.storage.sql.exec(`INSERT OR REPLACE INTO open_compaction (id) VALUES (1)`);
            else this.storage.sql.exec(`DELETE FROM open_compaction`);
            unwrapResult(this.appendValid("events", [this.envelope("event", body) as AgentEvent]));
            // The session is busy until it ends: the list says so too, as for a run.
            if (body.type === "compaction_started") this.reportSummary();
          },
          append: (record) => {
            const { kind, ...body } = record;
            const message = { kind, ...this.envelope("message", body) } as CompactionMessage;
            unwrapResult(this.appendValid("messages", [message]));
            return message;
          },
        },
      });
      if (controller.signal.aborted) return cutOff();
      if (result.ok) return ok({ messageId: result.messageId, tokensBefore: result.tokensBefore, tokensAfter: result.tokensAfter });
      if (result.code === "nothing_to_compact") return failure("nothing_to_compact", result.message);
      return failure("compaction_failed", `${result.code}: ${result.message}`);
    } catch (err) {
      if (controller.signal.aborted) return cutOff();
      if (err instanceof HarnessError) return failure("history_unreadable", err.message);
      return failure("history_unreadable", `the session's log could not be read: ${(err as Error).message}`);
    } finally {
      // Ended here, whether or not it got to write its end event (an abort writes none).
      this.storage.sql.exec(`DELETE FROM open_compaction`);
      this.compacting = false;
      this.reportSummary();
      // Still the session's compaction while its records go to R2: a deletion waits for that flush,
      // or the segment it puts would land after the deletion listed the session's objects.
      try {
        if (!this.deleting) await this.flush();
      } finally {
        this.compaction = null;
        finished();
      }
    }
  }

  /** id, session and time for a record written outside a run. */
  private envelope<T extends object>(kind: "message" | "event", body: T) {
    const at = nowIso(this.deps.clock);
    return kind === "message"
      ? { id: this.deps.ids.next("message"), sessionId: this.id, parentId: this.meta.lastMessageId(), createdAt: at, ...body }
      : { eventId: this.deps.ids.next("event"), sessionId: this.id, createdAt: at, ...body };
  }

  /** Validates and appends records of one stream; all or nothing. */
  /**
   * An imported conversation's messages, appended only into a session that has none yet: the repeat
   * of an import (same Idempotency-Key, concurrent or after a failure half-way) fills it at most once.
   */
  fill(records: unknown[]): SessionResult<{ filled: boolean }> {
    if (this.log.counts().messages > 0) return ok({ filled: false });
    const appended = this.append("messages", records);
    return appended.ok ? ok({ filled: true }) : appended;
  }

  append(stream: "messages" | "events", records: unknown[]): SessionResult<number[]> {
    const parsed: (AgentMessage | AgentEvent)[] = [];
    for (const [i, record] of records.entries()) {
      const result = STREAM_SCHEMA[stream].safeParse(record);
      if (!result.success) return failure("invalid_record", `record ${i}: ${formatIssues(result.error.issues)}`);
      if (result.data.sessionId !== this.id)
        return failure("invalid_record", `record ${i} belongs to session '${result.data.sessionId}', not '${this.id}'`);
      // A message is stored as it came, as decodeLine keeps it (zod's output reorders its fields and
      // drops a `__proto__` key of tool-call arguments); the message schemas add nothing to it.
      parsed.push(stream === "messages" ? (record as AgentMessage) : result.data);
    }
    return this.appendValid(stream, parsed);
  }

  /**
   * The whole log's messages (read through the kept copy where it holds them) as JSONL: a long
   * session's are more than one RPC answer carries.
   */
  async loadMessages(): Promise<SessionResult<ReadableStream<Uint8Array>>> {
    const messages = await readable(() => loadStoredMessages(this.log, this.deps.bucket, this.id));
    return messages.ok ? ok(await textStream(messageLines(messages.value))) : messages;
  }

  async loadEvents(afterSeq = 0): Promise<SessionResult<SeqEvent[]>> {
    return readable(async () => {
      const lines = await readLogLines(this.log, this.deps.bucket, "events", afterSeq);
      return lines.map((line) => ({ seq: line.seq, event: decodeEventLine(line.body, line.seq, this.id) }));
    });
  }

  /**
   * A stream's records after `afterSeq` as JSONL (flushed segments, then the unflushed tail), and
   * `through`: the log's last seq when the read began, which a client passes back as `after` to read
   * only what came since. The first batch is read before answering, so a log that cannot be read is
   * a `history_unreadable` error rather than a 200 that breaks off (a failure further on can only end
   * the body early). It is one of the few downloads a session serves at once (`Downloads`): past
   * them, `too_many_downloads`.
   */
  async exportJsonl(stream: LogStream, afterSeq = 0): Promise<SessionResult<{ body: ReadableStream<Uint8Array>; through: number }>> {
    if (!this.downloads.take()) return this.downloadsBusy();
    // Read before the log is listed, in the same synchronous step: the read holds everything up to it.
    const through = this.log.lastSeq();
    const batches = readLog(this.log, this.deps.bucket, stream, afterSeq);
    const first = await readable(() => batches.next());
    if (!first.ok) {
      this.downloads.giveBack();
      return first;
    }
    const encoder = new TextEncoder();
    // Events go out with their seq (`{"seq":N,...}`), so a client that loaded them knows where to resume.
    const line = stream === "events" ? (l: SeqLine) => eventJsonWithSeq(l.seq, l.body) : (l: SeqLine) => l.body;
    const encode = (lines: SeqLine[]) => encoder.encode(lines.map((l) => `${line(l)}\n`).join(""));
    let pending: IteratorResult<SeqLine[]> | null = first.value;
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const next = pending ?? (await batches.next());
          pending = null;
          if (next.done) return controller.close();
          controller.enqueue(encode(next.value));
        },
        async cancel() {
          await batches.return(undefined);
        },
      },
      { highWaterMark: 0 },
    );
    return ok({ body: this.downloads.serve(body), through });
  }

  /** The log's last seq (`through` of an export starting now). */
  logThrough(): number {
    return this.log.lastSeq();
  }

  /** The refusal of a download while the session serves its maximum (`Downloads`). */
  private downloadsBusy() {
    return this.downloads.refusal(`session '${this.id}'`, "downloads of its logs, changes, changed files and attribution pages");
  }

  /**
   * What a fork of this session at `atMessageId` (default: the newest message) copies: committed
   * messages only (a running run's later records are not there yet) and the workspace changes made
   * up to that message.
   */
  async forkSource(atMessageId?: string): Promise<SessionResult<ForkSource>> {
    const lines = await readable(() => readLogLines(this.log, this.deps.bucket, "messages"));
    if (!lines.ok) return lines;
    const stored = lines.value.map((line) => ({ seq: line.seq, message: decodeMessageLine(line.body, line.seq, this.id) }));
    const picked = forkSource(stored, atMessageId, (max) => this.workspace.versionRefsUpTo(max), this.log.lastSeq());
    if (!picked.ok) return failure("message_not_found", `session '${this.id}' has no message '${atMessageId}'`);
    const meta = this.describe();
    const { messages: copied, ...source } = picked.source;
    const closing = forkClosingResults(copied, { sessionId: this.id, ids: this.deps.ids, clock: this.deps.clock });
    const messages = await textStream(messageLines([...copied, ...closing]));
    return ok({ ...source, messages, workspaceId: meta.workspaceId, projectId: meta.projectId, title: meta.title });
  }

  /** The bytes of changes `forkSource` listed, in their order. */
  forkChangeBytes(refs: readonly OverlayVersionRef[]): SessionResult<Uint8Array[]> {
    const out: Uint8Array[] = [];
    for (const ref of refs) {
      const bytes = this.workspace.versionBytes(ref);
      if (!bytes) return failure("fork_source_changed", `'${ref.path}' of session '${this.id}' changed while it was copied; fork again`);
      out.push(bytes);
    }
    return ok(out);
  }

  /**
   * Keeps the changes at `from`, `from + 1`, ... of those a new fork's `attempt` copies, with their
   * bytes, until `importFork` applies them (a fork's changes arrive in parts). A filled fork ignores them.
   */
  stageForkChanges(attempt: string, from: number, changes: StagedChange[]): SessionResult<null> {
    if (!this.forkedFrom()) this.workspace.stageChanges(attempt, from, changes);
    return ok(null);
  }

  /**
   * Fills a new fork in one synchronous step once its messages are read: the copied messages (same
   * ids, so the parentId chain holds; this session's id), the `staged` workspace changes of `attempt`
   * stamped with the new seqs of their messages, and last its origin, which marks it filled. A
   * repeat (an idempotent retry) finds the origin recorded and changes nothing. A fork that fails
   * half-way is removed by the store (`discardUnfilledFork`), never filled twice. Answers the origin
   * the fork holds.
   */
  async importFork(
    origin: ForkOrigin,
    lines: ReadableStream<Uint8Array>,
    attempt: string,
    staged: number,
  ): Promise<SessionResult<ForkOrigin>> {
    const filled = this.forkedFrom();
    if (filled) {
      await lines.cancel();
      return ok(filled);
    }
    const messages = await readMessageLines(lines);
    // A repeat that arrived while this one read its messages may have filled the fork meanwhile.
    const meanwhile = this.forkedFrom();
    if (meanwhile) return ok(meanwhile);
    if (!this.workspace.stagedComplete(attempt, staged)) throw new Error(`fork ${this.id} did not receive its ${staged} workspace changes`);
    if (this.meta.lastMessageId() !== null) throw new Error(`fork ${this.id} already holds messages from an attempt that failed`);
    const copied = messages.map((m) => ({ ...m, sessionId: this.id }));
    const seqs = copied.length > 0 ? this.appendValid("messages", copied) : ok([] as number[]);
    if (!seqs.ok) return seqs;
    const seqOf = new Map(copied.map((m, i) => [m.id, seqs.value[i]!]));
    this.workspace.applyStagedChanges(attempt, (messageId) => (messageId === null ? 0 : (seqOf.get(messageId) ?? 0)));
    this.forkOrigin.set(origin);
    return ok(origin);
  }

  /** Renames the session (null clears the title); the R2 mirror and the tenant's list follow. */
  async setTitle(title: string | null): Promise<SessionMeta> {
    this.meta.setTitle(title);
    this.reportSummary();
    await this.writeMetaObject().catch(() => this.flushes.armAlarm());
    return publicMeta(this.describe());
  }

  /**
   * Removes the session: its queue, its run (aborted, and awaited so it writes nothing after), its
   * R2 objects (prefix `sessions/{id}/`), then its SQLite data and alarm. Each step can be repeated,
   * so a deletion that failed half-way is finished by calling it again.
   */
  async destroy(): Promise<void> {
    // From here a prompt or a compaction is refused: one accepted while the run winds down would
    // start after it, on tables about to be dropped.
    this.deleting = true;
    this.queue.clear();
    this.runs.abort();
    await this.runs.idle();
    const compaction = this.compaction;
    compaction?.controller.abort();
    await compaction?.done;
    this.destroyed = true;
    // R2 writes under way (a flush's segments, a rename's session.json) land first: one landing after
    // the objects were removed would outlive the session (hunt 61).
    await this.flushes.settled();
    while (this.metaWrites.size > 0) await Promise.allSettled([...this.metaWrites]);
    await this.learning.sessionDeleted();
    await deleteSessionObjects(this.deps.bucket, this.id);
    await this.storage.deleteAlarm();
    await this.storage.deleteAll();
  }

  /**
   * Tells the tenant's index what the list shows: status, counts, updatedAt and title. Sent at the
   * start and end of every run and manual compaction, on a rename, after recovery closed something, and once to an object
   * older code wrote, in the background; `version` (the log's last seq) keeps a late report from
   * overwriting a newer one. A lost report is corrected by the next one.
   */
  private reportSummary(): void {
    if (this.destroyed) return;
    const meta = this.describe();
    const counts = this.log.counts();
    const summary = {
      version: this.log.lastSeq(),
      title: meta.title,
      updatedAt: meta.updatedAt,
      status: this.busy() ? ("running" as const) : ("idle" as const),
      counts: { messages: counts.messages, events: counts.events },
    };
    const tenant = this.env.TENANTS.getByName(tenantObjectName(this.describe().owner));
    this.waitUntil(Promise.resolve(tenant.reportSession(this.id, summary)).catch(() => {}));
  }

  /** Flushes the unflushed tail to R2 now. A failure is reported, not thrown: the rows stay and the alarm retries. */
  async flush(): Promise<SessionResult<FlushSummary>> {
    if (this.destroyed) return ok({ segmentsWritten: 0, recordsFlushed: 0, flushedSeq: 0 });
    try {
      return ok(await this.flushes.flush());
    } catch (err) {
      await this.flushes.armAlarm();
      return failure("flush_failed", `flush to R2 failed and will be retried: ${(err as Error).message}`);
    }
  }

  async alarm(): Promise<void> {
    if (this.destroyed) return;
    this.flushes.alarmFired();
    const result = await this.flush();
    await this.learning.deliver().catch(() => {});
    // While a run is active the alarm doubles as a heartbeat: a streaming model fetch alone may not
    // keep the object in memory.
    const behind = (result.ok && this.log.flushState().flushedSeq < this.log.lastSeq()) || this.learning.pending() > 0;
    if (this.runs.active || behind || this.queue.size() > 0) await this.flushes.armAlarm();
  }

  /** The streaming endpoints (see SESSION_STREAM_PATHS); the Worker has authenticated and validated. */
  async handleStream(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (request.method === "POST" && url.pathname === SESSION_STREAM_PATHS.run) {
      const delivery = PromptDelivery.parse(await request.json());
      const { retryOf } = delivery.command;
      if (this.deleting) {
        const message = `session '${this.id}' is being deleted`;
        return Response.json({ error: { code: "session_not_found", message } }, { status: ERROR_REGISTRY.session_not_found.status });
      }
      if (retryOf !== undefined && !this.registry.find(retryOf)) {
        const message = `retryOf: session '${this.id}' has no run '${retryOf}'`;
        return Response.json({ error: { code: "run_not_found", message } }, { status: ERROR_REGISTRY.run_not_found.status });
      }
      if (this.compacting) {
        const message = "the session's history is being compacted; send the prompt again when it is done";
        return Response.json({ error: { code: "session_busy", message } }, { status: 409 });
      }
      const accepted = this.intake.accept(delivery);
      if (!accepted.ok) {
        const status = ERROR_REGISTRY[accepted.code].status ?? 500;
        return Response.json({ error: { code: accepted.code, message: accepted.message } }, { status });
      }
      const { afterSeq, ...scope } = accepted.value;
      return this.streamAnswer(scope.runId, afterSeq, scope);
    }
    if (request.method === "GET" && url.pathname === SESSION_STREAM_PATHS.events) {
      const { searchParams: q } = url;
      return this.resumes.resume(Number(q.get("after") ?? "0"), q.get("runId"), q.get("messageId"), q.get("head") === "1");
    }
    return Response.json(
      { error: { code: "route_not_found", message: `no session route ${request.method} ${url.pathname}` } },
      { status: 404 },
    );
  }

  /**
   * Aborts the active run, or else a manual compaction under way: both keep the session busy, and
   * a client told to "wait for it or abort it" can end either.
   */
  abortRun(runId?: string): { aborted: boolean; runId: string | null } {
    const run = this.runs.abort(runId);
    // A client that names its run means that run, not a compaction that came after it.
    if (run.aborted || runId !== undefined || !this.compacting || !this.compaction) return run;
    this.compaction.abortedByClient = true;
    this.compaction.controller.abort();
    return { aborted: true, runId: null };
  }

  /** Withdraws a queued message that has not been delivered. */
  withdrawQueued(messageId: string): SessionResult<{ messageId: string }> {
    const withdrawn = this.intake.withdraw(messageId);
    if (withdrawn.ok) this.hub.endAbandoned((runId) => this.intake.waiting(runId));
    return withdrawn;
  }

  /**
   * A file as the agent sees it, streamed: neither this object nor the Worker holds it whole (hunt 84:
   * 16 unread reads of a 16 MiB file held over 300 MB). A changed file, which this object reads out of
   * SQLite as its client reads, is one of the session's downloads; the rest stream from R2.
   */
  async readFile(path: string): Promise<SessionResult<{ size: number; body: ReadableStream<Uint8Array> }>> {
    const file = await this.withWorkspace((meta, wid) => this.workspace.fileStream(wid, meta.owner, path));
    if (!file.ok) return file;
    const { size, body, changed } = file.value;
    if (!changed) return ok({ size, body });
    if (!this.downloads.take()) {
      await body.cancel();
      return this.downloadsBusy();
    }
    return ok({ size, body: this.downloads.serve(body) });
  }

  /** What a HEAD of a file answers: its size; no stream is opened, so no download's place is taken (hunt 85). */
  async fileSize(path: string): Promise<SessionResult<number>> {
    return this.withWorkspace((meta, wid) => this.workspace.fileSize(wid, meta.owner, path));
  }

  /** The session's changes as a unified diff: one of the downloads it serves at once (`Downloads`). */
  async changes(): Promise<SessionResult<ReadableStream<Uint8Array>>> {
    if (!this.downloads.take()) return this.downloadsBusy();
    const diff = await this.withWorkspace((meta, wid) => this.workspace.changes(wid, meta.owner, () => this.deleting)).catch((err) => {
      this.downloads.giveBack();
      throw err;
    });
    if (!diff.ok) {
      this.downloads.giveBack();
      return diff;
    }
    return ok(this.downloads.serve(diff.value));
  }

  /**
   * Closes runs that were active when the object died: every unanswered tool call gets an error
   * result, the text streamed so far is kept in an ERROR message, and `agent_error run_interrupted`
   * ends the run, so the history stays one that providers accept and live streams end. A manual
   * compaction cut off gets `compaction_failed run_interrupted`. The tenant's list is then told.
   */
  async recoverInterruptedRuns(): Promise<void> {
    let closed = false;
    if (this.storage.sql.exec(`SELECT 1 FROM open_compaction`).toArray().length > 0) {
      // A manual compaction the restart cut off: its compaction_started gets its end, nothing was compacted.
      this.closeCompaction();
      closed = true;
    }
    const orphaned = this.registry.orphaned();
    for (const run of orphaned) {
      await this.closeRun(run, "run_interrupted", "the run was interrupted (the server restarted); send the prompt again");
      this.registry.finish(run.runId, "ERROR", nowIso(this.deps.clock));
      logLine("warn", "run interrupted by a restart, closed", { sessionId: this.id, runId: run.runId });
      closed = true;
    }
    // Before a follow-up starts: its records must not come between.
    if (await this.older.closeLegacyCompaction(() => this.closeCompaction())) closed = true;
    await this.older.closeLegacyForkCalls(this.forkedFrom() !== null, (messages) => {
      const closing = forkClosingResults(messages, { sessionId: this.id, ids: this.deps.ids, clock: this.deps.clock });
      unwrapResult(this.appendValid("messages", closing));
      logLine("warn", "tool calls an older fork left open, closed", { sessionId: this.id, calls: closing.length });
    });
    // The queue outlives the object: the next follow-up starts now (an interrupted run counts as failed).
    if (orphaned.length > 0 || this.queue.size() > 0) this.intake.runEnded({ stopReason: orphaned.length > 0 ? "ERROR" : "STOP" });
    // The tenant's list last heard "running" from the run (or from older code): it is told what is left.
    if (closed || this.older.summaryUntold()) this.reportSummary();
    this.older.summaryTold();
  }

  private closeCompaction(): void {
    this.storage.sql.exec(`DELETE FROM open_compaction`);
    this.appendEvent({
      type: "compaction_failed",
      code: "run_interrupted",
      message: "the server restarted during the compaction; nothing was compacted",
    });
    logLine("warn", "compaction interrupted by a restart, closed", { sessionId: this.id });
  }

  private async execute(run: ActiveRun, command: PromptCommand): Promise<RunEnding> {
    const meta = this.describe();
    this.reportSummary();
    let history: RunHistory;
    try {
      history = await this.history.load();
    } catch (err) {
      const message = `the run could not start: the session's history could not be read (${(err as Error).message})`;
      await this.closeRun(run, "history_unreadable", message);
      return { stopReason: "ERROR", error: { code: "history_unreadable", message } };
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
        ? await this.learning.briefFor(
            command,
            history.messages,
            setup.tools.definitions().map((d) => d.name),
          )
        : null;
    const tally = new RunTally();
    const outcome = await runAgent(command.userText, command.options, {
      sessionId: this.id,
      runId: run.runId,
      workspaceId: meta.workspaceId,
      history: history.messages,
      assistantsBefore: history.before.assistants,
      setup,
      log: tally.observe(this.runLog()),
      ids: this.deps.ids,
      clock: this.deps.clock,
      signal: run.controller.signal,
      retryOf: command.retryOf ?? null,
      brief,
      userMessageId: run.userMessageId,
      startAnnounced: true,
      takeSteering: () => this.intake.takeSteering(),
    });
    // A setup that failed unexpectedly left its cause with the setup: the run's end line logs it.
    return { ...outcome, counts: tally.counts, ...(!setup.ok && setup.cause ? { cause: setup.cause } : {}) };
  }

  /** An external judge's verdict on a run of this session: recorded, and attributed when it is a fail. */
  judge(runId: string, verdict: ExternalVerdict, idempotencyKey?: string): Promise<SessionResult<JudgeOutcome>> {
    return this.learning.judge(runId, verdict, idempotencyKey);
  }

  /**
   * A page of the session's attributions, oldest first, after a seq (0: from the first), as the API's
   * JSON, made as its client reads: a page of large attributions built whole, several at once, filled
   * an isolate (hunt 86). One of the downloads the session serves at once (`Downloads`). The first
   * batch of the trace is read before answering, so an unreadable trace is `history_unreadable`.
   */
  async attributionsPage(afterSeq: number, limit: number): Promise<SessionResult<ReadableStream<Uint8Array>>> {
    if (!this.downloads.take()) return this.downloadsBusy();
    const body = await readable(() => textStream(this.learning.attributionsJson(afterSeq, limit)));
    if (!body.ok) {
      this.downloads.giveBack();
      return body;
    }
    return ok(this.downloads.serve(body.value));
  }

  /** What a replay of one of this session's runs needs. */
  runInfo(runId: string): Promise<SessionResult<RunInfo | null>> {
    return this.learning.runInfo(runId);
  }

  /** A recorded session to replay: this one, or another of the same tenant. */
  private async loadRecording(sessionId: string, meta: OwnedSessionMeta): Promise<AgentMessage[]> {
    if (sessionId === this.id) return loadStoredMessages(this.log, this.deps.bucket, this.id);
    const store = new DurableSessionStore(this.env);
    if (!(await store.findOwned(sessionId, meta.owner))) throw new Error(`session '${sessionId}' does not exist`);
    return store.loadMessages(sessionId, isRecordedTurn);
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
      // Accepted but stopped before it logged its prompt (its setup was still running): log it now, so
      // the prompt is not lost (and the start, which runs of older objects logged with the prompt).
      this.logUnloggedPrompt(run.runId, events);
      records = closingRecords({ ...this.closing(run.runId, code, message), leftovers: runLeftovers(messages, events) });
    } catch {
      // The run's own records cannot be read: close it with what is certain.
      records = closingRecords({
        ...this.closing(run.runId, code, message),
        leftovers: { unanswered: [], started: new Set(), partial: null, compacting: false },
      });
    }
    for (const record of records) unwrapResult(this.appendValid(record.stream, [record.record]));
    await this.learning.closeRun(run.runId, run.startSeq, code, message);
  }

  private logUnloggedPrompt(runId: string, events: readonly AgentEvent[]): void {
    const run = this.registry.find(runId);
    const command = run?.command;
    if (!command) return;
    const started = events.some((e) => e.type === "agent_started" && e.runId === runId);
    const prompted =
      run.userMessageId === null ? started : events.some((e) => e.type === "user_message_appended" && e.messageId === run.userMessageId);
    if (prompted) return;
    const at = nowIso(this.deps.clock);
    const event = (body: Record<string, unknown>) => ({ eventId: this.deps.ids.next("event"), sessionId: this.id, createdAt: at, ...body });
    if (!started) unwrapResult(this.appendValid("events", [event({ type: "agent_started", runId }) as AgentEvent]));
    const user = {
      kind: "user",
      // The id a queued prompt was announced under (message_queued), so clients find it.
      id: run.userMessageId ?? this.deps.ids.next("message"),
      sessionId: this.id,
      parentId: this.meta.lastMessageId(),
      createdAt: at,
      text: command.userText,
    } as AgentMessage;
    unwrapResult(this.appendValid("messages", [user]));
    unwrapResult(this.appendValid("events", [event({ type: "user_message_appended", messageId: user.id }) as AgentEvent]));
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
      appendMessage: (message) => unwrapResult(this.appendRecords([{ stream: "messages", record: message }])),
      appendEvent: (event) => unwrapResult(this.appendRecords([{ stream: "events", record: event }])),
      appendTogether: (records) => unwrapResult(this.appendRecords(records)),
      appendTrace: (draft) => this.learning.record(draft),
    };
  }

  /**
   * The SSE answer of a stream of the events after `afterSeq` (tailing `runId`'s run, when named). It
   * goes out once the replay's first batch is read: a log that cannot be read is a 500
   * `history_unreadable`, not a 200 that ends at once.
   */
  private async streamAnswer(runId: string | null, afterSeq: number, scope?: StreamScope): Promise<Response> {
    const live = scope?.runId ? () => this.intake.waiting(scope.runId!) : () => this.runs.active !== null;
    const { body, ready } = this.hub.open(afterSeq, () => this.eventBatches(afterSeq), live, scope);
    try {
      await ready;
    } catch (err) {
      await body.cancel().catch(() => {});
      return refusal("history_unreadable", err instanceof HarnessError ? err.message : unreadableMessage(err));
    }
    return sseResponse(body, runId);
  }

  /** The committed events after `afterSeq` as `loadEvents` reads them, a segment at a time. */
  private async *eventBatches(afterSeq: number): AsyncGenerator<SeqEvent[]> {
    try {
      for await (const lines of readLog(this.log, this.deps.bucket, "events", afterSeq)) {
        // Sent as stored, as the live publish and GET .../events send it: the decoded event's key
        // order is the schema's, so a replayed frame's text differed from the same event's elsewhere (hunt 50).
        yield lines.map((line) => ({ seq: line.seq, event: decodeEventLine(line.body, line.seq, this.id), json: line.body }));
      }
    } catch (err) {
      throw new HarnessError("history_unreadable", unreadableMessage(err));
    }
  }

  private appendEvent(body: IntakeEvent): number {
    const event = { eventId: this.deps.ids.next("event"), sessionId: this.id, createdAt: nowIso(this.deps.clock), ...body } as AgentEvent;
    return unwrapResult(this.appendValid("events", [event]))[0]!;
  }

  private appendValid(stream: LogStream, records: (AgentMessage | AgentEvent | TraceRecord)[]): SessionResult<number[]> {
    return this.appendRecords(records.map((record) => ({ stream, record }) as LogRecord));
  }

  /**
   * Appends records (built by this code, or validated) in one commit, then makes them visible: the
   * newest message and the history are updated, events are published to live streams. Nothing is
   * published before the commit.
   */
  private appendRecords(records: readonly LogRecord[]): SessionResult<number[]> {
    const entries = new Array<{ stream: LogStream; body: string }>(records.length);
    let chars = 0;
    for (let i = 0; i < records.length; i++) {
      const body = encodeLine(records[i]!.record);
      entries[i] = { stream: records[i]!.stream, body };
      chars += body.length;
    }
    let seqs: number[];
    try {
      seqs = this.log.append(entries, this.transactionSync);
    } catch (err) {
      if (err instanceof RecordTooLargeError) return failure("record_too_large", err.message);
      throw err;
    }
    let newest: AgentMessage | null = null;
    for (let i = 0; i < records.length; i++) {
      const entry = records[i]!;
      if (entry.stream === "messages") {
        newest = entry.record;
        this.history.appended([entry.record], [seqs[i]!]);
      } else if (entry.stream === "events") {
        const event = entry.record;
        if (event.type === "agent_completed" || event.type === "agent_error") this.registry.ended(event.runId, seqs[i]!);
        this.hub.publish({ seq: seqs[i]!, event, json: entries[i]!.body });
      }
    }
    if (newest) this.meta.recordMessage(newest.id, newest.createdAt);
    this.flushes.afterAppend(chars);
    return ok(seqs);
  }

  private async writeMetaObject(): Promise<void> {
    const write = this.deps.bucket.put(sessionKeys.meta(this.id), JSON.stringify(publicMeta(this.describe())), {
      httpMetadata: { contentType: "application/json" },
    });
    this.metaWrites.add(write);
    try {
      await write;
    } finally {
      this.metaWrites.delete(write);
    }
  }
}
