import type { ProjectRpc } from "./awtl/project-api";
import type { SessionRpc } from "./session/session-api";
import type { TenantRpc } from "./tenant/tenant-api";

/** Bindings and secrets of the Worker (see wrangler.toml and .dev.vars). Types only: no implementation is imported. */
export interface AppEnv {
  SESSIONS: DurableObjectNamespace<SessionRpc>;
  TENANTS: DurableObjectNamespace<TenantRpc>;
  PROJECTS: DurableObjectNamespace<ProjectRpc>;
  STORE: R2Bucket;
  /** `name:token,name2:token2`; when unset the API is open (local development). */
  AUTH_TOKENS?: string;
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  MODEL?: string;
  /** The configured model's context window in tokens (a prompt's `contextWindow` wins). */
  MODEL_CONTEXT_WINDOW?: string;
}
