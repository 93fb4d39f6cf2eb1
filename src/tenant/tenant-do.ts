import { DurableObject } from "cloudflare:workers";
import type { AppEnv } from "../env";
import { SessionIndex, type SessionIndexEntry, type SessionListPosition, type SessionPage } from "./session-index";
import type { TenantRpc } from "./tenant-api";

/**
 * One per tenant: the index of its sessions. It holds little per session, so one object serves a
 * tenant for a long time; the sessions themselves each live in their own SessionDO.
 */
export class TenantDO extends DurableObject<AppEnv> implements TenantRpc {
  private readonly sessions: SessionIndex;

  constructor(ctx: DurableObjectState, env: AppEnv) {
    super(ctx, env);
    this.sessions = new SessionIndex(ctx.storage.sql);
  }

  addSession(entry: SessionIndexEntry): void {
    this.sessions.add(entry);
  }

  findSession(id: string): SessionIndexEntry | null {
    return this.sessions.get(id);
  }

  listSessions(limit: number, after: SessionListPosition | null): SessionPage {
    return this.sessions.list(limit, after);
  }

  hasProject(id: string): boolean {
    return this.sessions.hasProject(id);
  }
}
