import { DurableObject } from "cloudflare:workers";
import type { ListPosition } from "../domain";
import type { AppEnv } from "../env";
import { logLine, useLogLevel } from "../log";
import { deleteUnder } from "../r2";
import { IdempotencyStore } from "./idempotency-store";
import { type PendingCreation, PendingCreations } from "./pending-creations";
import { SessionIndex, type SessionIndexEntry, type SessionPage, type SessionSummary, type SessionSummaryReport } from "./session-index";
import type { IdempotencyClaim, SessionListing, TenantRpc } from "./tenant-api";
import { NAMED_SESSIONS, type WorkspaceDeletionStart, WorkspaceIndex, type WorkspaceListItem, type WorkspacePage } from "./workspace-index";

/** Abandoned creations removed per alarm; the alarm comes back at once while more are due. */
const SWEEP_BATCH = 50;
/** After a removal failed, the alarm tries again this much later (not in a loop). */
const SWEEP_RETRY_MS = 5 * 60_000;

/**
 * One per tenant: the index of its sessions and its idempotency keys. It holds little per session,
 * so one object serves a tenant for a long time; the sessions themselves each live in their own SessionDO.
 * Its alarm removes what abandoned creations stored (`PendingCreations`).
 */
export class TenantDO extends DurableObject<AppEnv> implements TenantRpc {
  private readonly sessions: SessionIndex;
  private readonly keys: IdempotencyStore;
  private readonly workspaces: WorkspaceIndex;
  private readonly pending: PendingCreations;

  constructor(ctx: DurableObjectState, env: AppEnv) {
    super(ctx, env);
    useLogLevel(env.LOG_LEVEL);
    this.sessions = new SessionIndex(ctx.storage.sql);
    this.keys = new IdempotencyStore(ctx.storage.sql);
    this.workspaces = new WorkspaceIndex(ctx.storage.sql);
    this.pending = new PendingCreations(ctx.storage.sql);
  }

  async expectCreation(creation: PendingCreation, nowMs: number): Promise<string | null> {
    // A creation announced before (a retry of a keyed request, which may have listed it already) was
    // counted then; the others count with those still being made, so requests at once cannot pass the
    // bound together (hunt 85: 60 at once at 9,990 sessions were all created).
    const pending = this.pending.count(creation.kind);
    const full = this.pending.has(creation.kind, creation.id)
      ? null
      : creation.kind === "session"
        ? this.sessions.fullReason(creation.id, pending)
        : this.workspaces.fullReason(pending);
    if (full) return full;
    this.pending.expect(creation, nowMs);
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(this.pending.nextDeadline() ?? nowMs);
    return null;
  }

  addSession(entry: SessionIndexEntry, learnsInto: string, summary?: Pick<SessionSummary, "updatedAt" | "counts">): SessionListing {
    if (entry.workspaceId !== null && this.workspaces.deleted(entry.workspaceId)) return "workspace_deleted";
    if (this.sessions.projectState(learnsInto) === "deleting") return "project_deleting";
    this.sessions.add(entry, summary);
    this.pending.done("session", entry.id);
    return "listed";
  }

  addWorkspace(item: WorkspaceListItem): void {
    this.workspaces.add(item);
    this.pending.done("workspace", item.workspaceId);
  }

  /** Removes what abandoned creations stored, oldest first, and comes back for the next ones. */
  override async alarm(): Promise<void> {
    const nowMs = Date.now();
    const due = this.pending.abandoned(nowMs, SWEEP_BATCH);
    let failed = false;
    for (const creation of due) {
      try {
        await this.removeAbandoned(creation);
        this.pending.done(creation.kind, creation.id);
        logLine("info", "an abandoned creation was removed", { kind: creation.kind, id: creation.id });
      } catch (error) {
        failed = true;
        logLine("warn", "an abandoned creation was not removed", { kind: creation.kind, id: creation.id, error: String(error) });
      }
    }
    const next = this.pending.nextDeadline();
    if (next === null) return;
    await this.ctx.storage.setAlarm(failed ? Math.max(next, nowMs + SWEEP_RETRY_MS) : next);
  }

  private async removeAbandoned(creation: PendingCreation): Promise<void> {
    if (creation.kind === "session") {
      // Listed meanwhile (the index is the truth), or its object removes all it stored.
      if (this.sessions.get(creation.id, true)) return;
      await this.env.SESSIONS.getByName(creation.id).destroy();
      return;
    }
    if (creation.r2Prefix === null) return;
    await deleteUnder(this.env.STORE, creation.r2Prefix);
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

  projectState(id: string): "listed" | "deleting" | null {
    return this.sessions.projectState(id);
  }

  beginProjectDeletion(projectId: string, orWithoutProject: boolean): WorkspaceDeletionStart {
    const using = this.sessions.learningInto(projectId, orWithoutProject, NAMED_SESSIONS);
    if (using.count > 0) return { ok: false, ...using };
    this.sessions.beginProjectDeletion(projectId, new Date().toISOString());
    return { ok: true };
  }

  endProjectDeletion(projectId: string): void {
    this.sessions.endProjectDeletion(projectId);
  }

  claimIdempotencyKey(key: string, fingerprint: string, proposal: string, nowMs: number): IdempotencyClaim {
    return this.keys.claim(key, fingerprint, proposal, nowMs);
  }

  findIdempotencyKey(key: string, nowMs: number): { fingerprint: string; proposal: string; claimedAtMs: number } | null {
    return this.keys.find(key, nowMs);
  }
}
