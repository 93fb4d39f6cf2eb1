import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { issueStreamToken } from "../../src/api/stream-tokens";
import { API_ERROR_CODES, type ApiErrorCode, httpStatus } from "../../src/domain";
import { DurableSessionStore } from "../../src/session/session-store";
import { gzip, tarOf, text, zip } from "../workspace/archives";

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const json = (method: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method,
  body: typeof body === "string" ? body : JSON.stringify(body),
  headers: { "content-type": "application/json", ...headers },
});

/** The answer is a JSON error body with exactly `code`, the registry's status and a message. */
async function expectCoded(res: Response, code: ApiErrorCode) {
  const body = await res.text();
  expect({ status: res.status, type: res.headers.get("content-type"), code: JSON.parse(body).error?.code }).toEqual({
    status: httpStatus(code),
    type: "application/json",
    code,
  });
  const parsed = JSON.parse(body) as { error: Record<string, unknown> };
  expect(Object.keys(parsed)).toEqual(["error"]);
  expect(Object.keys(parsed.error)).toEqual(["code", "message", "requestId"]);
  expect(typeof parsed.error.message === "string" && parsed.error.message.length > 0).toBe(true);
  // The body names the request, as the x-request-id header does.
  expect(parsed.error.requestId).toBe(res.headers.get("x-request-id"));
  expect(parsed.error.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
}

async function workspace() {
  const res = await api("/api/workspaces", {
    method: "POST",
    body: await tarOf({ "a.txt": "a\n", "dir/b.txt": "b\n" }),
    headers: { "content-type": "application/x-tar" },
  });
  return ((await res.json()) as { workspaceId: string }).workspaceId;
}

async function session(workspaceId?: string) {
  const res = await api("/api/sessions", json("POST", workspaceId ? { workspaceId } : {}));
  return ((await res.json()) as { sessionId: string }).sessionId;
}

describe("every route answers its failures with a coded JSON error, never a bare 500", () => {
  it("workspaces", async () => {
    const wid = await workspace();
    await expectCoded(await api("/api/workspaces", { method: "POST" }), "archive_invalid");
    await expectCoded(
      await api("/api/workspaces", { method: "POST", body: "hello", headers: { "content-type": "text/plain" } }),
      "archive_unsupported",
    );
    await expectCoded(
      await api("/api/workspaces", { method: "POST", body: "x", headers: { "content-length": String(200 * 1024 * 1024) } }),
      "archive_too_large",
    );
    await expectCoded(
      await api("/api/workspaces", {
        method: "POST",
        body: gzip(new Uint8Array(8 * 1024 * 1024)),
        headers: { "content-type": "application/gzip" },
      }),
      "archive_bomb",
    );
    await expectCoded(
      await api("/api/workspaces", {
        method: "POST",
        body: zip({ "a.txt": text("a") }).slice(0, 40),
        headers: { "content-type": "application/zip" },
      }),
      "archive_invalid",
    );
    await expectCoded(await api("/api/workspaces/nope"), "invalid_workspace_id");
    await expectCoded(await api("/api/workspaces/w_unknown"), "workspace_not_found");
    await expectCoded(await api("/api/workspaces/w_unknown/files/a.txt"), "workspace_not_found");
    await expectCoded(await api(`/api/workspaces/${wid}/files/missing.txt`), "not_found");
    await expectCoded(await api(`/api/workspaces/${wid}/files/dir`), "is_directory");
    await expectCoded(await api(`/api/workspaces/${wid}/files/dir%2F..%2F..%2Fx`), "path_escape");
    await expectCoded(await api(`/api/workspaces/${wid}/files/${"a/".repeat(2100)}b`), "path_too_long");
  });

  it("sessions: create, describe, logs, files, changes", async () => {
    await expectCoded(await api("/api/sessions", json("POST", "{nope")), "invalid_json");
    await expectCoded(await api("/api/sessions", json("POST", { colour: "red" })), "invalid_body");
    await expectCoded(await api("/api/sessions", json("POST", { title: "x".repeat(300 * 1024) })), "body_too_large");
    await expectCoded(await api("/api/sessions", json("POST", '{"title":"\\ud800"}')), "invalid_text");
    await expectCoded(
      await api("/api/sessions", { method: "POST", body: "title=x", headers: { "content-type": "application/x-www-form-urlencoded" } }),
      "unsupported_media_type",
    );
    await expectCoded(await api("/api/sessions", json("POST", { workspaceId: "w_unknown" })), "workspace_not_found");
    for (const path of ["", "/messages", "/events", "/changes", "/files/a.txt", "/events/stream"]) {
      await expectCoded(await api(`/api/sessions/bad-id${path}`), "invalid_session_id");
      await expectCoded(await api(`/api/sessions/s_unknown${path}`), "session_not_found");
    }
    const bare = await session();
    await expectCoded(await api(`/api/sessions/${bare}/files/a.txt`), "no_workspace");
    await expectCoded(await api(`/api/sessions/${bare}/changes`), "no_workspace");
    const sid = await session(await workspace());
    await expectCoded(await api(`/api/sessions/${sid}/files/nope.txt`), "not_found");
    await expectCoded(await api(`/api/sessions/${sid}/files/dir`), "is_directory");
    await expectCoded(await api(`/api/sessions/${sid}/files/..%2Fx`), "path_escape");
  });

  it("a log that cannot be read back is history_unreadable, not a 200 that breaks off", async () => {
    const sid = await session();
    const store = new DurableSessionStore(env);
    await store.appendMessage(sid, {
      kind: "user",
      id: "m_1",
      sessionId: sid,
      parentId: null,
      createdAt: "2026-11-30T03:00:00.000Z",
      text: "hi",
    });
    await store.stub(sid).flush();
    const segments = await env.STORE.list({ prefix: `sessions/${sid}/messages/` });
    await env.STORE.delete(segments.objects.map((o) => o.key));
    await expectCoded(await api(`/api/sessions/${sid}/messages`), "history_unreadable");
  });

  it("a stream whose replay cannot be read is a 500 history_unreadable, not an empty 200 an EventSource reconnects to for ever (hunt 33)", async () => {
    const sid = await session();
    const store = new DurableSessionStore(env);
    const at = "2026-11-30T03:00:00.000Z";
    await store.appendEvent(sid, { type: "agent_started", eventId: "e_1", sessionId: sid, createdAt: at, runId: "r_1" });
    await store.appendEvent(sid, {
      type: "agent_completed",
      eventId: "e_2",
      sessionId: sid,
      createdAt: at,
      runId: "r_1",
      stopReason: "STOP",
    });
    await store.stub(sid).flush();
    const segments = await env.STORE.list({ prefix: `sessions/${sid}/events/` });
    expect(segments.objects.length).toBeGreaterThan(0);
    await env.STORE.delete(segments.objects.map((o) => o.key));
    await expectCoded(await api(`/api/sessions/${sid}/events/stream?after=0`), "history_unreadable");
  });

  it("runs: prompt, resume, abort", async () => {
    const sid = await session();
    await expectCoded(await api("/api/sessions/s_unknown/messages/stream", json("POST", { text: "hi" })), "session_not_found");
    await expectCoded(await api(`/api/sessions/${sid}/messages/stream`, json("POST", { text: " " })), "invalid_body");
    await expectCoded(await api(`/api/sessions/${sid}/messages/stream`, json("POST", '{"text":"a\\udc00b"}')), "invalid_text");
    await expectCoded(
      await api(`/api/sessions/${sid}/messages/stream`, {
        method: "POST",
        body: '{"text":"hi"}',
        headers: { "content-type": "text/plain" },
      }),
      "unsupported_media_type",
    );
    await expectCoded(await api(`/api/sessions/${sid}/events/stream`, { headers: { "last-event-id": "x" } }), "invalid_last_event_id");
    await expectCoded(await api(`/api/sessions/${sid}/events/stream?after=0&since=3`), "invalid_query");
    await expectCoded(await api(`/api/sessions/${sid}/events/stream?runId=nope`), "invalid_query");
    await expectCoded(await api(`/api/sessions/${sid}/events/stream?runId=r_01jd8x9a1b2c3d4e5f6g7h8j9k`), "run_not_found");
    await expectCoded(
      await api(`/api/sessions/${sid}/abort`, {
        method: "POST",
        body: "a=b",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      }),
      "unsupported_media_type",
    );
    await expectCoded(await api("/api/sessions/s_unknown/abort", { method: "POST" }), "session_not_found");
  });

  it("routing and auth", async () => {
    await expectCoded(await api("/api/nothing"), "route_not_found");
    await expectCoded(await api("/api/sessions", { method: "DELETE" }), "route_not_found");
    const authed = { ...env, AUTH_TOKENS: "acme:tok-1" };
    const unauthorized = await createApp().fetch(new Request("http://localhost/api/sessions", { method: "POST" }), authed);
    expect(unauthorized.headers.get("www-authenticate")).toBe('Bearer realm="pi-harness"');
    await expectCoded(unauthorized, "unauthorized");
    await expectCoded(
      await createApp().fetch(new Request("http://localhost/api/sessions", { method: "POST" }), { ...env, AUTH_TOKENS: "nocolon" }),
      "auth_misconfigured",
    );
  });

  it("listing, import, CORS and stream tokens", async () => {
    await expectCoded(await api("/api/sessions?limit=0"), "invalid_query");
    await expectCoded(await api("/api/sessions?cursor=x"), "invalid_cursor");
    await expectCoded(
      await api("/api/sessions/import", { method: "POST", body: "{}\n", headers: { "content-type": "application/x-ndjson" } }),
      "import_invalid",
    );
    await expectCoded(
      await createApp().fetch(new Request("http://localhost/healthz"), { ...env, CORS_ORIGINS: "nope" }),
      "cors_misconfigured",
    );
    const sid = await session();
    await expectCoded(await api(`/api/sessions/${sid}/stream-token`, { method: "POST" }), "stream_token_unconfigured");
    const authed = { ...env, AUTH_TOKENS: "acme:tok-1", STREAM_TOKEN_SECRET: "s".repeat(32) };
    const withToken = (token: string) =>
      createApp().fetch(new Request(`http://localhost/api/sessions/${sid}/events/stream?token=${token}`), authed);
    await expectCoded(await withToken("v1.x.y"), "stream_token_invalid");
    await expectCoded(
      await withToken(await issueStreamToken("s".repeat(32), { tenant: "acme", sessionId: sid, expiresAt: 1, bearer: null })),
      "stream_token_expired",
    );
  });

  it("every API code in the registry has a status and a meaning", () => {
    for (const code of API_ERROR_CODES) expect([code, httpStatus(code)]).toEqual([code, expect.any(Number)]);
  });
});
