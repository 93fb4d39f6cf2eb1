import { Hono, type MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { clipText, HarnessError, RETRY_AFTER_SECONDS } from "../domain";
import { logLine } from "../log";
import { requireBearerToken } from "./auth";
import type { AppBindings } from "./context";
import { corsPolicy } from "./cors";
import { errorBody, errorResponse } from "./errors";
import { learningRoutes } from "./learning";
import { openApiDocument } from "./openapi";
import { projectRoutes } from "./projects";
import { strictQuery } from "./query-policy";
import { settleRequestBodies } from "./request-body";
import { requestContext } from "./request-context";
import { runRoutes } from "./runs";
import { sessionRoutes } from "./sessions";
import { workspaceRoutes } from "./workspaces";

/** A 5xx's message in its log line (it may quote a provider's answer) keeps this many characters. */
const MAX_LOGGED_MESSAGE_CHARS = 300;

/**
 * The HTTP API: auth, validation and routing only; the work happens in the session's Durable Object.
 * The Worker serves `/api/*`, `/healthz` and `/openapi.json`; every other path is a static asset
 * from `public/` (the session viewer), see wrangler.toml.
 */
export function createApp(): Hono<AppBindings> {
  const app = new Hono<AppBindings>();
  app.use("*", headWithoutBody());
  app.use("*", requestContext());
  // Before the routes, so that every answer of the Worker, the refusals of the middleware after it
  // (CORS preflights, auth, query) included, carries it: a cached health check or error would be a stale one.
  app.use("*", noStoreByDefault());
  app.use("*", corsPolicy());
  /** Liveness: answers without auth and without touching storage. */
  app.get("/healthz", (c) => c.json({ status: "ok" as const }));
  /** The OpenAPI 3.1 document of this API, built from the schemas the routes validate with. */
  app.get("/openapi.json", (c) => c.json(openApiDocument()));
  app.use("/api/*", settleRequestBodies());
  app.use("/api/*", requireBearerToken());
  app.use("/api/*", strictQuery());
  app.route("/api/sessions", sessionRoutes);
  app.route("/api/sessions", runRoutes);
  app.route("/api/sessions", learningRoutes);
  app.route("/api/projects", projectRoutes);
  app.route("/api/workspaces", workspaceRoutes);

  app.notFound((c) => {
    c.set("errorCode", "route_not_found");
    return c.json(errorBody("route_not_found", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`, c.get("requestId")), 404);
  });
  // The one place errors become HTTP answers: registry codes keep their status, anything else is a 500.
  // The request line carries the code; a 5xx is also logged with its message (a bug with its stack).
  app.onError((err, c) => {
    const requestId = c.get("requestId");
    if (err instanceof HTTPException) {
      c.set("errorCode", "invalid_body");
      return c.json(errorBody("invalid_body", err.message, requestId), 400);
    }
    const { status, body, unexpected } = errorResponse(err, requestId);
    const { code, message } = body.error;
    c.set("errorCode", code);
    if (unexpected) logLine("error", "unhandled error", { requestId, error: err instanceof Error ? err.stack : String(err) });
    else if (status >= 500)
      logLine(status === 503 ? "warn" : "error", "error answered", {
        requestId,
        status,
        code,
        message: clipText(message, MAX_LOGGED_MESSAGE_CHARS),
      });
    if (status === 401) c.header("WWW-Authenticate", 'Bearer realm="pi-harness"');
    if (status === 503 || status === 429) {
      const wait = err instanceof HarnessError ? err.retryAfterSeconds : undefined;
      c.header("Retry-After", String(wait ?? RETRY_AFTER_SECONDS));
    }
    return c.json(body, status);
  });
  return app;
}

/**
 * Middleware: Hono answers HEAD by running the GET route and dropping the body it answered without
 * cancelling it. The routes whose bodies hold a place answer HEAD without one (`isHead`); any other
 * body (a file read from R2) is cancelled here rather than left to the garbage collector. A JSON
 * answer (bounded, already in memory) is measured first: the GET's `Content-Length` is the runtime's,
 * set on the body, and a HEAD answers with the same headers.
 */
function headWithoutBody(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const body = c.req.method === "HEAD" ? c.res.body : null;
    if (!body) return;
    const headers = new Headers(c.res.headers);
    if (!headers.has("content-length") && headers.get("content-type")?.startsWith("application/json")) {
      headers.set("content-length", String((await c.res.arrayBuffer()).byteLength));
    } else {
      await body.cancel().catch(() => {});
    }
    c.res = new Response(null, { status: c.res.status, statusText: c.res.statusText, headers });
  };
}

/**
 * Middleware: the Worker's answers describe state that changes (a session's status, a file the agent
 * rewrites, whether the service is up), so none may be stored by a cache unless its route says otherwise.
 */
function noStoreByDefault(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (c.res.headers.has("cache-control")) return;
    try {
      c.res.headers.set("cache-control", "no-store");
    } catch {
      // An answer passed through with immutable headers: copy it to set one.
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set("cache-control", "no-store");
    }
  };
}
