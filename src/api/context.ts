import type { Context } from "hono";
import type { AppEnv } from "../env";

/** Hono generics of the app: bindings plus the authenticated tenant (null when auth is off). */
export type AppBindings = {
  Bindings: AppEnv;
  Variables: { tenant: string | null };
};
export type AppContext = Context<AppBindings>;
