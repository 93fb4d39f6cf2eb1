import { Hono } from "hono";
import { z } from "zod";
import { MAX_TITLE_CHARS, ProjectId, unwrapResult, WorkspaceId } from "../domain";
import { readJsonBody } from "./body";
import type { AppBindings, AppContext } from "./context";
import { requireSession, sessionStore } from "./lookup";

const CreateSessionBody = z.strictObject({
  workspaceId: WorkspaceId.optional(),
  projectId: ProjectId.optional(),
  title: z.string().max(MAX_TITLE_CHARS).optional(),
});

/** Sessions: create, describe, export their logs as JSONL, read their files and changes. */
export const sessionRoutes = new Hono<AppBindings>()
  /** `{workspaceId?, projectId?, title?}` -> 201 `{sessionId, workspaceId, projectId, createdAt}`. */
  .post("/", async (c) => {
    const body = await readJsonBody(c, CreateSessionBody);
    const meta = await sessionStore(c).create({ ...body, owner: c.get("tenant") });
    return c.json({ sessionId: meta.id, workspaceId: meta.workspaceId, projectId: meta.projectId, createdAt: meta.createdAt }, 201);
  })
  .get("/:id", async (c) => {
    const { store, meta } = await requireSession(c);
    const info = await store.info(meta.id);
    if (!info) return c.json({ error: { code: "session_not_found", message: `session '${meta.id}' does not exist` } }, 404);
    return c.json({
      id: info.id,
      workspaceId: info.workspaceId,
      projectId: info.projectId,
      title: info.title,
      createdAt: info.createdAt,
      updatedAt: info.updatedAt,
      status: info.status,
      counts: info.counts,
      queue: info.queue,
    });
  })
  .get("/:id/messages", (c) => exportLog(c, "messages"))
  .get("/:id/events", (c) => exportLog(c, "events"))
  /** A workspace file as the session's agent sees it: its overlay first, then the snapshot. */
  .get("/:id/files/:path{.+}", async (c) => {
    const { store, meta } = await requireSession(c);
    const bytes = unwrapResult(await store.stub(meta.id).readFile(c.req.param("path")));
    return new Response(bytes, { headers: { "content-type": "application/octet-stream", "x-content-type-options": "nosniff" } });
  })
  /** Every change this session made, as a unified diff that `git apply` accepts on the snapshot. */
  .get("/:id/changes", async (c) => {
    const { store, meta } = await requireSession(c);
    const diff = unwrapResult(await store.stub(meta.id).changes());
    return new Response(diff, { headers: { "content-type": "text/x-diff; charset=utf-8", "cache-control": "no-store" } });
  });

async function exportLog(c: AppContext, stream: "messages" | "events"): Promise<Response> {
  const { store, meta } = await requireSession(c);
  const body = unwrapResult(await store.stub(meta.id).exportJsonl(stream));
  return new Response(body, { headers: { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" } });
}
