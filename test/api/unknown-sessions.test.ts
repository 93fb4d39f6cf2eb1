import { listDurableObjectIds } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect, it } from "vitest";

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));

it("looking up sessions that do not exist creates no Durable Object storage", async () => {
  const before = (await listDurableObjectIds(env.SESSIONS)).length;
  const created = (await (await api("/api/sessions", { method: "POST" })).json()) as { sessionId: string };
  expect((await listDurableObjectIds(env.SESSIONS)).length).toBe(before + 1);
  const paths = ["", "/messages", "/events", "/changes", "/files/a.txt", "/events/stream"];
  for (let i = 0; i < 30; i++) {
    const id = `s_unknown${i}`;
    const res = await api(`/api/sessions/${id}${paths[i % paths.length]}`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("session_not_found");
  }
  for (const path of ["/messages/stream", "/abort"]) {
    const res = await api(`/api/sessions/s_unknownpost${path}`, {
      method: "POST",
      body: JSON.stringify({ text: "hi" }),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(404);
  }
  const ids = (await listDurableObjectIds(env.SESSIONS)).map((id) => id.toString());
  expect(ids.length).toBe(before + 1);
  expect(ids).toContain(env.SESSIONS.idFromName(created.sessionId).toString());
});

it("a session created through the store is listed in its tenant's index and reachable over HTTP", async () => {
  const before = (await listDurableObjectIds(env.TENANTS)).length;
  const res = await api("/api/sessions", { method: "POST" });
  const { sessionId } = (await res.json()) as { sessionId: string };
  expect(await env.TENANTS.getByName(":open").findSession(sessionId)).toMatchObject({ id: sessionId, workspaceId: null });
  expect((await api(`/api/sessions/${sessionId}`)).status).toBe(200);
  // One index for the open API, however many sessions and lookups.
  expect((await listDurableObjectIds(env.TENANTS)).length).toBe(Math.max(before, 1));
});
