import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ABANDONED_CREATION_MS } from "../../src/domain";
import { tenantObjectName } from "../../src/tenant/tenant-api";
import { ingestWorkspace } from "../../src/workspace/ingest";
import { workspaceKeys } from "../../src/workspace/snapshot-layout";
import { userMessage } from "../helpers/records";
import { streamOf, tarOf } from "../workspace/archives";

/** What a request that died between storing a session or workspace and listing it leaves, and who removes it. */

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const post = (path: string, body: unknown) =>
  api(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
const tenant = () => env.TENANTS.getByName(tenantObjectName(null));
const pendingRows = () =>
  runInDurableObject(tenant(), async (_o, state) =>
    state.storage.sql
      .exec<{ kind: string; id: string }>(`SELECT kind, id FROM pending_creations ORDER BY kind, id`)
      .toArray()
      .map((r) => `${r.kind}:${r.id}`),
  );
const stored = async (prefix: string) => (await env.STORE.list({ prefix })).objects.map((o) => o.key);
const longAgo = () => Date.now() - ABANDONED_CREATION_MS - 1000;

describe("creations that were never listed", () => {
  it("leaves no pending row once a session, an import, a fork or a workspace is listed", async () => {
    const tar = await tarOf({ "a.txt": "a\n" });
    const uploaded = await api("/api/workspaces", { method: "POST", body: tar, headers: { "content-type": "application/x-tar" } });
    expect(uploaded.status).toBe(201);
    const created = await post("/api/sessions", { title: "listed" });
    expect(created.status).toBe(201);
    const { sessionId } = (await created.json()) as { sessionId: string };
    const jsonl = `${JSON.stringify(userMessage("s_src", "m_1", "hello"))}\n`;
    const imported = await api("/api/sessions/import", {
      method: "POST",
      body: jsonl,
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(imported.status).toBe(201);
    expect((await post(`/api/sessions/${sessionId}/fork`, {})).status).toBe(201);
    expect(await pendingRows()).toEqual([]);
  });

  it("removes an unlisted session object and an unlisted workspace's objects once abandoned, and nothing listed", async () => {
    const sessionId = "s_abandoned_import";
    await tenant().expectCreation({ kind: "session", id: sessionId, r2Prefix: null }, longAgo());
    const object = env.SESSIONS.getByName(sessionId);
    const meta = { id: sessionId, workspaceId: null, projectId: null, title: null, owner: null, createdAt: new Date().toISOString() };
    expect((await object.create(meta)).ok).toBe(true);
    expect((await object.fillMessages([userMessage(sessionId, "m_1", "hello")])).ok).toBe(true);

    const workspaceId = "w_abandoned_upload";
    const prefix = workspaceKeys(workspaceId).prefix;
    await tenant().expectCreation({ kind: "workspace", id: workspaceId, r2Prefix: prefix }, longAgo());
    await ingestWorkspace(env.STORE, streamOf(await tarOf({ "b.txt": "b\n" })), { workspaceId, owner: null });
    expect((await stored(prefix)).length).toBeGreaterThan(0);

    // A workspace announced just now (a request still running) is left alone.
    const fresh = "w_still_uploading";
    await tenant().expectCreation({ kind: "workspace", id: fresh, r2Prefix: workspaceKeys(fresh).prefix }, Date.now());
    await ingestWorkspace(env.STORE, streamOf(await tarOf({ "c.txt": "c\n" })), { workspaceId: fresh, owner: null });

    expect(await runDurableObjectAlarm(tenant())).toBe(true);
    expect(await object.describe()).toBeNull();
    expect(await stored(`sessions/${sessionId}/`)).toEqual([]);
    expect(await stored(prefix)).toEqual([]);
    expect((await stored(workspaceKeys(fresh).prefix)).length).toBeGreaterThan(0);
    expect(await pendingRows()).toEqual([`workspace:${fresh}`]);
    // The alarm comes back when the one left is due.
    const alarm = await runInDurableObject(tenant(), (_o, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThan(Date.now() + ABANDONED_CREATION_MS - 60_000);
    await api(`/api/workspaces/${fresh}`, { method: "DELETE" });
  });
});
