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

/**
 * A HEAD request. Hono answers one with the GET route and drops the body, without cancelling it: a
 * download's would keep one of the session's places until the stall cutoff (four HEADs of a log
 * kept its downloads at 429 for 61 s, hunt 51), an event stream's a live stream. Those routes answer
 * HEAD with their headers and open nothing.
 */
export function isHead(c: AppContext): boolean {
  return c.req.method === "HEAD";
}
