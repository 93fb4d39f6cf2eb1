import { HarnessError } from "../domain";
import { DurableSessionStore } from "../session/session-store";
import type { SessionIndexEntry } from "../tenant/session-index";
import type { AppContext } from "./context";

/** The session store of a request. */
export function sessionStore(c: AppContext): DurableSessionStore {
  return new DurableSessionStore(c.env);
}

/**
 * The session named in the route, if the caller may see it. Another tenant's session is reported as
 * not found, so ids cannot be probed.
 */
export async function requireSession(c: AppContext): Promise<{ store: DurableSessionStore; meta: SessionIndexEntry }> {
  const store = sessionStore(c);
  const id = c.req.param("id") ?? "";
  const meta = await store.findOwned(id, c.get("tenant"));
  if (!meta) throw new HarnessError("session_not_found", `session '${id}' does not exist`);
  return { store, meta };
}
