import type { Context } from "hono";
import type { ApiErrorCode } from "../domain";
import type { AppEnv } from "../env";

/**
 * Hono generics of the app: bindings, the request id, the authenticated tenant (null when auth is
 * off), and the code of the error answered, if any (for the request's log line).
 */
export type AppBindings = {
  Bindings: AppEnv;
  Variables: {
    tenant: string | null;
    /** SHA-256 of the bearer token the request presented (null with auth off, or with a stream token). */
    bearer: ArrayBuffer | null;
    requestId: string;
    errorCode: ApiErrorCode | undefined;
  };
};
export type AppContext = Context<AppBindings>;
