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
  /** Signs stream tokens (`?token=` for a browser EventSource); at least 32 characters. */
  STREAM_TOKEN_SECRET?: string;
  /** `*` (only while auth is off) or origins separated by commas; unset: no CORS headers. */
  CORS_ORIGINS?: string;
  /** Host names the API answers on while AUTH_TOKENS is unset, besides localhost and IP addresses (comma-separated). */
  OPEN_HOSTS?: string;
  /** `debug`, `info` (default), `warn` or `error`: the lowest level of log line written. */
  LOG_LEVEL?: string;
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  MODEL?: string;
  /** The configured model's context window in tokens (a prompt's `contextWindow` wins). */
  MODEL_CONTEXT_WINDOW?: string;
  /** Model names a prompt may name besides MODEL (comma-separated); unset: any. Replays are always allowed. */
  ALLOWED_MODELS?: string;
}
