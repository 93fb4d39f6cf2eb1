import { isId, randomIds, type AgentEvent, type AgentMessage, type IdGenerator } from "../domain";
import type { CreateSessionInput, SessionDO, SessionErrorCode, SessionInfo, SessionResult } from "./session-do";
import type { OwnedSessionMeta, SessionMeta } from "./session-meta";

export type SessionStoreErrorCode = SessionErrorCode | "invalid_session_id";

/** A failed store operation with a stable code (`session_not_found`, `invalid_session_id`, ...). */
export class SessionStoreError extends Error {
  override readonly name = "SessionStoreError";
  constructor(
    readonly code: SessionStoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface NewSession {
  workspaceId?: string | null;
  projectId?: string | null;
  title?: string | null;
  owner?: string | null;
}

/** Sessions and their ordered logs. Appends are durable when they return. */
export interface SessionStore {
  create(input: NewSession): Promise<SessionMeta>;
  /** The session, or null when it does not exist (never throws for unknown sessions). */
  find(sessionId: string): Promise<OwnedSessionMeta | null>;
  info(sessionId: string): Promise<SessionInfo | null>;
  appendMessage(sessionId: string, message: AgentMessage): Promise<number>;
  appendEvent(sessionId: string, event: AgentEvent): Promise<number>;
  loadMessages(sessionId: string): Promise<AgentMessage[]>;
  loadEvents(sessionId: string): Promise<AgentEvent[]>;
}

/** The SessionStore backed by one SessionDO per session. */
export class DurableSessionStore implements SessionStore {
  constructor(
    private readonly namespace: DurableObjectNamespace<SessionDO>,
    private readonly ids: IdGenerator = randomIds,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The session's Durable Object; the id is checked first so bad ids never reach storage. */
  stub(sessionId: string): DurableObjectStub<SessionDO> {
    if (!isId("session", sessionId)) {
      throw new SessionStoreError("invalid_session_id", `session id ${JSON.stringify(String(sessionId).slice(0, 80))} is not of the form s_<letters, digits, _ or ->`);
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
    return unwrap(await this.stub(record.id).create(record));
  }

  async find(sessionId: string): Promise<OwnedSessionMeta | null> {
    return this.stub(sessionId).describe();
  }

  async info(sessionId: string): Promise<SessionInfo | null> {
    return this.stub(sessionId).info();
  }

  async appendMessage(sessionId: string, message: AgentMessage): Promise<number> {
    return unwrap(await this.stub(sessionId).appendMessages([message]))[0]!;
  }

  async appendEvent(sessionId: string, event: AgentEvent): Promise<number> {
    return unwrap(await this.stub(sessionId).appendEvents([event]))[0]!;
  }

  async loadMessages(sessionId: string): Promise<AgentMessage[]> {
    return unwrap(await this.stub(sessionId).loadMessages());
  }

  async loadEvents(sessionId: string): Promise<AgentEvent[]> {
    return (await this.loadEventsAfter(sessionId, 0)).map((e) => e.event);
  }

  /** Events with their seqs (the SSE ids), after `afterSeq`. */
  async loadEventsAfter(sessionId: string, afterSeq: number): Promise<{ seq: number; event: AgentEvent }[]> {
    const result = (await this.stub(sessionId).loadEvents(afterSeq)) as SessionResult<{ seq: number; event: AgentEvent }[]>;
    return unwrap(result);
  }
}

export function unwrap<T>(result: SessionResult<T>): T {
  if (result.ok) return result.value;
  throw new SessionStoreError(result.code, result.message);
}
