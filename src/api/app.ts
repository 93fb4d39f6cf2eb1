import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppBindings } from "./context";
import { bearerAuth } from "./auth";
import { ApiError, errorBody } from "./errors";
import { settleRequestBodies } from "./request-body";
import { runRoutes } from "./runs";
import { sessionRoutes } from "./sessions";
import { workspaceRoutes } from "./workspaces";

/** The HTTP API: auth, validation and routing only; the work happens in the session's Durable Object. */
export function createApp(): Hono<AppBindings> {
  const app = new Hono<AppBindings>();
  app.use("/api/*", settleRequestBodies());
  app.use("/api/*", bearerAuth());
  app.route("/api/sessions", sessionRoutes);
  app.route("/api/sessions", runRoutes);
  app.route("/api/workspaces", workspaceRoutes);

  app.notFound((c) => c.json(errorBody("route_not_found", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`), 404));
  app.onError((err, c) => {
    if (err instanceof ApiError) return c.json(errorBody(err.code, err.message), err.status);
    if (err instanceof HTTPException) return c.json(errorBody("http_error", err.message), err.status);
    console.error("unhandled error", err instanceof Error ? err.stack : String(err));
    return c.json(errorBody("internal_error", "the server failed to handle this request"), 500);
  });
  return app;
}
