import { Hono } from "hono";
import { z } from "zod";
import { ProjectId, WorkspaceId } from "../domain";
import { DurableSessionStore, SessionStoreError, unwrap } from "../session/session-store";
import type { OwnedSessionMeta } from "../session/session-meta";
import type { SessionResult } from "../session/session-do";
import { readJsonBody } from "./body";
import type { AppBindings, AppContext } from "./context";
import { ApiError } from "./errors";
import { toApiError } from "./workspaces";
import { readWorkspaceMeta } from "../workspace/snapshot";

export const MAX_TITLE_CHARS = 200;

const CreateSessionBody = z.strictObject({
  workspaceId: WorkspaceId.optional(),
  projectId: ProjectId.optional(),
  title: z.string().max(MAX_TITLE_CHARS).optional(),
});

export function sessionStore(c: AppContext): DurableSessionStore {
  return new DurableSessionStore(c.env.SESSIONS);
}

/**
 * The session named in the route, if the caller may see it. Another tenant's session is reported
 * as not found, so ids cannot be probed.
 */
export async function requireSession(c: AppContext): Promise<{ store: DurableSessionStore; meta: OwnedSessionMeta }> {
  const store = sessionStore(c);
  const id = c.req.param("id") ?? "";
  const meta = await store.find(id).catch(mapStoreError);
  if (!meta || meta.owner !== c.get("tenant")) throw new ApiError(404, "session_not_found", `session '${id}' does not exist`);
  return { store, meta };
}

export function mapStoreError(err: unknown): never {
  if (err instanceof SessionStoreError) {
    const status = err.code === "session_not_found" ? 404 : err.code === "record_too_large" ? 413 : 400;
    throw new ApiError(status, err.code, err.message);
  }
  throw err;
}

/** Sessions: create, describe, and export their logs as JSONL. */
export const sessionRoutes = new Hono<AppBindings>()
  .post("/", async (c) => {
    const body = await readJsonBody(c, CreateSessionBody);
    // The workspace must exist and belong to the caller before a session can be opened on it.
    if (body.workspaceId) await readWorkspaceMeta(c.env.STORE, body.workspaceId, c.get("tenant")).catch((err) => Promise.reject(toApiError(err)));
    const meta = await sessionStore(c).create({ ...body, owner: c.get("tenant") });
    return c.json({ sessionId: meta.id, workspaceId: meta.workspaceId, projectId: meta.projectId, createdAt: meta.createdAt }, 201);
  })
  .get("/:id", async (c) => {
    const { store, meta } = await requireSession(c);
    const info = await store.info(meta.id);
    if (!info) throw new ApiError(404, "session_not_found", `session '${meta.id}' does not exist`);
    return c.json({
      id: info.id,
      workspaceId: info.workspaceId,
      projectId: info.projectId,
      title: info.title,
      createdAt: info.createdAt,
      updatedAt: info.updatedAt,
      status: info.status,
      counts: info.counts,
    });
  })
  .get("/:id/messages", (c) => exportLog(c, "messages"))
  .get("/:id/events", (c) => exportLog(c, "events"))
  /** A workspace file as the session's agent sees it: its overlay first, then the snapshot. */
  .get("/:id/files/:path{.+}", async (c) => {
    const { store, meta } = await requireSession(c);
    const bytes = unwrapWorkspace(await store.stub(meta.id).readFile(c.req.param("path")));
    return new Response(bytes, { headers: { "content-type": "application/octet-stream", "x-content-type-options": "nosniff" } });
  })
  /** Every change this session made, as a unified diff that `git apply` accepts on the snapshot. */
  .get("/:id/changes", async (c) => {
    const { store, meta } = await requireSession(c);
    const diff = unwrapWorkspace(await store.stub(meta.id).changes());
    return new Response(diff, { headers: { "content-type": "text/x-diff; charset=utf-8", "cache-control": "no-store" } });
  });

const WORKSPACE_STATUS: Record<string, 400 | 404 | 413> = { no_workspace: 404, not_found: 404, workspace_not_found: 404, file_too_large: 413 };

function unwrapWorkspace<T>(result: SessionResult<T>): T {
  if (result.ok) return result.value;
  throw new ApiError(WORKSPACE_STATUS[result.code] ?? 400, result.code, result.message);
}

async function exportLog(c: AppContext, stream: "messages" | "events"): Promise<Response> {
  const { store, meta } = await requireSession(c);
  const body = unwrap(await store.stub(meta.id).exportJsonl(stream));
  return new Response(body, { headers: { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" } });
}
