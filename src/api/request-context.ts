import type { MiddlewareHandler } from "hono";
import type { AppBindings } from "./context";

/** A client may name its request (`x-request-id`) with up to 64 of these characters; otherwise one is made. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

type LogLevel = "debug" | "info" | "warn" | "error";
const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

/**
 * One structured log line (JSON), the Worker's only log format. Lines below `LOG_LEVEL` (default
 * `info`) are dropped.
 */
export function logLine(env: { LOG_LEVEL?: string }, level: LogLevel, msg: string, fields: Record<string, unknown>): void {
  const threshold = LEVELS.indexOf((env.LOG_LEVEL ?? "info") as LogLevel);
  if (LEVELS.indexOf(level) < (threshold < 0 ? 1 : threshold)) return;
  const line = JSON.stringify({ level, msg, ...fields });
  if (level === "error") console.error(line);
  else console.log(line);
}

/**
 * Gives every request an id: the client's `x-request-id` when it is a short token, else a new UUID.
 * Every answer carries it (`x-request-id`, and `requestId` in error bodies), and one log line per
 * request records it with the method, path, status and time taken.
 */
export function requestContext(): MiddlewareHandler<AppBindings> {
  return async (c, next) => {
    const offered = c.req.header("x-request-id");
    const requestId = offered && CLIENT_REQUEST_ID.test(offered) ? offered : crypto.randomUUID();
    c.set("requestId", requestId);
    const started = Date.now();
    await next();
    c.header("x-request-id", requestId);
    const status = c.res.status;
    logLine(c.env, status >= 500 ? "error" : "info", "request", {
      requestId,
      method: c.req.method,
      path: new URL(c.req.url).pathname,
      status,
      ms: Date.now() - started,
      ...(c.get("tenant") ? { tenant: c.get("tenant") } : {}),
    });
  };
}
