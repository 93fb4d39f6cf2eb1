import type { Context } from "hono";
import type { AppEnv } from "../env";

/** Hono generics of the app: bindings, the request id, and the authenticated tenant (null when auth is off). */
export type AppBindings = {
  Bindings: AppEnv;
  Variables: { tenant: string | null; requestId: string };
};
export type AppContext = Context<AppBindings>;
