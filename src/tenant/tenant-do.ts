import { DurableObject } from "cloudflare:workers";
import type { AppEnv } from "../env";
import { useLogLevel } from "../log";
import { IdempotencyStore } from "./idempotency-store";
import {
  type ListPosition,
  SessionIndex,
  type SessionIndexEntry,
  type SessionPage,
  type SessionSummary,
  type SessionSummaryReport,
} from "./session-index";
import type { IdempotencyClaim, TenantRpc } from "./tenant-api";
import { type WorkspaceDeletionStart, WorkspaceIndex, type WorkspaceListItem, type WorkspacePage } from "./workspace-index";

/**
 * One per tenant: the index of its sessions and its idempotency keys. It holds little per session,
 * so one object serves a tenant for a long time; the sessions themselves each live in their own SessionDO.
 */
export class TenantDO extends DurableObject<AppEnv> implements TenantRpc {
  private readonly sessions: SessionIndex;
  private readonly keys: IdempotencyStore;
  private readonly workspaces: WorkspaceIndex;

  constructor(ctx: DurableObjectState, env: AppEnv) {
    super(ctx, env);
    useLogLevel(env.LOG_LEVEL);
    this.sessions = new SessionIndex(ctx.storage.sql);
    this.keys = new IdempotencyStore(ctx.storage.sql);
    this.workspaces = new WorkspaceIndex(ctx.storage.sql);
  }

  addSession(entry: SessionIndexEntry, summary?: Pick<SessionSummary, "updatedAt" | "counts">): boolean {
    if (entry.workspaceId !== null && this.workspaces.deleted(entry.workspaceId)) return false;
    this.sessions.add(entry, summary);
    return true;
  }

  addWorkspace(item: WorkspaceListItem): void {
    this.workspaces.add(item);
  }

  listWorkspaces(limit: number, after: ListPosition | null): WorkspacePage {
    return this.workspaces.list(limit, after);
  }

  beginWorkspaceDeletion(workspaceId: string, nowMs: number): WorkspaceDeletionStart {
    return this.workspaces.beginDeletion(workspaceId, nowMs);
  }

  workspaceDeletionPending(workspaceId: string): boolean {
    return this.workspaces.deletionPending(workspaceId);
  }

  finishWorkspaceDeletion(workspaceId: string, nowMs: number): void {
    this.workspaces.finishDeletion(workspaceId, nowMs);
  }

  findSession(id: string, includeDeleting = false): SessionIndexEntry | null {
    return this.sessions.get(id, includeDeleting);
  }

  listSessions(limit: number, after: ListPosition | null, projectId: string | null, orWithoutProject = false): SessionPage {
    return this.sessions.list(limit, after, projectId, orWithoutProject);
  }

  reportSession(id: string, summary: SessionSummaryReport): void {
    this.sessions.report(id, summary);
  }

  setSessionTitle(id: string, title: string | null): void {
    this.sessions.setTitle(id, title);
  }

  markSessionDeleting(id: string): void {
    this.sessions.markDeleting(id);
  }

  removeSession(id: string): void {
    this.sessions.remove(id, Date.now());
  }

  wasSessionDeleted(id: string): boolean {
    return this.sessions.wasDeleted(id, Date.now());
  }

  hasProject(id: string): boolean {
    return this.sessions.hasProject(id);
  }

  claimIdempotencyKey(key: string, fingerprint: string, proposal: string, nowMs: number): IdempotencyClaim {
    return this.keys.claim(key, fingerprint, proposal, nowMs);
  }

  findIdempotencyKey(key: string, nowMs: number): { fingerprint: string; proposal: string; claimedAtMs: number } | null {
    return this.keys.find(key, nowMs);
  }
}
