import type { SessionDO } from "./session/session-do";

/** Bindings and secrets of the Worker (see wrangler.toml and .dev.vars). */
export interface AppEnv {
  SESSIONS: DurableObjectNamespace<SessionDO>;
  STORE: R2Bucket;
  /** `name:token,name2:token2`; when unset the API is open (local development). */
  AUTH_TOKENS?: string;
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  MODEL?: string;
}

declare global {
  namespace Cloudflare {
    interface Env extends AppEnv {}
    interface GlobalProps {
      mainModule: typeof import("./index");
      durableNamespaces: "SessionDO";
    }
  }
}
