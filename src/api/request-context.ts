import type { MiddlewareHandler } from "hono";
import { clipText } from "../domain";
import { logLine, useLogLevel } from "../log";
import type { AppBindings } from "./context";

/** A client may name its request (`x-request-id`) with up to 64 of these characters; otherwise one is made. */
export const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** The request line keeps this much of the path (a URL may be 16 KB, and the client chose it); `pathChars` gives the rest's size. */
export const MAX_LOGGED_PATH_CHARS = 200;

/**
 * Gives every request an id: the client's `x-request-id` when it is a short token, else a new UUID.
 * Every answer carries it (`x-request-id`, and `requestId` in error bodies), and one log line per
 * request records it with the method, path, status, time taken and, for an error answer, its code.
 * It also sets the isolate's log level from `LOG_LEVEL`.
 */
export function requestContext(): MiddlewareHandler<AppBindings> {
  return async (c, next) => {
    useLogLevel(c.env.LOG_LEVEL);
    const offered = c.req.header("x-request-id");
    const requestId = offered && CLIENT_REQUEST_ID.test(offered) ? offered : crypto.randomUUID();
    c.set("requestId", requestId);
    const started = Date.now();
    await next();
    c.header("x-request-id", requestId);
    const status = c.res.status;
    const code = c.get("errorCode");
    // A 503 is back-pressure the client is told to retry (Retry-After), not a failure of the server.
    logLine(status === 503 ? "warn" : status >= 500 ? "error" : "info", "request", {
      requestId,
      method: c.req.method,
      ...loggedPath(new URL(c.req.url).pathname),
      status,
      ...(code ? { code } : {}),
      ms: Date.now() - started,
      ...(c.get("tenant") ? { tenant: c.get("tenant") } : {}),
    });
  };
}

/** The path for the request line: whole up to MAX_LOGGED_PATH_CHARS, else clipped with `…` and its full length. */
export function loggedPath(path: string): { path: string; pathChars?: number } {
  if (path.length <= MAX_LOGGED_PATH_CHARS) return { path };
  // The first MAX_LOGGED_PATH_CHARS characters, then the mark.
  return { path: clipText(path, MAX_LOGGED_PATH_CHARS + 1), pathChars: path.length };
}
