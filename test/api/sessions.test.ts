import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { MAX_JSON_BODY_BYTES } from "../../src/domain";
import { encodeJsonl } from "../../src/session/jsonl";
import { DurableSessionStore } from "../../src/session/session-store";
import { deltaEvent, userMessage } from "../helpers/records";
import { tarOf } from "../workspace/archives";

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  api(path, {
    method: "POST",
    body: typeof body === "string" ? body : JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });

async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { error: { code: string; message: string; requestId: string } };
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error)).toEqual(["code", "message", "requestId"]);
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(body.error.requestId).toBe(res.headers.get("x-request-id"));
  return body.error.message;
}

describe("POST /api/sessions", () => {
  it("creates a session: 201 with exactly the documented fields", async () => {
    const upload = await api("/api/workspaces", {
      method: "POST",
      body: await tarOf({ "a.txt": "a" }),
      headers: { "content-type": "application/x-tar" },
    });
    const { workspaceId } = (await upload.json()) as { workspaceId: string };
    const res = await post("/api/sessions", { workspaceId, projectId: "p_1", title: "demo" });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, string>;
    expect(Object.keys(body)).toEqual(["sessionId", "workspaceId", "projectId", "createdAt"]);
    expect(body.sessionId).toMatch(/^s_[0-9a-z]{26}$/);
    expect(body).toMatchObject({ workspaceId, projectId: "p_1" });
    expect(new Date(body.createdAt!).toISOString()).toBe(body.createdAt);
  });

  it("accepts an empty body (all fields optional)", async () => {
    const res = await api("/api/sessions", { method: "POST" });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ workspaceId: null, projectId: null });
  });

  it("400 on malformed JSON, wrong types and unknown fields", async () => {
    await expectError(await post("/api/sessions", "{nope"), 400, "invalid_json");
    expect(await expectError(await post("/api/sessions", { title: 5 }), 400, "invalid_body")).toMatch(/^invalid request body: title: /);
    expect(await expectError(await post("/api/sessions", { colour: "red" }), 400, "invalid_body")).toBe(
      'invalid request body: Unrecognized key: "colour"',
    );
    expect(await expectError(await post("/api/sessions", { workspaceId: "../x" }), 400, "invalid_body")).toMatch(
      /^invalid request body: workspaceId: /,
    );
    await expectError(await post("/api/sessions", [1]), 400, "invalid_body");
  });

  it("413 on an oversized body", async () => {
    await expectError(await post("/api/sessions", { title: "x".repeat(MAX_JSON_BODY_BYTES) }), 413, "body_too_large");
  });
});

describe("GET /api/sessions/:id and its logs", () => {
  it("describes a session with status and counts", async () => {
    const { sessionId } = (await (await post("/api/sessions", { title: "t" })).json()) as { sessionId: string };
    const store = new DurableSessionStore(env);
    await store.appendMessage(sessionId, userMessage(sessionId, "m_1"));
    await store.appendEvent(sessionId, deltaEvent(sessionId, "e_1", "a"));
    await store.appendEvent(sessionId, deltaEvent(sessionId, "e_2", "b"));
    const res = await api(`/api/sessions/${sessionId}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual([
      "id",
      "workspaceId",
      "projectId",
      "title",
      "createdAt",
      "updatedAt",
      "status",
      "counts",
      "queue",
      "forkedFrom",
      "usage",
      "contextTokens",
      "contextWindow",
    ]);
    expect(body).toMatchObject({
      id: sessionId,
      workspaceId: null,
      projectId: null,
      title: "t",
      status: "idle",
      counts: { messages: 1, events: 2 },
      usage: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0, totalTokens: 0, cost: null },
      // MODEL (test-model) is not in the known-model table: the conservative default window.
      contextWindow: 32_000,
    });
    expect(body.contextTokens).toBeGreaterThan(0);
  });

  it("exports messages and events as x-ndjson", async () => {
    const { sessionId } = (await (await post("/api/sessions", {})).json()) as { sessionId: string };
    const store = new DurableSessionStore(env);
    const m = [userMessage(sessionId, "m_1"), userMessage(sessionId, "m_2", "again", "m_1")];
    const e = [deltaEvent(sessionId, "e_1", "a")];
    for (const x of m) await store.appendMessage(sessionId, x);
    for (const x of e) await store.appendEvent(sessionId, x);
    await store.stub(sessionId).flush();
    await store.appendMessage(sessionId, userMessage(sessionId, "m_3"));

    const messages = await api(`/api/sessions/${sessionId}/messages`);
    expect(messages.status).toBe(200);
    expect(messages.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    expect(await messages.text()).toBe(encodeJsonl([...m, userMessage(sessionId, "m_3")]));
    // Events go out with their seq first (m_1 and m_2 took seqs 1 and 2).
    expect(await (await api(`/api/sessions/${sessionId}/events`)).text()).toBe(`{"seq":3,${encodeJsonl(e).slice(1)}`);
  });

  it("400 for a malformed id, 404 for an unknown one", async () => {
    await expectError(await api("/api/sessions/nope"), 400, "invalid_session_id");
    await expectError(await api("/api/sessions/s_a%2F..%2Fb"), 400, "invalid_session_id");
    // Only too long: the message names the bound (it said "not of the form s_<letters, ...>", hunt 71).
    const long = `s_${"a".repeat(65)}`;
    expect(await expectError(await api(`/api/sessions/${long}`), 400, "invalid_session_id")).toBe(
      `session id "${long}" is not 's_' followed by 1-64 characters of [A-Za-z0-9_-]`,
    );
    await expectError(await api("/api/sessions/s_missing"), 404, "session_not_found");
    await expectError(await api("/api/sessions/s_missing/messages"), 404, "session_not_found");
    await expectError(await api("/api/sessions/s_missing/events"), 404, "session_not_found");
  });

  it("unknown routes are JSON 404s", async () => {
    await expectError(await api("/api/nothing"), 404, "route_not_found");
  });
});

describe("auth with AUTH_TOKENS", () => {
  const app = createApp();
  const authed = { ...env, AUTH_TOKENS: "acme:tok-acme-123, globex:tok-globex-456" };
  const call = (path: string, token: string | null, init: RequestInit = {}) =>
    app.fetch(
      new Request(`http://localhost${path}`, {
        ...init,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers as object) },
      }),
      authed,
    );

  it("every /api route needs a valid bearer token", async () => {
    await expectError(await call("/api/sessions", null, { method: "POST" }), 401, "unauthorized");
    await expectError(await call("/api/sessions", "wrong", { method: "POST" }), 401, "unauthorized");
    await expectError(await call("/api/sessions/s_x", null), 401, "unauthorized");
    await expectError(await call("/api/sessions/s_x/messages", "tok-acme-12"), 401, "unauthorized");
    await expectError(await call("/api/nothing", null), 401, "unauthorized");
  });

  it("a session belongs to its token's tenant; another tenant gets 404", async () => {
    const created = await call("/api/sessions", "tok-acme-123", { method: "POST" });
    expect(created.status).toBe(201);
    const { sessionId } = (await created.json()) as { sessionId: string };
    expect((await call(`/api/sessions/${sessionId}`, "tok-acme-123")).status).toBe(200);
    expect((await new DurableSessionStore(env).find(sessionId))!.owner).toBe("acme");
    await expectError(await call(`/api/sessions/${sessionId}`, "tok-globex-456"), 404, "session_not_found");
    await expectError(await call(`/api/sessions/${sessionId}/messages`, "tok-globex-456"), 404, "session_not_found");
    // Without auth configured, a tenant-owned session is not visible either (owner null != "acme").
    await expectError(await app.fetch(new Request(`http://localhost/api/sessions/${sessionId}`), env), 404, "session_not_found");
  });

  it("a session cannot be opened on another tenant's workspace", async () => {
    const upload = await call("/api/workspaces", "tok-acme-123", {
      method: "POST",
      body: await tarOf({ "a.txt": "a" }),
      headers: { "content-type": "application/x-tar" },
    });
    expect(upload.status).toBe(201);
    const { workspaceId } = (await upload.json()) as { workspaceId: string };
    const body = JSON.stringify({ workspaceId });
    const headers = { "content-type": "application/json" };
    expect((await call("/api/sessions", "tok-acme-123", { method: "POST", body, headers })).status).toBe(201);
    await expectError(await call("/api/sessions", "tok-globex-456", { method: "POST", body, headers }), 404, "workspace_not_found");
    await expectError(await call(`/api/workspaces/${workspaceId}`, "tok-globex-456"), 404, "workspace_not_found");
  });

  it("a malformed AUTH_TOKENS fails closed", async () => {
    const res = await app.fetch(new Request("http://localhost/api/sessions", { method: "POST" }), { ...env, AUTH_TOKENS: "justatoken" });
    await expectError(res, 500, "auth_misconfigured");
  });

  it("fails closed on one token given to two tenants, and on a token with whitespace; names entries by position only", async () => {
    const attempt = async (config: string) => {
      const res = await app.fetch(
        new Request("http://localhost/api/sessions", { headers: { authorization: "Bearer shared-token-0123" } }),
        { ...env, AUTH_TOKENS: config },
      );
      const body = (await res.json()) as { error: { code: string; message: string } };
      return [res.status, body.error?.code ?? null, body.error?.message ?? null];
    };
    expect(await attempt("teamA:shared-token-0123,teamB:shared-token-0123")).toEqual([
      500,
      "auth_misconfigured",
      "AUTH_TOKENS gives entries 1 and 2 the same token under two names: each tenant needs its own",
    ]);
    expect(await attempt("teamA:shared-token-0123,teamS:tok with space")).toEqual([
      500,
      "auth_misconfigured",
      "AUTH_TOKENS: the token of entry 2 holds whitespace, which 'Authorization: Bearer' cannot carry",
    ]);
    // Pairs written the wrong way round: the "names" are tokens, and the answer (to anyone) shows neither.
    const swapped = await attempt("tokOLD-9f8e7d:alice,tokNEW-1a2b3c:alice");
    expect(swapped).toEqual([
      500,
      "auth_misconfigured",
      "AUTH_TOKENS gives entries 1 and 2 the same token under two names: each tenant needs its own",
    ]);
    // Two tokens of one tenant (a rotation) stay allowed, even the same one twice.
    expect((await attempt("teamA:shared-token-0123,teamA:next-token-4567,teamA:shared-token-0123"))[0]).toBe(200);
  });
});
