import { DurableObject } from "cloudflare:workers";
import type { ExternalVerdict } from "../awtl/trace-sink";
import { type AttributionRecord, failure, type JudgeResult, ok } from "../domain";
import type { AppEnv } from "../env";
import { useLogLevel } from "../log";
import type { OverlayVersionRef, StagedChange } from "../workspace/overlay";
import { withEndMark } from "../workspace/streams";
import type { SeqEvent } from "./live-events";
import { Session } from "./session";
import type { CreateSessionInput, FlushSummary, RunInfo, SessionInfo, SessionResult, SessionRpc } from "./session-api";
import { productionSessionDeps, type SessionDeps } from "./session-deps";
import type { ForkOrigin, ForkSource } from "./session-fork";
import { type OwnedSessionMeta, publicMeta, type SessionMeta, SessionMetaTable, sessionTableExists } from "./session-meta";

/**
 * One per session, and the only writer of that session. This class is the RPC surface: it answers
 * for an object that holds no session without creating any storage (looking up an unknown id must
 * not cost a database), and hands everything else to the Session that lives in its storage.
 */
export class SessionDO extends DurableObject<AppEnv> implements SessionRpc {
  private session: Session | null = null;
  private readonly deps: SessionDeps;

  constructor(ctx: DurableObjectState, env: AppEnv, deps?: SessionDeps) {
    super(ctx, env);
    useLogLevel(env.LOG_LEVEL);
    this.deps = deps ?? productionSessionDeps(env);
    const meta = sessionTableExists(ctx.storage.sql) ? new SessionMetaTable(ctx.storage.sql).get() : null;
    if (meta) {
      const session = new Session(ctx, env, this.deps, meta);
      this.session = session;
      void ctx.blockConcurrencyWhile(() => session.recoverInterruptedRuns());
    }
  }

  /** Creates the session; refused when this object already holds one. */
  async create(input: CreateSessionInput): Promise<SessionResult<SessionMeta>> {
    if (this.session) return failure("session_exists", `session '${input.id}' already exists`);
    const meta: OwnedSessionMeta = { ...input, updatedAt: input.createdAt };
    new SessionMetaTable(this.ctx.storage.sql).insert(meta);
    this.session = new Session(this.ctx, this.env, this.deps, meta);
    await this.session.created();
    return { ok: true, value: publicMeta(meta) };
  }

  /**
   * The session, unless its deletion has begun: from then on its calls answer as if it were gone
   * (its R2 segments go first, so a read meanwhile would fail half-way, or end early).
   */
  private get open(): Session | null {
    return this.session && !this.session.isDeleting() ? this.session : null;
  }

  /**
   * A call that awaits while the session is open. A deletion that begins meanwhile removes its R2
   * objects and then its tables: a call that then fails, or throws ("no such table"), answers as the
   * deleted session does (404), not as a broken one (a 500; forks of a long session racing its
   * DELETE, hunt 52; renames and verdicts racing it, hunt 61).
   */
  private async whileOpen<T>(call: (session: Session) => Promise<SessionResult<T>>): Promise<SessionResult<T>> {
    const session = this.open;
    if (!session) return notFound();
    let result: SessionResult<T>;
    try {
      result = await call(session);
    } catch (err) {
      if (this.open) throw err;
      return notFound();
    }
    return result.ok || this.open ? result : notFound();
  }

  describe(): OwnedSessionMeta | null {
    return this.session?.describe() ?? null;
  }

  async info(): Promise<SessionInfo | null> {
    return (await this.session?.info()) ?? null;
  }

  async compact(instructions?: string): Promise<SessionResult<{ messageId: string; tokensBefore: number; tokensAfter: number }>> {
    return this.open ? this.open.compact(instructions) : notFound();
  }

  appendMessages(records: unknown[]): SessionResult<number[]> {
    return this.open ? this.open.append("messages", records) : notFound();
  }

  fillMessages(records: unknown[]): SessionResult<{ filled: boolean }> {
    return this.open ? this.open.fill(records) : notFound();
  }

  appendEvents(records: unknown[]): SessionResult<number[]> {
    return this.open ? this.open.append("events", records) : notFound();
  }

  /** Marked at its end (`withEndMark`): read it through `withoutEndMark`. */
  async loadMessages(): Promise<SessionResult<ReadableStream<Uint8Array>>> {
    return marked(await this.whileOpen((session) => session.loadMessages()));
  }

  async loadEvents(afterSeq = 0): Promise<SessionResult<SeqEvent[]>> {
    return this.whileOpen((session) => session.loadEvents(afterSeq));
  }

  /** The body is marked at its end (`withEndMark`): read it through `withoutEndMark`. */
  async exportJsonl(
    stream: "messages" | "events" | "trace",
    afterSeq = 0,
  ): Promise<SessionResult<{ body: ReadableStream<Uint8Array>; through: number }>> {
    const exported = await this.whileOpen((session) => session.exportJsonl(stream, afterSeq));
    return exported.ok ? ok({ body: withEndMark(exported.value.body), through: exported.value.through }) : exported;
  }

  async logThrough(): Promise<SessionResult<number>> {
    return this.open ? ok(this.open.logThrough()) : notFound();
  }

  async judge(
    runId: string,
    verdict: ExternalVerdict,
    idempotencyKey?: string,
  ): Promise<SessionResult<{ judgeResult: JudgeResult; attribution: AttributionRecord | null }>> {
    return this.whileOpen((session) => session.judge(runId, verdict, idempotencyKey));
  }

  /** A page of the session's attributions after a seq, as the API's JSON. Marked at its end (`withEndMark`): read it through `withoutEndMark`. */
  async attributionsPage(afterSeq: number, limit: number): Promise<SessionResult<ReadableStream<Uint8Array>>> {
    return marked(await this.whileOpen((session) => session.attributionsPage(afterSeq, limit)));
  }

  async runInfo(runId: string): Promise<SessionResult<RunInfo | null>> {
    return this.whileOpen((session) => session.runInfo(runId));
  }

  async flush(): Promise<SessionResult<FlushSummary>> {
    return this.open ? this.open.flush() : notFound();
  }

  override async alarm(): Promise<void> {
    await this.session?.alarm();
  }

  /** The streaming endpoints (SESSION_STREAM_PATHS), reached through `stub.fetch` so SSE bodies flow straight through. */
  override async fetch(request: Request): Promise<Response> {
    if (!this.session) return Response.json({ error: { code: "session_not_found", message: "session not found" } }, { status: 404 });
    return this.session.handleStream(request);
  }

  abortRun(runId?: string): { aborted: boolean; runId: string | null } {
    return this.session?.abortRun(runId) ?? { aborted: false, runId: runId ?? null };
  }

  async setTitle(title: string | null): Promise<SessionResult<SessionMeta>> {
    return this.whileOpen(async (session) => ok(await session.setTitle(title)));
  }

  async forkSource(atMessageId?: string): Promise<SessionResult<ForkSource>> {
    return this.whileOpen((session) => session.forkSource(atMessageId));
  }

  forkChangeBytes(refs: OverlayVersionRef[]): SessionResult<Uint8Array[]> {
    return this.open ? this.open.forkChangeBytes(refs) : notFound();
  }

  stageForkChanges(attempt: string, from: number, changes: StagedChange[]): SessionResult<null> {
    return this.open ? this.open.stageForkChanges(attempt, from, changes) : notFound();
  }

  async importFork(
    origin: ForkOrigin,
    messages: ReadableStream<Uint8Array>,
    attempt: string,
    staged: number,
  ): Promise<SessionResult<ForkOrigin>> {
    if (this.open) return this.open.importFork(origin, messages, attempt, staged);
    await messages.cancel();
    return notFound();
  }

  async discardUnfilledFork(): Promise<void> {
    if (this.session && !this.session.forkedFrom()) await this.destroy();
  }

  /** Removes the session and everything it stored; done when the object holds no session. */
  async destroy(): Promise<void> {
    const session = this.session;
    if (!session) return;
    await session.destroy();
    if (this.session === session) this.session = null;
  }

  withdrawQueued(messageId: string): SessionResult<{ messageId: string }> {
    return this.open ? this.open.withdrawQueued(messageId) : notFound();
  }

  async fileSize(path: string): Promise<SessionResult<number>> {
    return this.whileOpen((session) => session.fileSize(path));
  }

  async readFile(path: string): Promise<SessionResult<{ size: number; body: ReadableStream<Uint8Array> }>> {
    return this.whileOpen((session) => session.readFile(path));
  }

  /** Marked at its end (`withEndMark`): read it through `withoutEndMark`. */
  async changes(): Promise<SessionResult<ReadableStream<Uint8Array>>> {
    return marked(await this.whileOpen((session) => session.changes()));
  }
}

function notFound(): { ok: false; code: "session_not_found"; message: string } {
  return failure("session_not_found", "session not found");
}

/** A stream answered over RPC, with its end marked: an error there would reach the caller as an end. */
function marked(result: SessionResult<ReadableStream<Uint8Array>>): SessionResult<ReadableStream<Uint8Array>> {
  return result.ok ? { ...result, value: withEndMark(result.value) } : result;
}
