import { Hono } from "hono";
import { isId, randomIds } from "../domain";
import { ArchiveError, archiveInvalid, archiveTooLarge } from "../workspace/archive-errors";
import { WorkspaceError, type WorkspaceErrorCode } from "../workspace/errors";
import { ingestWorkspace } from "../workspace/ingest";
import { DEFAULT_INGEST_LIMITS } from "../workspace/limits";
import { resolveWorkspacePath } from "../workspace/paths";
import { loadWorkspace, readWorkspaceMeta } from "../workspace/snapshot";
import type { AppBindings } from "./context";
import { ApiError } from "./errors";

const WORKSPACE_ERROR_STATUS: Record<WorkspaceErrorCode, 400 | 404 | 409 | 413> = {
  path_escape: 400,
  path_too_long: 400,
  not_found: 404,
  is_directory: 400,
  not_a_directory: 400,
  file_too_large: 413,
  workspace_not_found: 404,
};

/**
 * Maps a `WorkspaceError` or an `ArchiveError` (whose status the workspace layer suggests) to the
 * HTTP error with the same code and message; other errors pass through.
 */
export function toApiError(error: unknown): unknown {
  if (error instanceof WorkspaceError) return new ApiError(WORKSPACE_ERROR_STATUS[error.code], error.code, error.message);
  if (error instanceof ArchiveError) return new ApiError(error.status, error.code, error.message);
  return error;
}

/** Workspace snapshots; mounted at `/api/workspaces`. A workspace of another tenant is 404. */
export const workspaceRoutes = new Hono<AppBindings>();

/**
 * `POST /` with a tar, tar.gz or zip body: stores the snapshot and answers 201
 * `{workspaceId, files, bytes, skipped: [{path, reason}]}`.
 */
workspaceRoutes.post("/", async (c) => {
  try {
    const declared = Number(c.req.header("content-length") ?? "NaN");
    if (Number.isFinite(declared) && declared > DEFAULT_INGEST_LIMITS.maxArchiveBytes) {
      throw archiveTooLarge(`the archive is larger than ${DEFAULT_INGEST_LIMITS.maxArchiveBytes} bytes`);
    }
    const body = c.req.raw.body;
    if (!body) throw archiveInvalid("the archive is empty");
    const result = await ingestWorkspace(c.env.STORE, body, {
      contentType: c.req.header("content-type"),
      workspaceId: randomIds.next("workspace"),
      owner: c.get("tenant") ?? null,
    });
    return c.json(result, 201);
  } catch (error) {
    throw toApiError(error);
  }
});

/** `GET /:wid` -> `{workspaceId, files, bytes, createdAt}`. */
workspaceRoutes.get("/:wid", async (c) => {
  const wid = requireWorkspaceId(c.req.param("wid"));
  try {
    const meta = await readWorkspaceMeta(c.env.STORE, wid, c.get("tenant") ?? null);
    return c.json({ workspaceId: meta.workspaceId, files: meta.files, bytes: meta.bytes, createdAt: meta.createdAt });
  } catch (error) {
    throw toApiError(error);
  }
});

/** `GET /:wid/files/<path>` -> the file's raw bytes as stored in the snapshot. */
workspaceRoutes.get("/:wid/files/:path{.+}", async (c) => {
  const wid = requireWorkspaceId(c.req.param("wid"));
  try {
    const path = resolveWorkspacePath(c.req.param("path"));
    const snapshot = await loadWorkspace(c.env.STORE, wid, c.get("tenant") ?? null);
    const { entry, body } = await snapshot.fileStream(path);
    return new Response(body, {
      headers: {
        "content-type": "application/octet-stream",
        "content-length": String(entry.size),
        "x-content-type-options": "nosniff",
      },
    });
  } catch (error) {
    throw toApiError(error);
  }
});

function requireWorkspaceId(wid: string): string {
  if (isId("workspace", wid)) return wid;
  throw new ApiError(404, "workspace_not_found", `workspace ${JSON.stringify(String(wid).slice(0, 100))} does not exist`);
}
