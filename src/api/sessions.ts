import { Hono } from "hono";
import { DEFAULT_SESSION_PAGE, HarnessError, isId, isoTime, MAX_IMPORT_BYTES, unwrapResult } from "../domain";
import type { SessionListPosition } from "../tenant/session-index";
import { readBodyBytes, readJsonBody, readQuery, requireContentType } from "./body";
import type { AppBindings, AppContext } from "./context";
import { readConversation } from "./conversation-import";
import { requireSession, sessionStore } from "./lookup";
import { CompactBody, CreateSessionBody, ImportQuery, SessionListQuery } from "./schemas";

/** Sessions: list, create, import, describe, export their logs as JSONL, read their files and changes. */
export const sessionRoutes = new Hono<AppBindings>()
  /** `?limit=&cursor=` -> `{items: [{id, title, projectId, workspaceId, createdAt}], nextCursor}`, newest first. */
  .get("/", async (c) => {
    const query = readQuery(c, SessionListQuery);
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
    const page = await sessionStore(c).list(c.get("tenant"), query.limit ?? DEFAULT_SESSION_PAGE, after);
    return c.json({
      items: page.items.map((s) => ({
        id: s.id,
        title: s.title,
        projectId: s.projectId,
        workspaceId: s.workspaceId,
        createdAt: s.createdAt,
      })),
      nextCursor: page.next ? encodeCursor(page.next) : null,
    });
  })
  /** `{workspaceId?, projectId?, title?}` -> 201 `{sessionId, workspaceId, projectId, createdAt}`. */
  .post("/", async (c) => {
    const body = await readJsonBody(c, CreateSessionBody);
    const meta = await sessionStore(c).create({ ...body, owner: c.get("tenant") });
    return c.json({ sessionId: meta.id, workspaceId: meta.workspaceId, projectId: meta.projectId, createdAt: meta.createdAt }, 201);
  })
  /**
   * A new session holding an exported conversation (the JSONL of `GET .../messages`), for example to
   * replay it with `model: "replay:<id>"`: 201 `{sessionId, workspaceId, projectId, createdAt, messages}`.
   */
  .post("/import", async (c) => {
    const query = readQuery(c, ImportQuery);
    requireContentType(c, ["application/x-ndjson", "application/jsonl"]);
    const bytes = await readBodyBytes(c, MAX_IMPORT_BYTES);
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      throw new HarnessError("import_invalid", "the body is not valid UTF-8");
    }
    const messages = readConversation(text);
    const meta = await sessionStore(c).importSession({ ...query, owner: c.get("tenant") }, messages);
    return c.json(
      {
        sessionId: meta.id,
        workspaceId: meta.workspaceId,
        projectId: meta.projectId,
        createdAt: meta.createdAt,
        messages: messages.length,
      },
      201,
    );
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

/** A list position as an opaque cursor (base64url of `[createdAt, id]`). */
function encodeCursor(position: SessionListPosition): string {
  return btoa(JSON.stringify([position.createdAt, position.id]))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

function decodeCursor(cursor: string): SessionListPosition {
  try {
    const [createdAt, id, ...rest] = JSON.parse(atob(cursor.replace(/-/g, "+").replace(/_/g, "/"))) as unknown[];
    if (rest.length === 0 && isoTime.safeParse(createdAt).success && isId("session", id)) return { createdAt: createdAt as string, id };
  } catch {
    // falls through to the refusal
  }
  throw new HarnessError("invalid_cursor", "the cursor is not one this API handed out; start again without it");
}
