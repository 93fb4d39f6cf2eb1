import { createModelClient, modelConfigFromEnv, type ModelClient } from "../model";
import type { AppEnv } from "../env";
import type { OwnedSessionMeta } from "./session-meta";
import { DurableSessionStore } from "./session-store";

/**
 * The model client of one run: the configured OpenAI-compatible endpoint (the request may name
 * another model), or `replay:<sessionId>`, which may only read sessions of the same tenant.
 */
export function runModel(env: AppEnv, meta: OwnedSessionMeta, requested: string | undefined, fetch: typeof globalThis.fetch): ModelClient {
  return createModelClient({ ...modelConfigFromEnv(env), fetch }, requested, {
    loadMessages: async (sessionId) => {
      const store = new DurableSessionStore(env.SESSIONS);
      const source = sessionId === meta.id ? meta : await store.find(sessionId);
      if (!source || source.owner !== meta.owner) throw new Error(`session '${sessionId}' does not exist`);
      return store.loadMessages(sessionId);
    },
  });
}
