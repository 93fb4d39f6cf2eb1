import { DEFAULT_PROJECT_ID } from "../awtl/project-api";
import type { ListPosition } from "../domain";
import {
  type AgentEvent,
  type AgentMessage,
  HarnessError,
  type IdGenerator,
  idForm,
  isId,
  nowIso,
  randomIds,
  unwrapResult,
} from "../domain";
import { logLine } from "../log";
import type { SessionIndexEntry, SessionPage, SessionSummary } from "../tenant/session-index";
import { type TenantRpc, tenantObjectName } from "../tenant/tenant-api";
import { readWorkspaceMeta } from "../workspace/snapshot";
import { withoutEndMark } from "../workspace/streams";
import type { SeqEvent } from "./live-events";
import type { CreateSessionInput, SessionInfo, SessionRpc } from "./session-api";
import {
  FORK_COPY_BATCH,
  type ForkBatchLimits,
  type ForkedChange,
  type ForkOrigin,
  forkCopyBatches,
  readMessageLines,
} from "./session-fork";
import { type OwnedSessionMeta, publicMeta, type SessionMeta } from "./session-meta";

/** The bindings the store uses: the session objects and the tenants' indexes. */
export interface SessionBindings {
  SESSIONS: DurableObjectNamespace<SessionRpc>;
  TENANTS: DurableObjectNamespace<TenantRpc>;
  /** Workspace snapshots: a session may only be opened on one of its owner's. */
  STORE: R2Bucket;
}

export interface NewSession {
  /** An id allocated earlier (an idempotent retry creates the same session again, or finds it). */
  id?: string;
  workspaceId?: string | null;
  projectId?: string | null;
  title?: string | null;
  owner?: string | null;
}

/**
 * Sessions and their ordered logs, one SessionDO per session, each listed in its tenant's index.
 * Appends are durable when they return; failures throw HarnessError with the session's code.
 */
export class DurableSessionStore {
  constructor(
    private readonly bindings: SessionBindings,
    private readonly ids: IdGenerator = randomIds,
    private readonly clock: () => number = Date.now,
    private readonly forkBatch: ForkBatchLimits = FORK_COPY_BATCH,
  ) {}

  /** The session's Durable Object; the id is checked first so bad ids never reach storage. */
  stub(sessionId: string): DurableObjectStub<SessionRpc> {
    if (!isId("session", sessionId)) {
      throw new HarnessError(
        "invalid_session_id",
        `session id ${JSON.stringify(String(sessionId).slice(0, 80))} is not ${idForm("session")}`,
      );
    }
    return this.bindings.SESSIONS.getByName(sessionId);
  }

  /** The index of a tenant's sessions (null: the open API without auth). */
  tenantIndex(owner: string | null): DurableObjectStub<TenantRpc> {
    return this.bindings.TENANTS.getByName(tenantObjectName(owner));
  }

  /** Creates a session; its workspace must exist and belong to the same owner (else `workspace_not_found`). */
  async create(input: NewSession): Promise<SessionMeta> {
    return this.createWith(input, null);
  }

  /**
   * Creates a session holding `messages` (checked by the caller to be one conversation; `sessionId`
   * is rewritten here). It is listed only once every message is stored, so a failed import leaves
   * nothing a client can see.
   */
  async importSession(input: NewSession, messages: readonly AgentMessage[]): Promise<SessionMeta> {
    return this.createWith(input, messages);
  }

  private async createWith(input: NewSession, messages: readonly AgentMessage[] | null): Promise<SessionMeta> {
    if (input.workspaceId) await readWorkspaceMeta(this.bindings.STORE, input.workspaceId, input.owner ?? null);
    const record: CreateSessionInput = {
      id: input.id ?? this.ids.next("session"),
      workspaceId: input.workspaceId ?? null,
      projectId: input.projectId ?? null,
      title: input.title ?? null,
      owner: input.owner ?? null,
      createdAt: nowIso(this.clock),
    };
    await this.expectSession(record);
    const meta = await this.createObject(record, input.id !== undefined);
    if (!messages) {
      // Listed only once it exists, so a listed session is always readable.
      await this.listInIndex(record.owner, meta);
      return meta;
    }
    unwrapResult(await this.stub(record.id).fillMessages(messages.map((m) => ({ ...m, sessionId: record.id }))));
    await this.listInIndex(record.owner, meta, await this.listedSummary(record.id));
    return meta;
  }

  /** What the list shows of a session filled at creation (an import, a fork) until its first run reports. */
  private async listedSummary(sessionId: string): Promise<Pick<SessionSummary, "updatedAt" | "counts"> | undefined> {
    const info = await this.stub(sessionId).info();
    return info ? { updatedAt: info.updatedAt, counts: { messages: info.counts.messages, events: info.counts.events } } : undefined;
  }

  /**
   * Tells the tenant a session is about to be stored: if the request dies before listing it (a crash
   * between filling the object and listing it), the tenant removes the object later.
   */
  private async expectSession(record: CreateSessionInput): Promise<void> {
    const full = await this.tenantIndex(record.owner).expectCreation({ kind: "session", id: record.id, r2Prefix: null }, Date.now());
    if (full) throw new HarnessError("quota_exceeded", full);
  }

  /** Creates the session object; with `retry`, an object left by an earlier attempt of the same request is taken as is. */
  private async createObject(record: CreateSessionInput, retry: boolean): Promise<SessionMeta> {
    // A repeat of the request (same Idempotency-Key) after the session was deleted: the object is
    // empty again, and creating it would bring back an id its owner deleted.
    if (retry && (await this.tenantIndex(record.owner).wasSessionDeleted(record.id))) {
      throw new HarnessError(
        "session_not_found",
        `session '${record.id}' was deleted; repeating the request that created it does not bring it back (send it with a new Idempotency-Key)`,
      );
    }
    const created = await this.stub(record.id).create(record);
    const existing = !created.ok && created.code === "session_exists" && retry ? await this.stub(record.id).describe() : null;
    return existing && existing.owner === record.owner ? publicMeta(existing) : unwrapResult(created);
  }

  private async listInIndex(
    owner: string | null,
    meta: SessionMeta,
    summary?: Pick<SessionSummary, "updatedAt" | "counts">,
  ): Promise<void> {
    const listed = await this.tenantIndex(owner).addSession(
      { id: meta.id, workspaceId: meta.workspaceId, projectId: meta.projectId, title: meta.title, createdAt: meta.createdAt },
      meta.projectId ?? DEFAULT_PROJECT_ID,
      summary,
    );
    if (listed === "listed") return;
    // Its workspace was deleted after the check above, or its project is being deleted: the object
    // never becomes visible; remove it (best effort: unlisted, it is unreachable anyway).
    await this.stub(meta.id)
      .destroy()
      .catch((err: unknown) => logLine("warn", "a refused session's object was not removed", { sessionId: meta.id, error: String(err) }));
    if (listed === "project_deleting")
      throw new HarnessError(
        "project_not_found",
        `project '${meta.projectId ?? DEFAULT_PROJECT_ID}' is being deleted; create the session again once the deletion has ended`,
      );
    throw new HarnessError("workspace_not_found", `workspace ${meta.workspaceId} was deleted`);
  }

  /**
   * The session if it belongs to `owner` (null when auth is off), else null. Asks the owner's index,
   * so an unknown or foreign id never reaches (and never creates) a session object.
   */
  async findOwned(sessionId: string, owner: string | null): Promise<SessionIndexEntry | null> {
    if (!isId("session", sessionId)) this.stub(sessionId); // throws invalid_session_id
    return this.tenantIndex(owner).findSession(sessionId);
  }

  /** The session object's own record, owner included. Touches the object: only for ids known to exist. */
  async find(sessionId: string): Promise<OwnedSessionMeta | null> {
    return this.stub(sessionId).describe();
  }

  /**
   * Forks a session at a message: a new session (id `newId` when an idempotent request allocated one)
   * with the source's committed messages up to it and its workspace as it was then. Listed only once
   * filled; a retry with the same id finishes a fork that failed half-way. The source is only read.
   */
  async fork(
    sourceId: string,
    owner: string | null,
    options: { atMessageId?: string; title?: string | null; newId?: string },
  ): Promise<SessionMeta & { forkedFrom: ForkOrigin }> {
    const source = unwrapResult(await this.stub(sourceId).forkSource(options.atMessageId));
    const record: CreateSessionInput = {
      id: options.newId ?? this.ids.next("session"),
      workspaceId: source.workspaceId,
      projectId: source.projectId,
      title: options.title === undefined ? source.title : options.title,
      owner,
      createdAt: nowIso(this.clock),
    };
    // The source's message stream stays open until the fork reads it, or this cancels it.
    const cancelMessages = () => source.messages.cancel().catch(() => {});
    const meta = await this.expectSession(record)
      .then(() => this.createObject(record, options.newId !== undefined))
      .catch(async (err: unknown) => {
        await cancelMessages();
        throw err;
      });
    const origin = { sessionId: sourceId, messageId: source.atMessageId };
    let forkedFrom: ForkOrigin;
    const target = this.stub(meta.id);
    // Retries of one fork (same Idempotency-Key) may run at once: each stages its own parts.
    const attempt = crypto.randomUUID();
    try {
      const copied = await this.copyChanges(this.stub(sourceId), target, attempt, source.changes);
      // Another attempt may have filled it first: its origin is the answer.
      forkedFrom = unwrapResult(await target.importFork(origin, source.messages, attempt, copied));
    } catch (err) {
      await cancelMessages();
      // Never listed, a fork left half-filled would keep its parts for ever: it is removed (unless
      // another attempt filled it meanwhile), and a retry with the same key makes it again.
      await target.discardUnfilledFork().catch(() => {});
      throw err;
    }
    await this.listInIndex(owner, meta, await this.listedSummary(meta.id));
    return { ...meta, forkedFrom };
  }

  /**
   * Stages a fork's workspace changes in the fork, in parts (their history can exceed what one RPC
   * call carries): the bytes of each batch read from the source, then handed over. Returns how many.
   */
  private async copyChanges(
    source: DurableObjectStub<SessionRpc>,
    target: DurableObjectStub<SessionRpc>,
    attempt: string,
    changes: readonly ForkedChange[],
  ): Promise<number> {
    let copied = 0;
    for (const batch of forkCopyBatches(changes, this.forkBatch)) {
      const bytes = unwrapResult(await source.forkChangeBytes(batch.map((change) => change.ref)));
      const staged = batch.map(({ ref: { path, deleted, mode }, stampMessageId }, i) => ({
        path,
        deleted,
        mode,
        bytes: bytes[i]!,
        stampKey: stampMessageId,
      }));
      unwrapResult(await target.stageForkChanges(attempt, copied, staged));
      copied += batch.length;
    }
    return copied;
  }

  /** A fork already filled under `id` (a repeat of a keyed fork), listed, with the origin it holds. */
  async filledFork(id: string, owner: string | null): Promise<(SessionMeta & { forkedFrom: ForkOrigin }) | null> {
    const stub = this.stub(id);
    const [owned, info] = await Promise.all([stub.describe(), stub.info()]);
    if (!owned || !info?.forkedFrom || owned.owner !== owner) return null;
    const meta = publicMeta(owned);
    await this.listInIndex(owner, meta, await this.listedSummary(id));
    return { ...meta, forkedFrom: info.forkedFrom };
  }

  /** The owner's sessions, newest first. */
  async list(owner: string | null, limit: number, after: ListPosition | null, projectId: string | null): Promise<SessionPage> {
    // Sessions created without a project learn in the default one: listed with it.
    return this.tenantIndex(owner).listSessions(limit, after, projectId, projectId === DEFAULT_PROJECT_ID);
  }

  /** Renames a session the owner has (checked by the caller). */
  async setTitle(sessionId: string, owner: string | null, title: string | null): Promise<SessionMeta> {
    const meta = unwrapResult(await this.stub(sessionId).setTitle(title));
    await this.tenantIndex(owner).setSessionTitle(sessionId, title);
    return meta;
  }

  /**
   * Deletes a session: unlisted first (from then on every route answers 404, so it is never listed
   * but unreadable), then its object removes its run, R2 objects and SQLite data, then the index entry
   * goes. False when the owner has no such session (nor one half-deleted). A failure half-way leaves
   * the entry marked, and DELETE again finishes the job.
   */
  async delete(sessionId: string, owner: string | null): Promise<boolean> {
    if (!isId("session", sessionId)) this.stub(sessionId); // throws invalid_session_id
    const index = this.tenantIndex(owner);
    if (!(await index.findSession(sessionId, true))) return false;
    await index.markSessionDeleting(sessionId);
    await this.stub(sessionId).destroy();
    await index.removeSession(sessionId);
    return true;
  }

  async info(sessionId: string): Promise<SessionInfo | null> {
    return this.stub(sessionId).info();
  }

  async appendMessage(sessionId: string, message: AgentMessage): Promise<number> {
    return unwrapResult(await this.stub(sessionId).appendMessages([message]))[0]!;
  }

  async appendEvent(sessionId: string, event: AgentEvent): Promise<number> {
    return unwrapResult(await this.stub(sessionId).appendEvents([event]))[0]!;
  }

  /**
   * A session's messages, streamed as JSONL and read a line at a time (a long session's are more
   * than one RPC answer carries); `keep` drops the others as they are read.
   */
  async loadMessages(sessionId: string, keep?: (message: AgentMessage) => boolean): Promise<AgentMessage[]> {
    return readMessageLines(withoutEndMark(unwrapResult(await this.stub(sessionId).loadMessages())), keep);
  }

  async loadEvents(sessionId: string): Promise<AgentEvent[]> {
    return (await this.loadEventsAfter(sessionId, 0)).map((e) => e.event);
  }

  /** Events with their seqs (the SSE ids), after `afterSeq`. */
  async loadEventsAfter(sessionId: string, afterSeq: number): Promise<SeqEvent[]> {
    return unwrapResult(await this.stub(sessionId).loadEvents(afterSeq));
  }
}
