import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { DurableSessionStore } from "../../src/session/session-store";
import { tarOf } from "../workspace/archives";

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const post = (path: string, body: unknown) =>
  api(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
const del = (path: string) => api(path, { method: "DELETE" });

async function upload(): Promise<string> {
  const tar = await tarOf({ "README.md": "# Demo\n", "src/a.ts": "export const a = 1;\n" });
  const res = await api("/api/workspaces", { method: "POST", body: tar, headers: { "content-type": "application/x-tar" } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { workspaceId: string }).workspaceId;
}

async function session(workspaceId: string): Promise<string> {
  const res = await post("/api/sessions", { workspaceId });
  expect(res.status).toBe(201);
  return ((await res.json()) as { sessionId: string }).sessionId;
}

async function stored(workspaceId: string): Promise<string[]> {
  return (await env.STORE.list({ prefix: `workspaces/${workspaceId}/` })).objects.map((o) => o.key);
}

async function error(res: Response) {
  return { status: res.status, ...((await res.json()) as { error: { code: string; message: string } }).error };
}

describe("DELETE /api/workspaces/:wid", () => {
  it("removes every object of the snapshot; afterwards it is 404 and no session opens on it", async () => {
    const wid = await upload();
    // meta, index, one pack chunk, the search directory and its shard.
    expect((await stored(wid)).length).toBe(5);
    const res = await del(`/api/workspaces/${wid}`);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect(await stored(wid)).toEqual([]);
    expect(await error(await api(`/api/workspaces/${wid}`))).toMatchObject({ status: 404, code: "workspace_not_found" });
    expect(await error(await api(`/api/workspaces/${wid}/files/README.md`))).toMatchObject({ status: 404, code: "workspace_not_found" });
    expect(await error(await post("/api/sessions", { workspaceId: wid }))).toMatchObject({ status: 404, code: "workspace_not_found" });
    // Once ended, a repeat is 404.
    expect(await error(await del(`/api/workspaces/${wid}`))).toMatchObject({ status: 404, code: "workspace_not_found" });
  });

  it("is refused with 409 workspace_in_use while sessions use it, naming them; deleting them lets it go", async () => {
    const wid = await upload();
    const first = await session(wid);
    const second = await session(wid);
    const refused = await error(await del(`/api/workspaces/${wid}`));
    expect(refused).toMatchObject({
      status: 409,
      code: "workspace_in_use",
      message: `workspace ${wid} is used by 2 session(s) (${first}, ${second}); delete them first`,
    });
    // Nothing was removed, and the sessions still read it.
    expect((await stored(wid)).length).toBe(5);
    expect((await api(`/api/sessions/${first}/files/README.md`)).status).toBe(200);
    expect((await del(`/api/sessions/${first}`)).status).toBe(204);
    expect(await error(await del(`/api/workspaces/${wid}`))).toMatchObject({
      status: 409,
      message: expect.stringContaining(`1 session(s) (${second})`),
    });
    expect((await del(`/api/sessions/${second}`)).status).toBe(204);
    expect((await del(`/api/workspaces/${wid}`)).status).toBe(204);
    expect(await stored(wid)).toEqual([]);
  });

  it("names five sessions and counts the rest", async () => {
    const wid = await upload();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await session(wid));
    expect((await error(await del(`/api/workspaces/${wid}`))).message).toBe(
      `workspace ${wid} is used by 7 session(s) (${ids.slice(0, 5).join(", ")}, and 2 more); delete them first`,
    );
  });

  it("a session opened while the deletion runs is refused, listed nowhere, and its object removed", async () => {
    const wid = await upload();
    const store = new DurableSessionStore(env, { next: () => "s_wsdel_race" });
    // The deletion has begun (marked in the tenant's index) but the snapshot's objects are still
    // there, so the session's own check of the workspace passes.
    expect(await store.tenantIndex(null).beginWorkspaceDeletion(wid, Date.now())).toEqual({ ok: true });
    await expect(store.create({ workspaceId: wid })).rejects.toThrow(`workspace ${wid} was deleted`);
    expect(await store.findOwned("s_wsdel_race", null)).toBe(null);
    expect(await store.find("s_wsdel_race")).toBe(null);
    // DELETE finishes the deletion that began.
    expect((await del(`/api/workspaces/${wid}`)).status).toBe(204);
    expect(await stored(wid)).toEqual([]);
  });

  it("finishes a deletion that failed half-way when sent again", async () => {
    const wid = await upload();
    const realDelete = env.STORE.delete.bind(env.STORE);
    let calls = 0;
    const spy = vi.spyOn(env.STORE, "delete").mockImplementation(async (keys) => {
      // The first batch (meta and index) goes; R2 fails on the next.
      if (++calls > 1) throw new Error("R2 unavailable (injected)");
      return realDelete(keys);
    });
    try {
      const failed = await del(`/api/workspaces/${wid}`);
      expect(failed.status).toBe(500);
    } finally {
      spy.mockRestore();
    }
    // Half gone: no longer readable, objects left, still listed (to be deleted again).
    expect(await error(await api(`/api/workspaces/${wid}`))).toMatchObject({ status: 404, code: "workspace_not_found" });
    expect((await stored(wid)).length).toBeGreaterThan(0);
    const listed = async () => ((await (await api("/api/workspaces?limit=200")).json()) as { items: { workspaceId: string }[] }).items;
    expect((await listed()).some((w) => w.workspaceId === wid)).toBe(true);
    expect((await del(`/api/workspaces/${wid}`)).status).toBe(204);
    expect(await stored(wid)).toEqual([]);
    expect((await listed()).some((w) => w.workspaceId === wid)).toBe(false);
    expect((await del(`/api/workspaces/${wid}`)).status).toBe(404);
  });

  it("another tenant's workspace is 404 and stays", async () => {
    const { createApp } = await import("../../src/api/app");
    const app = createApp();
    const authed = { ...env, AUTH_TOKENS: "acme:tok-a,globex:tok-g" };
    const call = (path: string, token: string, init: RequestInit = {}) =>
      app.fetch(
        new Request(`http://localhost${path}`, { ...init, headers: { ...init.headers, authorization: `Bearer ${token}` } }),
        authed,
      );
    const tar = await tarOf({ "a.txt": "a\n" });
    const res = await call("/api/workspaces", "tok-a", { method: "POST", body: tar, headers: { "content-type": "application/x-tar" } });
    const { workspaceId } = (await res.json()) as { workspaceId: string };
    expect(await error(await call(`/api/workspaces/${workspaceId}`, "tok-g", { method: "DELETE" }))).toMatchObject({
      status: 404,
      code: "workspace_not_found",
    });
    expect((await stored(workspaceId)).length).toBe(5);
    expect((await call(`/api/workspaces/${workspaceId}`, "tok-a", { method: "DELETE" })).status).toBe(204);
    expect(await stored(workspaceId)).toEqual([]);
  });
});

describe("GET /api/workspaces", () => {
  const list = async (init: string, call: (path: string) => Response | Promise<Response> = api) => {
    const res = await call(`/api/workspaces${init}`);
    return { status: res.status, body: (await res.json()) as { items: { workspaceId: string }[]; nextCursor: string | null } };
  };

  it("lists the caller's snapshots newest first, a page at a time, without deleted ones", async () => {
    const { createApp } = await import("../../src/api/app");
    const app = createApp();
    const authed = { ...env, AUTH_TOKENS: "initech:tok-i,umbrella:tok-u" };
    const as =
      (token: string) =>
      (path: string, init: RequestInit = {}) =>
        app.fetch(
          new Request(`http://localhost${path}`, { ...init, headers: { ...init.headers, authorization: `Bearer ${token}` } }),
          authed,
        );
    const initech = as("tok-i");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const tar = await tarOf({ [`f${i}.txt`]: `${"x".repeat(i)}\n` });
      const res = await initech("/api/workspaces", { method: "POST", body: tar, headers: { "content-type": "application/x-tar" } });
      ids.push(((await res.json()) as { workspaceId: string }).workspaceId);
    }
    // Another tenant's upload is not in the list.
    await as("tok-u")("/api/workspaces", {
      method: "POST",
      body: await tarOf({ "a.txt": "a\n" }),
      headers: { "content-type": "application/x-tar" },
    });
    const first = await list("?limit=2", initech);
    expect(first.status).toBe(200);
    expect(first.body.items.map((w) => w.workspaceId)).toEqual([ids[4], ids[3]]);
    expect(first.body.items[0]).toEqual({ workspaceId: ids[4], files: 1, bytes: 5, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    const second = await list(`?limit=2&cursor=${first.body.nextCursor}`, initech);
    expect(second.body.items.map((w) => w.workspaceId)).toEqual([ids[2], ids[1]]);
    expect((await initech(`/api/workspaces/${ids[1]}`, { method: "DELETE" })).status).toBe(204);
    const all = await list("?limit=200", initech);
    expect(all.body).toEqual({
      items: [ids[4], ids[3], ids[2], ids[0]].map((id) => expect.objectContaining({ workspaceId: id })),
      nextCursor: null,
    });
  });

  it("a keyed upload sent twice is listed once", async () => {
    const before = (await list("?limit=200")).body.items.length;
    const tar = await tarOf({ "k.txt": "k\n" });
    const send = () =>
      api("/api/workspaces", {
        method: "POST",
        body: tar,
        headers: { "content-type": "application/x-tar", "idempotency-key": "ws-list-key-1" },
      });
    const a = (await (await send()).json()) as { workspaceId: string };
    const b = (await (await send()).json()) as { workspaceId: string };
    expect(b.workspaceId).toBe(a.workspaceId);
    const after = (await list("?limit=200")).body.items;
    expect(after.length).toBe(before + 1);
    expect(after[0]!.workspaceId).toBe(a.workspaceId);
  });

  it("refuses a bad limit or a cursor it did not hand out", async () => {
    expect(await error(await api("/api/workspaces?limit=0"))).toMatchObject({ status: 400, code: "invalid_query" });
    expect(await error(await api("/api/workspaces?limit=201"))).toMatchObject({ status: 400, code: "invalid_query" });
    expect(await error(await api("/api/workspaces?cursor=nope"))).toMatchObject({ status: 400, code: "invalid_cursor" });
    expect(await error(await api("/api/workspaces?other=1"))).toMatchObject({ status: 400, code: "invalid_query" });
  });
});
