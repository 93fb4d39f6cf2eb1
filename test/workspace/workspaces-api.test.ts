import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppBindings } from "../../src/api/context";
import { errorBody, errorResponse } from "../../src/api/errors";
import { workspaceRoutes } from "../../src/api/workspaces";
import { httpStatus } from "../../src/domain";
import { archiveBomb, archiveInvalid, archiveTooLarge, archiveTooManyFiles, archiveUnsupported } from "../../src/workspace/archive-errors";
import { gzip, keysUnder, tarOf, text, zip } from "./archives";

const REQUEST_ID = "req-test";
/** The error body the routes answer with, for this test's request id. */
const errorOf = (code: Parameters<typeof errorBody>[0], message: string) => errorBody(code, message, REQUEST_ID);

/** The routes mounted like the app does, with the tenant taken from an `x-tenant` test header. */
function app() {
  const root = new Hono<AppBindings>();
  root.use("*", async (c, next) => {
    c.set("tenant", c.req.header("x-tenant") ?? null);
    c.set("requestId", REQUEST_ID);
    await next();
  });
  root.route("/api/workspaces", workspaceRoutes);
  root.onError((err, c) => {
    const { status, body } = errorResponse(err, REQUEST_ID);
    return c.json(body, status);
  });
  return root;
}

async function upload(body: Uint8Array, headers: Record<string, string> = {}) {
  return app().request("/api/workspaces", { method: "POST", body, headers: { "x-tenant": "alice", ...headers } }, env);
}

describe("workspace routes", () => {
  it("POST stores a tar.gz (201), GET returns its summary and files", async () => {
    const res = await upload(gzip(await tarOf({ "src/main.ts": "main();\n", "docs/a b.md": "# A\n" })), {
      "content-type": "application/gzip",
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { workspaceId: string };
    expect(Object.keys(created)).toEqual(["workspaceId", "files", "bytes", "skipped"]);
    expect(created).toEqual({ workspaceId: expect.stringMatching(/^w_[0-9a-z]{26}$/), files: 2, bytes: 12, skipped: [] });
    const wid = created.workspaceId;

    const meta = await app().request(`/api/workspaces/${wid}`, { headers: { "x-tenant": "alice" } }, env);
    expect(meta.status).toBe(200);
    const summary = (await meta.json()) as Record<string, unknown>;
    expect(Object.keys(summary)).toEqual(["workspaceId", "files", "bytes", "createdAt"]);
    expect(summary).toEqual({
      workspaceId: wid,
      files: 2,
      bytes: 12,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });

    const file = await app().request(`/api/workspaces/${wid}/files/src/main.ts`, { headers: { "x-tenant": "alice" } }, env);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("application/octet-stream");
    expect(file.headers.get("content-length")).toBe("8");
    expect(await file.text()).toBe("main();\n");

    const spaced = await app().request(`/api/workspaces/${wid}/files/docs/a%20b.md`, { headers: { "x-tenant": "alice" } }, env);
    expect(await spaced.text()).toBe("# A\n");
  });

  it("answers 404 workspace_not_found to other tenants and unknown ids, 400 to malformed ids", async () => {
    const created = (await (await upload(await tarOf({ "a.txt": "a" }))).json()) as { workspaceId: string };
    const other = await app().request(`/api/workspaces/${created.workspaceId}`, { headers: { "x-tenant": "mallory" } }, env);
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual(errorOf("workspace_not_found", `workspace ${created.workspaceId} does not exist`));
    const otherFile = await app().request(
      `/api/workspaces/${created.workspaceId}/files/a.txt`,
      { headers: { "x-tenant": "mallory" } },
      env,
    );
    expect(otherFile.status).toBe(404);
    const unknown = await app().request("/api/workspaces/w_unknown", { headers: { "x-tenant": "alice" } }, env);
    expect(await unknown.json()).toEqual(errorOf("workspace_not_found", "workspace w_unknown does not exist"));
    const malformed = await app().request("/api/workspaces/s_123", {}, env);
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual(
      errorOf("invalid_workspace_id", "workspace id \"s_123\" is not 'w_' followed by 1-64 characters of [A-Za-z0-9_-]"),
    );
  });

  it("maps missing files, directories and escapes to stable errors", async () => {
    const created = (await (await upload(await tarOf({ "dir/a.txt": "a" }))).json()) as { workspaceId: string };
    const get = (path: string) =>
      app().request(`/api/workspaces/${created.workspaceId}/files/${path}`, { headers: { "x-tenant": "alice" } }, env);
    const missing = await get("nope.txt");
    expect([missing.status, await missing.json()]).toEqual([404, errorOf("not_found", "no file at 'nope.txt'")]);
    const dir = await get("dir");
    expect([dir.status, await dir.json()]).toEqual([400, errorOf("is_directory", "'dir' is a directory")]);
    const escaped = await get("dir/%2e%2e%2f%2e%2e%2fetc%2fpasswd");
    expect(escaped.status).toBe(400);
    expect(((await escaped.json()) as { error: { code: string } }).error.code).toBe("path_escape");
    const long = await get("d".repeat(5000));
    expect([long.status, await long.json()]).toEqual([
      400,
      errorOf("path_too_long", `path "${"d".repeat(200)}" is 5000 characters long; the limit is 4096`),
    ]);
  });

  it("reports skipped entries and refuses bad archives with nothing left in R2", async () => {
    const res = await upload(zip({ "ok.txt": text("ok"), "../evil.txt": text("x") }), { "content-type": "application/zip" });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { skipped: unknown }).skipped).toEqual([{ path: "../evil.txt", reason: "path_escape" }]);

    const before = await keysUnder(env.STORE, "workspaces/");
    const bad = await upload(text("not an archive at all"), { "content-type": "text/plain" });
    expect(bad.status).toBe(415);
    expect(await bad.json()).toEqual(
      errorOf("archive_unsupported", 'the body is not a tar, tar.gz or zip archive (Content-Type "text/plain", unrecognised magic bytes)'),
    );
    const corrupt = await upload(text("PK\u0003\u0004 truncated zip"), { "content-type": "application/zip" });
    expect(corrupt.status).toBe(400);
    expect(((await corrupt.json()) as { error: { code: string } }).error.code).toBe("archive_invalid");
    expect(await keysUnder(env.STORE, "workspaces/")).toEqual(before);
  });

  it("refuses a declared Content-Length over the archive limit before reading", async () => {
    const res = await app().request(
      "/api/workspaces",
      { method: "POST", body: "x", headers: { "content-length": String(200 * 1024 * 1024) } },
      env,
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(errorOf("archive_too_large", "the archive is larger than 104857600 bytes"));
  });

  it("maps every archive refusal to its HTTP status with the same code and message", () => {
    const mapped = [archiveInvalid("a"), archiveUnsupported("b"), archiveTooLarge("c"), archiveTooManyFiles(7), archiveBomb("d")];
    expect(mapped.map((e) => ({ status: httpStatus(e.code), code: e.code, message: e.message }))).toEqual([
      { status: 400, code: "archive_invalid", message: "a" },
      { status: 415, code: "archive_unsupported", message: "b" },
      { status: 413, code: "archive_too_large", message: "c" },
      { status: 413, code: "archive_too_many_files", message: "archive has more than 7 entries" },
      { status: 422, code: "archive_bomb", message: "d" },
    ]);
  });
});
