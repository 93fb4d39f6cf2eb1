import { HarnessError, isId, randomIds, unwrapResult, type AgentEvent, type AgentMessage, type IdGenerator } from "../domain";
import type { SeqEvent } from "./live-events";
import type { CreateSessionInput, SessionInfo, SessionRpc } from "./session-api";
import type { OwnedSessionMeta, SessionMeta } from "./session-meta";

export interface NewSession {
  workspaceId?: string | null;
  projectId?: string | null;
  title?: string | null;
  owner?: string | null;
}

/**
 * Sessions and their ordered logs, one SessionDO per session. Appends are durable when they return;
 * failures throw HarnessError with the session's code.
 */
export class DurableSessionStore {
  constructor(
    private readonly namespace: DurableObjectNamespace<SessionRpc>,
    private readonly ids: IdGenerator = randomIds,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The session's Durable Object; the id is checked first so bad ids never reach storage. */
  stub(sessionId: string): DurableObjectStub<SessionRpc> {
    if (!isId("session", sessionId)) {
      throw new HarnessError("invalid_session_id", `session id ${JSON.stringify(String(sessionId).slice(0, 80))} is not of the form s_<letters, digits, _ or ->`);
    }
    return this.namespace.getByName(sessionId);
  }

  async create(input: NewSession): Promise<SessionMeta> {
    const record: CreateSessionInput = {
      id: this.ids.next("session"),
      workspaceId: input.workspaceId ?? null,
      projectId: input.projectId ?? null,
      title: input.title ?? null,
      owner: input.owner ?? null,
      createdAt: new Date(this.clock()).toISOString(),
    };
    return unwrapResult(await this.stub(record.id).create(record));
  }

  /** The session, or null when it does not exist (never throws for unknown sessions, never creates one). */
  async find(sessionId: string): Promise<OwnedSessionMeta | null> {
    return this.stub(sessionId).describe();
  }

  /** The session if it exists and belongs to `owner` (null when auth is off); another tenant's is null. */
  async findOwned(sessionId: string, owner: string | null): Promise<OwnedSessionMeta | null> {
    const meta = await this.find(sessionId);
    return meta && meta.owner === owner ? meta : null;
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

  async loadMessages(sessionId: string): Promise<AgentMessage[]> {
    return unwrapResult(await this.stub(sessionId).loadMessages());
  }

  async loadEvents(sessionId: string): Promise<AgentEvent[]> {
    return (await this.loadEventsAfter(sessionId, 0)).map((e) => e.event);
  }

  /** Events with their seqs (the SSE ids), after `afterSeq`. */
  async loadEventsAfter(sessionId: string, afterSeq: number): Promise<SeqEvent[]> {
    return unwrapResult(await this.stub(sessionId).loadEvents(afterSeq));
  }
}
