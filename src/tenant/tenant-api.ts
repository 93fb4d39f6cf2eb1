import type { ListPosition } from "../domain";
import type { PendingCreation } from "./pending-creations";
import type { SessionIndexEntry, SessionPage, SessionSummary, SessionSummaryReport } from "./session-index";
import type { WorkspaceDeletionStart, WorkspaceListItem, WorkspacePage } from "./workspace-index";

/** What `addSession` did: listed the session, or refused it and why. */
export type SessionListing = "listed" | "workspace_deleted" | "project_deleting";

/** The RPC methods of TenantDO (types only, so the environment can name them). */
export interface TenantRpc extends Rpc.DurableObjectBranded {
  /**
   * Announces a session or workspace about to store something before it is listed: unless listed
   * within ABANDONED_CREATION_MS, what it stored is removed. Refused (the reason, nothing noted) when
   * the tenant keeps as many as it may (MAX_TENANT_SESSIONS, MAX_TENANT_WORKSPACES, MAX_TENANT_WORKSPACE_BYTES).
   */
  expectCreation(creation: PendingCreation, nowMs: number): Promise<string | null>;
  /**
   * Lists a session that learns into the project `learnsInto` (its own, or the default one); not when
   * its workspace is being or was deleted, nor while that project is being deleted (a case it
   * delivered meanwhile could be emptied with the project).
   */
  addSession(entry: SessionIndexEntry, learnsInto: string, summary?: Pick<SessionSummary, "updatedAt" | "counts">): SessionListing;
  /** Lists a stored workspace snapshot. */
  addWorkspace(item: WorkspaceListItem): void;
  /** The tenant's workspaces, newest first (those uploaded before the list existed are not in it). */
  listWorkspaces(limit: number, after: ListPosition | null): WorkspacePage;
  /** Marks a workspace deleted, so no session is listed on it from now on, unless listed sessions use it. */
  beginWorkspaceDeletion(workspaceId: string, nowMs: number): WorkspaceDeletionStart;
  /** A deletion that began and did not end (its objects may be half gone). */
  workspaceDeletionPending(workspaceId: string): boolean;
  /** The deletion has ended: the workspace leaves the list. */
  finishWorkspaceDeletion(workspaceId: string, nowMs: number): void;
  /** The session, unless unknown or being deleted (`includeDeleting`: for DELETE, which finishes a deletion). */
  findSession(id: string, includeDeleting?: boolean): SessionIndexEntry | null;
  /** The tenant's sessions, newest first; of one project (`orWithoutProject`: and those created without one). */
  listSessions(limit: number, after: ListPosition | null, projectId: string | null, orWithoutProject?: boolean): SessionPage;
  /** A session's own report of its summary (status, counts, updatedAt, title). */
  reportSession(id: string, summary: SessionSummaryReport): void;
  setSessionTitle(id: string, title: string | null): void;
  /** First step of a deletion: unlisted and not found from now on. */
  markSessionDeleting(id: string): void;
  /** Last step of a deletion; the id is remembered for as long as an Idempotency-Key lives. */
  removeSession(id: string): void;
  /** Whether the session was deleted within an Idempotency-Key's lifetime. */
  wasSessionDeleted(id: string): boolean;
  /** "listed" once one of the tenant's sessions named the project, "deleting" while a deletion of it has not ended, else null. */
  projectState(id: string): "listed" | "deleting" | null;
  /**
   * Marks the project as being deleted (its routes answer 404), unless sessions learn into it: those
   * naming it, being deleted or not, and (`orWithoutProject`, the default project) those naming none.
   */
  beginProjectDeletion(projectId: string, orWithoutProject: boolean): WorkspaceDeletionStart;
  /** The project's data is removed: the tenant no longer has it, unless a session named it meanwhile. */
  endProjectDeletion(projectId: string): void;
  /**
   * Claims an idempotency key for a request with this fingerprint: `fresh` (first use, or the earlier
   * use expired), `repeat` (same request: `outcome` is what the first one stored via `proposal`), or
   * `reused` (same key, another request).
   */
  claimIdempotencyKey(key: string, fingerprint: string, proposal: string, nowMs: number): IdempotencyClaim;
  /** A key's live claim without claiming it (an upload's fingerprint is known only after its body). */
  findIdempotencyKey(key: string, nowMs: number): { fingerprint: string; proposal: string; claimedAtMs: number } | null;
}

export type IdempotencyClaim = { state: "fresh" | "repeat"; proposal: string; claimedAtMs: number } | { state: "reused" };

/**
 * The object name of a tenant's index. Tenant names come from `AUTH_TOKENS` (`name:token`) and so
 * never contain ":", which keeps the name of the open API (auth off, tenant null) apart from them.
 */
export function tenantObjectName(tenant: string | null): string {
  return tenant === null ? ":open" : `tenant:${tenant}`;
}
