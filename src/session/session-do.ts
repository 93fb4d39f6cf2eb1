import { DurableObject } from "cloudflare:workers";
import { AgentEvent, AgentMessage, formatIssues } from "../domain";
import type { AppEnv } from "../env";
import { decodeEventLine, decodeMessageLine, encodeLine } from "./jsonl";
import { readLog, readLogLines } from "./log-reader";
import { sessionKeys } from "./r2-layout";
import { SegmentFlusher, type FlushResult } from "./segment-flusher";
import { MAX_RECORD_BYTES, RecordTooLargeError, SessionLog, type LogStream } from "./session-log";
import { publicMeta, SessionMetaTable, type OwnedSessionMeta, type SessionMeta } from "./session-meta";

/** Unflushed bytes that trigger a flush without waiting for the alarm or the end of a run. */
export const FLUSH_THRESHOLD_BYTES = 256 * 1024;
/** The alarm flushes whatever is left this long after the first unflushed append. */
export const FLUSH_INTERVAL_MS = 10_000;

export type SessionStatus = "idle" | "running";

export interface SessionInfo extends SessionMeta {
  status: SessionStatus;
  counts: { messages: number; events: number };
}

/** Expected failures cross the RPC boundary as values, so the code survives serialisation. */
export type SessionResult<T> = { ok: true; value: T } | { ok: false; code: SessionErrorCode; message: string };
export type SessionErrorCode = "session_not_found" | "session_exists" | "invalid_record" | "record_too_large" | "flush_failed";

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
  private messageCache: AgentMessage[] | null = null;
  private unflushedBytes: number | null = null;
  private alarmArmed = false;

  constructor(ctx: DurableObjectState, env: AppEnv) {
    super(ctx, env);
    this.transactionSync = (fn) => ctx.storage.transactionSync(fn);
    this.meta = new SessionMetaTable(ctx.storage.sql);
    this.log = new SessionLog(ctx.storage.sql);
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
    await this.writeMetaObject().catch(() => this.armAlarm());
    return { ok: true, value: publicMeta(meta) };
  }

  /** The session's meta including its owner, or null when this object holds no session. */
  describe(): OwnedSessionMeta | null {
    return this.meta.get();
  }

  info(): SessionInfo | null {
    const meta = this.meta.get();
    if (!meta) return null;
    return { ...publicMeta(meta), status: "idle", counts: this.log.counts() };
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
    this.messageCache ??= (await readLogLines(this.log, this.env.STORE, "messages")).map((line) => decodeMessageLine(line.body, line.seq, meta.id));
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
      const result = await this.flusher.flush();
      this.unflushedBytes = null;
      if (result.recordsFlushed > 0) await this.writeMetaObject();
      return { ok: true, value: result };
    } catch (err) {
      await this.armAlarm();
      return { ok: false, code: "flush_failed", message: `flush to R2 failed and will be retried: ${(err as Error).message}` };
    }
  }

  override async alarm(): Promise<void> {
    this.alarmArmed = false;
    if (!this.meta.get()) return;
    const result = await this.flush();
    if (result.ok && this.log.flushState().flushedSeq < this.log.lastSeq()) await this.armAlarm();
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
    this.meta.touch(new Date().toISOString());
    if (stream === "messages" && this.messageCache) this.messageCache.push(...(parsed as AgentMessage[]));
    this.afterAppend(bodies.reduce((n, b) => n + b.body.length, 0));
    return { ok: true, value: seqs };
  }

  private afterAppend(bytes: number): void {
    this.unflushedBytes = (this.unflushedBytes ?? this.log.unflushedBytes()) + bytes;
    if (this.unflushedBytes >= FLUSH_THRESHOLD_BYTES) {
      this.ctx.waitUntil(this.flush());
    } else if (!this.alarmArmed) {
      this.ctx.waitUntil(this.armAlarm());
    }
  }

  private async armAlarm(): Promise<void> {
    this.alarmArmed = true;
    await this.ctx.storage.setAlarm(Date.now() + FLUSH_INTERVAL_MS);
  }

  private async writeMetaObject(): Promise<void> {
    const meta = this.meta.get();
    if (!meta) return;
    await this.env.STORE.put(sessionKeys.meta(meta.id), JSON.stringify(publicMeta(meta)), {
      httpMetadata: { contentType: "application/json" },
    });
  }
}

function notFound(): { ok: false; code: "session_not_found"; message: string } {
  return { ok: false, code: "session_not_found", message: "session not found" };
}

export { MAX_RECORD_BYTES };
