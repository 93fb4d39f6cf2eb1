import { Hono } from "hono";
import { DEFAULT_SESSION_PAGE, HarnessError, MAX_IMPORT_BYTES, randomIds, unwrapResult } from "../domain";
import { logLine } from "../log";
import { withoutEndMark } from "../workspace/streams";
import { pacedUpload } from "../workspace/upload-pace";
import { readCursor, readJsonBody, readQuery, refuseDeclaredLengthOver, requireContentType } from "./body";
import { type AppBindings, type AppContext, isHead } from "./context";
import { readConversationBody } from "./conversation-import";
import { claimIdempotencyKey, idempotencyKeyOf } from "./idempotency";
import { requireSession, sessionStore } from "./lookup";
import { JSONL_MEDIA_TYPES, requestBody } from "./request-body";
import { CompactBody, CreateSessionBody, ForkBody, ImportQuery, LogExportQuery, PatchSessionBody, SessionListQuery } from "./schemas";
import { inUploadSlot } from "./upload-slot";

/** Sessions: list, create, import, describe, export their logs as JSONL, read their files and changes. */
export const sessionRoutes = new Hono<AppBindings>()
  /**
   * `?limit=&cursor=&projectId=` -> `{items: [summary], nextCursor}`: the caller's sessions, newest first,
   * each with its last reported status, counts and updatedAt (see docs/architecture.md).
   */
  .get("/", async (c) => {
    const query = readQuery(c, SessionListQuery);
    const after = readCursor(query.cursor);
    return c.json(await sessionStore(c).list(c.get("tenant"), query.limit ?? DEFAULT_SESSION_PAGE, after, query.projectId ?? null));
  })
  /** `{workspaceId?, projectId?, title?, requestId?}` -> 201 `{sessionId, workspaceId, projectId, createdAt}`; idempotent with a key. */
  .post("/", async (c) => {
    const { requestId, ...body } = await readJsonBody(c, CreateSessionBody);
    const claimed = await claimIdempotencyKey(c, requestId, ["POST /api/sessions", body], { sessionId: randomIds.next("session") });
    const meta = await sessionStore(c).create({ ...body, id: claimed?.proposal.sessionId, owner: c.get("tenant") });
    return c.json(
      { sessionId: meta.id, workspaceId: meta.workspaceId, projectId: meta.projectId, createdAt: meta.createdAt },
      201,
      sessionLocation(meta.id),
    );
  })
  // "import" is not a session id: the other methods on it are no route, not a malformed id.
  .all("/import", (c, next) => {
    if (c.req.method === "POST") return next();
    throw new HarnessError("route_not_found", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`);
  })
  /**
   * A new session holding an exported conversation (the JSONL of `GET .../messages`), for example to
   * replay it with `model: "replay:<id>"`: 201 `{sessionId, workspaceId, projectId, createdAt, messages}`.
   */
  .post("/import", async (c) => {
    const query = readQuery(c, ImportQuery);
    requireContentType(c, JSONL_MEDIA_TYPES);
    refuseDeclaredLengthOver(c, MAX_IMPORT_BYTES);
    idempotencyKeyOf(c); // a malformed key is refused before the body is read
    const body = requestBody(c.req.raw);
    // Through the isolate's upload slots, as an archive is: an import holds its messages and the
    // copy sent to the session (about 35 MB at 16 MiB), so a few at once would pass the isolate's
    // 128 MB. The slot is held from the body's first byte, so the body must keep coming (pacedUpload).
    const { meta, messages } = await inUploadSlot(c, async () => {
      const { messages, sha256 } = await readConversationBody(body && pacedUpload(body), MAX_IMPORT_BYTES);
      // A retried import (16 MiB bodies get retried) must not make a second session.
      const fingerprint = ["POST /api/sessions/import", query, sha256];
      const claimed = await claimIdempotencyKey(c, undefined, fingerprint, { sessionId: randomIds.next("session") });
      const meta = await sessionStore(c).importSession({ ...query, id: claimed?.proposal.sessionId, owner: c.get("tenant") }, messages);
      return { meta, messages: messages.length };
    });
    return c.json(
      {
        sessionId: meta.id,
        workspaceId: meta.workspaceId,
        projectId: meta.projectId,
        createdAt: meta.createdAt,
        messages,
      },
      201,
      sessionLocation(meta.id),
    );
  })
  /**
   * `{atMessageId?, title?, requestId?}` -> 201 a new session with the messages up to and including
   * `atMessageId` (default: the newest committed one) and the workspace as it was at that message.
   */
  .post("/:id/fork", async (c) => {
    const sourceId = c.req.param("id");
    const { requestId, ...body } = await readJsonBody(c, ForkBody);
    const claimed = await claimIdempotencyKey(c, requestId, ["POST /api/sessions/:id/fork", sourceId, body], {
      sessionId: randomIds.next("session"),
    });
    const store = sessionStore(c);
    const tenant = c.get("tenant");
    // A repeat answers the fork it made, also once its source is deleted; a first request needs the source.
    const fork =
      (claimed && (await store.filledFork(claimed.proposal.sessionId!, tenant))) ??
      (await store.fork((await requireSession(c)).meta.id, tenant, { ...body, newId: claimed?.proposal.sessionId }));
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
      sessionLocation(fork.id),
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
    if (!info) throw new HarnessError("session_not_found", `session '${meta.id}' does not exist`);
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
      usage: info.usage,
      contextTokens: info.contextTokens,
      contextWindow: info.contextWindow,
    });
  })
  /**
   * Compacts the session's history now: `{instructions?}` -> `{messageId, tokensBefore, tokensAfter}`.
   * 409 `session_busy` while a run is active, 409 `nothing_to_compact` when everything is recent.
   */
  .post("/:id/compact", async (c) => {
    const { store, meta } = await requireSession(c);
    const { instructions } = await readJsonBody(c, CompactBody);
    return c.json(unwrapResult(await store.stub(meta.id).compact(instructions)));
  })
  /** The messages as JSONL, exactly as stored. */
  .get("/:id/messages", (c) => exportLog(c, "messages"))
  /** The events as JSONL, each with its `seq` first. */
  .get("/:id/events", (c) => exportLog(c, "events"))
  /** A workspace file as the session's agent sees it: its overlay first, then the snapshot. */
  .get("/:id/files/:path{[\\s\\S]+}", async (c) => {
    const { store, meta } = await requireSession(c);
    const headers = (size: number) => ({
      "content-type": "application/octet-stream",
      "content-length": String(size),
      "x-content-type-options": "nosniff",
    });
    // A HEAD opens no stream: one of a changed file would hold a download's place until its cutoff (hunt 85).
    if (isHead(c)) return new Response(null, { headers: headers(unwrapResult(await store.stub(meta.id).fileSize(c.req.param("path")))) });
    const { size, body } = unwrapResult(await store.stub(meta.id).readFile(c.req.param("path")));
    // A changed file comes as a JavaScript stream, whose length the runtime would not send: it is said.
    const sized = new FixedLengthStream(size);
    body.pipeTo(sized.writable).catch(() => {});
    return new Response(sized.readable, { headers: headers(size) });
  })
  /** Every change this session made, as a unified diff that `git apply` accepts on the snapshot. */
  .get("/:id/changes", async (c) => {
    const { store, meta } = await requireSession(c);
    const headers = { "content-type": "text/x-diff; charset=utf-8", "cache-control": "no-store" };
    if (isHead(c)) {
      if (!meta.workspaceId) throw new HarnessError("no_workspace", "this session has no workspace");
      return new Response(null, { headers });
    }
    const diff = withoutEndMark(unwrapResult(await store.stub(meta.id).changes()), brokenOff(c, meta.id));
    return new Response(diff, { headers });
  });

/** A created session's address (`Location` of a 201). */
const sessionLocation = (id: string) => ({ location: `/api/sessions/${id}` });

/**
 * A log stream's records as JSONL (`?after=<seq>`: only those after it); `x-log-seq` is the log's last
 * seq when the read began, the `after` of a later read that wants only what came since.
 */
export async function exportLog(c: AppContext, stream: "messages" | "events" | "trace"): Promise<Response> {
  const { after } = readQuery(c, LogExportQuery);
  const { store, meta } = await requireSession(c);
  const headers = (through: number) => ({
    "content-type": "application/x-ndjson; charset=utf-8",
    "cache-control": "no-store",
    "x-log-seq": String(through),
  });
  if (isHead(c)) return new Response(null, { headers: headers(unwrapResult(await store.stub(meta.id).logThrough())) });
  const exported = unwrapResult(await store.stub(meta.id).exportJsonl(stream, after === undefined ? 0 : Number(after.trim())));
  return new Response(withoutEndMark(exported.body, brokenOff(c, meta.id)), { headers: headers(exported.through) });
}

/** Logs a download that broke off after its answer began: the client may see it end as if whole (workerd#6818). */
export function brokenOff(c: AppContext, sessionId: string): () => void {
  return () => logLine("error", "download broke off", { requestId: c.get("requestId"), sessionId, path: new URL(c.req.url).pathname });
}
