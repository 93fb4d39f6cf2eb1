import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { requireBearerToken } from "./auth";
import type { AppBindings } from "./context";
import { errorBody, errorResponse } from "./errors";
import { learningRoutes } from "./learning";
import { projectRoutes } from "./projects";
import { settleRequestBodies } from "./request-body";
import { runRoutes } from "./runs";
import { sessionRoutes } from "./sessions";
import { workspaceRoutes } from "./workspaces";

/** The HTTP API: auth, validation and routing only; the work happens in the session's Durable Object. */
export function createApp(): Hono<AppBindings> {
  const app = new Hono<AppBindings>();
  app.use("/api/*", settleRequestBodies());
  app.use("/api/*", requireBearerToken());
  app.route("/api/sessions", sessionRoutes);
  app.route("/api/sessions", runRoutes);
  app.route("/api/sessions", learningRoutes);
  app.route("/api/projects", projectRoutes);
  app.route("/api/workspaces", workspaceRoutes);

  app.notFound((c) => c.json(errorBody("route_not_found", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`), 404));
  // The one place errors become HTTP answers: registry codes keep their status, anything else is a 500.
  app.onError((err, c) => {
    if (err instanceof HTTPException) return c.json(errorBody("invalid_body", err.message), 400);
    const { status, body, unexpected } = errorResponse(err);
    if (unexpected)
      console.error(JSON.stringify({ level: "error", msg: "unhandled error", error: err instanceof Error ? err.stack : String(err) }));
    if (status === 401) c.header("WWW-Authenticate", 'Bearer realm="pi-harness"');
    return c.json(body, status);
  });
  return app;
}
