import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect, it } from "vitest";
import { MAX_TENANT_SESSIONS, MAX_TENANT_WORKSPACE_BYTES, MAX_TENANT_WORKSPACES } from "../../src/domain";
import { tenantObjectName } from "../../src/tenant/tenant-api";
import { userMessage } from "../helpers/records";
import { tarOf } from "../workspace/archives";

// A tenant's storage is bounded (hunt 84: 4 MiB of uploads became 144 MiB stored, and 200 sessions
// were made, with nothing refused). The bounds are large, so the tenant's index is filled here directly.

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const post = (path: string, body: unknown) =>
  api(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
const tenant = () => env.TENANTS.getByName(tenantObjectName(null));
const inTenant = (sql: string) => runInDurableObject(tenant(), (_o, state) => void state.storage.sql.exec(sql));
const upload = async () =>
  api("/api/workspaces", { method: "POST", body: await tarOf({ "a.txt": "a\n" }), headers: { "content-type": "application/x-tar" } });
const refusal = async (res: Response) => [res.status, ((await res.json()) as { error: { code: string; message: string } }).error];
const pendingRows = () =>
  runInDurableObject(tenant(), (_o, state) => state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM pending_creations`).one().n);
const storedWorkspaces = async () => (await env.STORE.list({ prefix: "workspaces/" })).objects.length;

it("past its sessions, workspaces or workspace bytes a tenant's new ones are 403 quota_exceeded, and nothing is stored", async () => {
  const first = await upload();
  expect(first.status).toBe(201);
  const { workspaceId } = (await first.json()) as { workspaceId: string };

  // The files of its workspaces at the bound: an upload is refused before it stores anything.
  await inTenant(`UPDATE workspaces SET bytes = ${MAX_TENANT_WORKSPACE_BYTES} WHERE id = '${workspaceId}'`);
  const before = await storedWorkspaces();
  expect(await refusal(await upload())).toEqual([
    403,
    {
      code: "quota_exceeded",
      message: `this tenant's workspaces hold ${MAX_TENANT_WORKSPACE_BYTES} bytes of files, as much as one tenant may (${MAX_TENANT_WORKSPACE_BYTES}); delete workspaces to make room`,
      requestId: expect.any(String),
    },
  ]);
  expect([await storedWorkspaces(), await pendingRows()]).toEqual([before, 0]);
  // As many workspaces as a tenant may keep.
  await inTenant(`UPDATE workspaces SET bytes = 2 WHERE id = '${workspaceId}'`);
  await inTenant(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${MAX_TENANT_WORKSPACES - 1})
     INSERT INTO workspaces (id, files, bytes, created_at) SELECT 'w_fake' || i, 1, 1, '2026-12-05T00:00:00.000Z' FROM n`,
  );
  expect((await refusal(await upload()))[1]).toMatchObject({
    code: "quota_exceeded",
    message: `this tenant keeps ${MAX_TENANT_WORKSPACES} workspaces, as many as one tenant may (${MAX_TENANT_WORKSPACES}); delete workspaces to make room`,
  });
  await inTenant(`DELETE FROM workspaces WHERE id = 'w_fake1'`);
  expect((await upload()).status).toBe(201);

  // As many sessions as a tenant may keep: creating, importing and forking are refused; one deleted makes room.
  const keyed = () =>
    api("/api/sessions", { method: "POST", body: "{}", headers: { "content-type": "application/json", "idempotency-key": "make-one" } });
  const created = await keyed();
  const { sessionId } = (await created.json()) as { sessionId: string };
  await inTenant(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${MAX_TENANT_SESSIONS - 1})
     INSERT INTO sessions (id, workspace_id, project_id, title, created_at) SELECT 's_fake' || i, NULL, NULL, NULL, '2026-12-05T00:00:00.000Z' FROM n`,
  );
  const full = {
    code: "quota_exceeded",
    message: `this tenant keeps ${MAX_TENANT_SESSIONS} sessions, as many as one tenant may (${MAX_TENANT_SESSIONS}); delete sessions to make room`,
  };
  expect((await refusal(await post("/api/sessions", {})))[1]).toMatchObject(full);
  const jsonl = `${JSON.stringify(userMessage("s_src", "m_1", "hello"))}\n`;
  const imported = await api("/api/sessions/import", { method: "POST", body: jsonl, headers: { "content-type": "application/x-ndjson" } });
  expect((await refusal(imported))[1]).toMatchObject(full);
  expect((await refusal(await post(`/api/sessions/${sessionId}/fork`, {})))[1]).toMatchObject(full);
  expect(await pendingRows()).toBe(0);
  // A repeat of the keyed request that made a session answers as it did: that session was counted (hunt 85).
  const repeat = await keyed();
  expect([repeat.status, ((await repeat.json()) as { sessionId: string }).sessionId]).toEqual([201, sessionId]);
  await inTenant(`DELETE FROM sessions WHERE id = 's_fake1'`);
  // Creations under way count too: requests at once cannot pass the bound together (hunt 85).
  await inTenant(`INSERT INTO pending_creations (kind, id, r2_prefix, since_ms) VALUES ('session', 's_making', NULL, ${Date.now()})`);
  expect((await refusal(await post("/api/sessions", {})))[1]).toMatchObject({ code: "quota_exceeded" });
  await inTenant(`DELETE FROM pending_creations WHERE id = 's_making'`);
  expect((await post("/api/sessions", {})).status).toBe(201);
});
