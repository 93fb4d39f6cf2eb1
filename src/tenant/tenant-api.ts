import type { SessionIndexEntry, SessionListPosition, SessionPage } from "./session-index";

/** The RPC methods of TenantDO (types only, so the environment can name them). */
export interface TenantRpc extends Rpc.DurableObjectBranded {
  addSession(entry: SessionIndexEntry): void;
  findSession(id: string): SessionIndexEntry | null;
  listSessions(limit: number, after: SessionListPosition | null): SessionPage;
  /** Whether one of the tenant's sessions named this project. */
  hasProject(id: string): boolean;
}

/**
 * The object name of a tenant's index. Tenant names come from `AUTH_TOKENS` (`name:token`) and so
 * never contain ":", which keeps the name of the open API (auth off, tenant null) apart from them.
 */
export function tenantObjectName(tenant: string | null): string {
  return tenant === null ? ":open" : `tenant:${tenant}`;
}
