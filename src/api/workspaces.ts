import { Hono } from "hono";
import { DEFAULT_WORKSPACE_PAGE, HarnessError, idForm, isId, randomIds } from "../domain";
import type { WorkspaceListItem } from "../tenant/workspace-index";
import { archiveInvalid, archiveTooLarge } from "../workspace/archive-errors";
import { ingestWorkspace } from "../workspace/ingest";
import { DEFAULT_INGEST_LIMITS } from "../workspace/limits";
import { resolveWorkspacePath } from "../workspace/paths";
import { deleteWorkspace, openWorkspace, readWorkspaceMeta } from "../workspace/snapshot";
import type { WorkspaceMeta } from "../workspace/snapshot-layout";
import { workspaceKeys } from "../workspace/snapshot-layout";
import { pacedUpload } from "../workspace/upload-pace";
import { readCursor, readQuery } from "./body";
import type { AppBindings } from "./context";
import { idempotencyKeyOf } from "./idempotency";
import { sessionStore } from "./lookup";
import { requestBody } from "./request-body";
import { WorkspaceListQuery } from "./schemas";
import { uploadOnce } from "./upload-once";
import { inUploadSlot } from "./upload-slot";

/** Workspace snapshots; mounted at `/api/workspaces`. A workspace of another tenant is 404. */
export const workspaceRoutes = new Hono<AppBindings>()
  /**
   * `POST /` with a tar, tar.gz or zip body: stores the snapshot and answers 201
   * `{workspaceId, files, bytes, skipped: [{path, reason}]}`.
   */
  .post("/", async (c) => {
    const declared = Number(c.req.header("content-length") ?? "NaN");
    if (Number.isFinite(declared) && declared > DEFAULT_INGEST_LIMITS.maxArchiveBytes) {
      throw archiveTooLarge(`the archive is larger than ${DEFAULT_INGEST_LIMITS.maxArchiveBytes} bytes`);
    }
    const body = requestBody(c.req.raw);
    if (!body) throw archiveInvalid("the archive is empty");
    const key = idempotencyKeyOf(c);
    // Through the isolate's ingest slots: a few 100 MB ingests at once would pass its 128 MB. A
    // slot is held until the body ends, so the body must keep coming (pacedUpload).
    const tenant = sessionStore(c).tenantIndex(c.get("tenant"));
    const ingest = (archive: ReadableStream<Uint8Array>) =>
      inUploadSlot(c, async () => {
        const workspaceId = randomIds.next("workspace");
        // Chunks are stored as the body arrives; should the request die before listing the
        // snapshot, the tenant removes them later (a refused upload removes its own at once).
        const full = await tenant.expectCreation(
          { kind: "workspace", id: workspaceId, r2Prefix: workspaceKeys(workspaceId).prefix },
          Date.now(),
        );
        if (full) throw new HarnessError("quota_exceeded", full);
        return ingestWorkspace(c.env.STORE, pacedUpload(archive), {
          contentType: c.req.header("content-type"),
          workspaceId,
          owner: c.get("tenant"),
        });
      });
    const answer = key === null ? await ingest(body) : await uploadOnce(c, key, body, ingest);
    // Listed once stored (a repeat of a keyed upload lists the same snapshot again: a no-op).
    const meta = await readWorkspaceMeta(c.env.STORE, answer.workspaceId);
    await tenant.addWorkspace(workspaceInfo(meta));
    return c.json(answer, 201, { location: `/api/workspaces/${answer.workspaceId}` });
  })
  /** `GET /?limit=&cursor=` -> `{items: [{workspaceId, files, bytes, createdAt}], nextCursor}`, newest first. */
  .get("/", async (c) => {
    const query = readQuery(c, WorkspaceListQuery);
    const after = readCursor(query.cursor);
    return c.json(
      await sessionStore(c)
        .tenantIndex(c.get("tenant"))
        .listWorkspaces(query.limit ?? DEFAULT_WORKSPACE_PAGE, after),
    );
  })
  /** `GET /:wid` -> `{workspaceId, files, bytes, createdAt}`. */
  .get("/:wid", async (c) => {
    return c.json(workspaceInfo(await readWorkspaceMeta(c.env.STORE, workspaceIdOf(c.req.param("wid")), c.get("tenant"))));
  })
  /**
   * `DELETE /:wid` -> 204: removes the snapshot's objects (pack, index, search index, meta). 409
   * `workspace_in_use` while sessions use it (delete them first). DELETE again finishes a deletion
   * that failed half-way; after one that ended it is 404.
   */
  .delete("/:wid", async (c) => {
    const wid = workspaceIdOf(c.req.param("wid"));
    const tenant = sessionStore(c).tenantIndex(c.get("tenant"));
    const stored = await readWorkspaceMeta(c.env.STORE, wid, c.get("tenant")).then(
      () => true,
      (err: unknown) => {
        if (err instanceof HarnessError && err.code === "workspace_not_found") return false;
        throw err;
      },
    );
    if (!stored && !(await tenant.workspaceDeletionPending(wid)))
      throw new HarnessError("workspace_not_found", `workspace ${wid} does not exist`);
    if (stored) {
      const started = await tenant.beginWorkspaceDeletion(wid, Date.now());
      if (!started.ok) {
        const more = started.count > started.sessions.length ? `, and ${started.count - started.sessions.length} more` : "";
        throw new HarnessError(
          "workspace_in_use",
          `workspace ${wid} is used by ${started.count} session(s) (${started.sessions.join(", ")}${more}); delete them first`,
        );
      }
    }
    await deleteWorkspace(c.env.STORE, wid);
    await tenant.finishWorkspaceDeletion(wid, Date.now());
    return c.body(null, 204);
  })
  /** `GET /:wid/files/<path>` -> the file's raw bytes as stored in the snapshot. */
  .get("/:wid/files/:path{[\\s\\S]+}", async (c) => {
    const wid = workspaceIdOf(c.req.param("wid"));
    const path = resolveWorkspacePath(c.req.param("path"));
    const snapshot = await openWorkspace(c.env.STORE, wid, c.get("tenant"));
    const { entry, body } = await snapshot.fileStream(path);
    return new Response(body, {
      headers: { "content-type": "application/octet-stream", "content-length": String(entry.size), "x-content-type-options": "nosniff" },
    });
  });

/** What the API tells of a snapshot (`GET /:wid`, and each item of the list). */
function workspaceInfo(meta: WorkspaceMeta): WorkspaceListItem {
  return { workspaceId: meta.workspaceId, files: meta.files, bytes: meta.bytes, createdAt: meta.createdAt };
}

function workspaceIdOf(wid: string): string {
  if (isId("workspace", wid)) return wid;
  throw new HarnessError("invalid_workspace_id", `workspace id ${JSON.stringify(String(wid).slice(0, 80))} is not ${idForm("workspace")}`);
}
