import { Hono } from "hono";
import { z } from "zod";
import {
  DEFAULT_LIST_LIMIT,
  formatIssues,
  HarnessError,
  MAX_LIST_LIMIT,
  MAX_TITLE_CHARS,
  ProjectId,
  randomIds,
  unwrapResult,
  WorkspaceId,
} from "../domain";
import { decodeCursor } from "../tenant/session-index";
import { readJsonBody } from "./body";
import type { AppBindings, AppContext } from "./context";
import { claimIdempotencyKey, IdempotencyKey } from "./idempotency";
import { requireSession, sessionStore } from "./lookup";

const CreateSessionBody = z.strictObject({
  workspaceId: WorkspaceId.optional(),
  projectId: ProjectId.optional(),
  title: z.string().max(MAX_TITLE_CHARS).optional(),
  /** An idempotency key, when the client cannot send the Idempotency-Key header. */
  requestId: IdempotencyKey.optional(),
});

const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT),
  cursor: z.string().max(1000).optional(),
  projectId: ProjectId.optional(),
});

const ForkBody = z.strictObject({
  atMessageId: z.string().min(1).max(200).optional(),
  title: z.string().max(MAX_TITLE_CHARS).nullable().optional(),
  requestId: IdempotencyKey.optional(),
});

const PatchSessionBody = z.strictObject({ title: z.string().max(MAX_TITLE_CHARS).nullable() });

/** Sessions: create, list, rename, delete, describe, export their logs as JSONL, read their files and changes. */
export const sessionRoutes = new Hono<AppBindings>()
  /** `{workspaceId?, projectId?, title?, requestId?}` -> 201 `{sessionId, workspaceId, projectId, createdAt}`; idempotent with a key. */
  .post("/", async (c) => {
    const { requestId, ...body } = await readJsonBody(c, CreateSessionBody);
    const claimed = await claimIdempotencyKey(c, requestId, ["POST /api/sessions", body], { sessionId: randomIds.next("session") });
    const meta = await sessionStore(c).create({ ...body, id: claimed?.proposal.sessionId, owner: c.get("tenant") });
    return c.json({ sessionId: meta.id, workspaceId: meta.workspaceId, projectId: meta.projectId, createdAt: meta.createdAt }, 201);
  })
  /** The caller's sessions, newest first: `{items: [summary], nextCursor}`; `?limit=&cursor=&projectId=`. */
  .get("/", async (c) => {
    const query = ListQuery.safeParse(c.req.query());
    if (!query.success) throw new HarnessError("invalid_body", `query: ${formatIssues(query.error.issues)}`);
    const { limit, cursor, projectId } = query.data;
    const after = cursor === undefined ? null : decodeCursor(cursor);
    if (cursor !== undefined && !after)
      throw new HarnessError("invalid_cursor", "the cursor is not one this API returned; start again without it");
    return c.json(await sessionStore(c).list(c.get("tenant"), limit, after, projectId ?? null));
  })
  /**
   * `{atMessageId?, title?}` -> 201 a new session with the messages up to and including `atMessageId`
   * (default: the newest committed one) and the workspace as it was at that message; the source is untouched.
   */
  .post("/:id/fork", async (c) => {
    const { store, meta } = await requireSession(c);
    const { requestId, ...body } = await readJsonBody(c, ForkBody);
    const claimed = await claimIdempotencyKey(c, requestId, ["POST /api/sessions/:id/fork", meta.id, body], {
      sessionId: randomIds.next("session"),
    });
    const fork = await store.fork(meta.id, c.get("tenant"), { ...body, newId: claimed?.proposal.sessionId });
    return c.json(
      {
        sessionId: fork.id,
        workspaceId: fork.workspaceId,
        projectId: fork.projectId,
        title: fork.title,
        createdAt: fork.createdAt,
        forkedFrom: fork.forkedFrom,
      },
      201,
    );
  })
  /** `{title}` (null clears it) -> the session's meta. */
  .patch("/:id", async (c) => {
    const { store, meta } = await requireSession(c);
    const { title } = await readJsonBody(c, PatchSessionBody);
    return c.json(await store.setTitle(meta.id, c.get("tenant"), title));
  })
  /** Aborts its run and removes its log, workspace changes, R2 objects and listing -> 204. Repeat to finish a failed deletion. */
  .delete("/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await sessionStore(c).delete(id, c.get("tenant")))) throw new HarnessError("session_not_found", `session '${id}' does not exist`);
    return c.body(null, 204);
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
      forkedFrom: info.forkedFrom,
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
