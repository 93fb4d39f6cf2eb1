import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { client, post } from "../awtl/harness";
import { tarOf } from "../workspace/archives";

const api = client();

async function upload(body: Uint8Array, key?: string) {
  const res = await api("/api/workspaces", {
    method: "POST",
    body,
    headers: { "content-type": "application/x-tar", ...(key ? { "idempotency-key": key } : {}) },
  });
  return {
    status: res.status,
    body: (await res.json()) as { workspaceId?: string; files?: number; skipped?: unknown[]; error?: { code: string } },
  };
}

/** Workspaces stored in R2 (one meta.json each). */
async function workspaces(): Promise<string[]> {
  const listed = await env.STORE.list({ prefix: "workspaces/" });
  return listed.objects.filter((o) => o.key.endsWith("/meta.json")).map((o) => o.key.split("/")[1]!);
}

describe("Idempotency-Key on workspace uploads", () => {
  it("a repeat with the same bytes gets the first answer and stores nothing more; other bytes under the key are 422", async () => {
    const tar = await tarOf({ "a.txt": "alpha\n", "b/c.txt": "gamma\n" });
    const before = await workspaces();
    const first = await upload(tar, "upload-1");
    expect(first.status).toBe(201);
    const again = await upload(tar, "upload-1");
    expect(again).toEqual(first);
    expect((await workspaces()).filter((w) => !before.includes(w))).toEqual([first.body.workspaceId]);

    const other = await upload(await tarOf({ "a.txt": "changed\n" }), "upload-1");
    expect([other.status, other.body.error?.code]).toEqual([422, "idempotency_key_reused"]);
    expect((await workspaces()).filter((w) => !before.includes(w))).toEqual([first.body.workspaceId]);
    // Without a key every upload is its own workspace.
    const unkeyed = await upload(tar);
    expect(unkeyed.status).toBe(201);
    expect(unkeyed.body.workspaceId).not.toBe(first.body.workspaceId);
  });

  it("a repeat after the workspace was deleted is 404 and says it was deleted and what to do (hunt 71)", async () => {
    const tar = await tarOf({ "a.txt": "alpha\n" });
    const first = await upload(tar, "upload-deleted");
    expect(first.status).toBe(201);
    const id = first.body.workspaceId!;
    expect((await api(`/api/workspaces/${id}`, { method: "DELETE" })).status).toBe(204);
    const again = await upload(tar, "upload-deleted");
    expect(again).toEqual({
      status: 404,
      body: {
        error: {
          code: "workspace_not_found",
          message: `workspace '${id}', which the first upload with this Idempotency-Key made, was deleted; repeating the upload does not bring it back (send it with a new Idempotency-Key)`,
          requestId: (again.body as unknown as { error: { requestId: string } }).error.requestId,
        },
      },
    });
    expect(await workspaces()).not.toContain(id);
  });

  it("two identical uploads at once under one key leave one workspace, and both get its answer", async () => {
    const tar = await tarOf({ "x.txt": "x\n".repeat(1000) });
    const before = await workspaces();
    const [a, b] = await Promise.all([upload(tar, "upload-race"), upload(tar, "upload-race")]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body).toEqual(a.body);
    expect((await workspaces()).filter((w) => !before.includes(w))).toEqual([a.body.workspaceId]);
  });

  it("a refused upload does not use up its key; a key used for another route is 422; a malformed key is 400", async () => {
    const refused = await api("/api/workspaces", {
      method: "POST",
      body: "not an archive",
      headers: { "content-type": "application/x-tar", "idempotency-key": "upload-2" },
    });
    expect(refused.status).toBe(400);
    const tar = await tarOf({ "ok.txt": "ok\n" });
    expect((await upload(tar, "upload-2")).status).toBe(201);

    const created = await api("/api/sessions", {
      ...post({}),
      headers: { "content-type": "application/json", "idempotency-key": "shared-key" },
    });
    expect(created.status).toBe(201);
    const clash = await upload(tar, "shared-key");
    expect([clash.status, clash.body.error?.code]).toEqual([422, "idempotency_key_reused"]);
    const bad = await upload(tar, "has space");
    expect([bad.status, bad.body.error?.code]).toEqual([400, "invalid_idempotency_key"]);
  });
});
