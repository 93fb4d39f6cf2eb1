import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { openApiDocument } from "../../src/api/openapi";
import { MAX_SESSION_PAGE } from "../../src/domain";
import { gzip, tarOf } from "../workspace/archives";

// The conventions every route shares (hunt 34: the API as the author of an SDK meets it).

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const post = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json", ...headers },
});

async function refusal(res: Response) {
  const body = (await res.json()) as { error: { code: string; message: string } };
  return { status: res.status, code: body.error.code, message: body.error.message };
}

/** A one-file workspace upload's answer. */
const uploadWorkspace = async () =>
  api("/api/workspaces", { method: "POST", body: await tarOf({ "a.txt": "a\n" }), headers: { "content-type": "application/x-tar" } });

async function session(): Promise<string> {
  const res = await api("/api/sessions", post({ title: "conventions" }));
  expect(res.status).toBe(201);
  return ((await res.json()) as { sessionId: string }).sessionId;
}

/** A one-file workspace and a session on it. */
/** A session on a workspace holding a.txt, and GET paths answering JSON, a file or an error about them. */
async function sessionOnWorkspace(): Promise<{ workspaceId: string; sid: string; answers: string[] }> {
  const { workspaceId } = (await (await uploadWorkspace()).json()) as { workspaceId: string };
  const sid = ((await (await api("/api/sessions", post({ workspaceId }))).json()) as { sessionId: string }).sessionId;
  const answers = [
    "/api/sessions",
    `/api/sessions/${sid}`,
    `/api/sessions/${sid}/files/a.txt`,
    `/api/workspaces/${workspaceId}`,
    "/api/sessions/s_missing",
  ];
  return { workspaceId, sid, answers };
}

describe("query parameters", () => {
  it("one a route does not take is refused on every /api/ route, naming what the route takes", async () => {
    const sid = await session();
    expect(await refusal(await api(`/api/sessions/${sid}/changes?after=5`))).toEqual({
      status: 400,
      code: "invalid_query",
      message: 'unknown query parameter "after": this route takes none',
    });
    expect(await refusal(await api(`/api/sessions/${sid}/attributions?after=5`))).toEqual({
      status: 400,
      code: "invalid_query",
      message: 'unknown query parameter "after": this route takes limit, cursor',
    });
    expect(await refusal(await api(`/api/sessions/${sid}/messages?limit=1`))).toEqual({
      status: 400,
      code: "invalid_query",
      message: 'unknown query parameter "limit": this route takes after',
    });
    expect(await refusal(await api(`/api/sessions/${sid}/abort?force=1`, post({})))).toMatchObject({ status: 400, code: "invalid_query" });
    // Outside /api/ a query is passed over: a monitor's cache-buster must not fail a health check.
    expect([(await api("/healthz?t=1&t=2")).status, (await api("/openapi.json?x=%ff")).status]).toEqual([200, 200]);
    expect(await refusal(await api(`/api/sessions/${sid}/events/stream?since=3`))).toEqual({
      status: 400,
      code: "invalid_query",
      message: 'unknown query parameter "since": this route takes after, token, runId, messageId',
    });
    // HEAD is GET's route, and the parameters a route documents pass.
    expect((await api(`/api/sessions/${sid}?x=1`, { method: "HEAD" })).status).toBe(400);
    expect((await api("/api/sessions?limit=2&projectId=p_default")).status).toBe(200);
    expect((await api(`/api/sessions/${sid}/events`)).status).toBe(200);
  });

  it("one given twice is refused, whichever value comes first", async () => {
    for (const query of ["limit=1&limit=500", "limit=500&limit=1"])
      expect(await refusal(await api(`/api/sessions?${query}`))).toEqual({
        status: 400,
        code: "invalid_query",
        message: 'query parameter "limit" is given more than once',
      });
  });

  it("one that is not percent-encoded UTF-8 is refused, not stored as typed", async () => {
    const line = `${JSON.stringify({ id: "m1", sessionId: "s_x", createdAt: new Date().toISOString(), parentId: null, kind: "user", text: "hi" })}\n`;
    const importWith = (title: string) =>
      api(`/api/sessions/import?title=${title}`, { method: "POST", body: line, headers: { "content-type": "application/x-ndjson" } });
    for (const title of ["%FF", "%ED%A0%80", "50%"])
      expect(await refusal(await importWith(title))).toEqual({
        status: 400,
        code: "invalid_query",
        message: 'query parameter "title" is not valid percent-encoded UTF-8',
      });
    const res = await importWith("caf%C3%A9+au+lait");
    expect(res.status).toBe(201);
    const { sessionId } = (await res.json()) as { sessionId: string };
    expect(((await (await api(`/api/sessions/${sessionId}`)).json()) as { title: string }).title).toBe("café au lait");
  });

  it("a page size out of range says the range", async () => {
    for (const limit of ["0", "-1", "99999", "x"])
      expect(await refusal(await api(`/api/sessions?limit=${limit}`))).toMatchObject({
        status: 400,
        code: "invalid_query",
        message: expect.stringContaining(`must be a whole number from 1 to ${MAX_SESSION_PAGE}`),
      });
  });

  it("the OpenAPI document gives a page size as the integer it is, not as text", () => {
    const doc = openApiDocument() as { paths: Record<string, { get: { parameters: { name: string; schema: unknown }[] } }> };
    const limit = doc.paths["/api/sessions"]!.get.parameters.find((p) => p.name === "limit");
    expect(limit?.schema).toEqual({
      type: "integer",
      minimum: 1,
      maximum: MAX_SESSION_PAGE,
      description: `page size, 1-${MAX_SESSION_PAGE} (default 50)`,
    });
  });
});

describe("bodies and answers", () => {
  it("a body with a Content-Encoding, or JSON in another charset, is 415; UTF-8 JSON is taken", async () => {
    const gzipped = await gzip(new TextEncoder().encode(JSON.stringify({ title: "t" })));
    const encoded = await api("/api/sessions", {
      method: "POST",
      body: gzipped,
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
    });
    expect(await refusal(encoded)).toEqual({
      status: 415,
      code: "unsupported_media_type",
      message: 'request bodies are read as sent: send this one without Content-Encoding (not "gzip")',
    });
    const upload = await api("/api/workspaces", {
      method: "POST",
      body: await tarOf({ "a.txt": "a\n" }),
      headers: { "content-type": "application/x-tar", "content-encoding": "br" },
    });
    expect(await refusal(upload)).toMatchObject({ status: 415, code: "unsupported_media_type" });
    expect(await refusal(await api("/api/sessions", post({}, { "content-type": "application/json; charset=latin1" })))).toEqual({
      status: 415,
      code: "unsupported_media_type",
      message: 'JSON bodies are UTF-8, not "latin1": send charset=utf-8 or none',
    });
    expect((await api("/api/sessions", post({}, { "content-type": 'application/json; charset="UTF-8"' }))).status).toBe(201);
    expect((await api("/api/sessions", post({}, { "content-encoding": "identity" }))).status).toBe(201);
  });

  it("answers are not stored by caches: JSON, files, errors, /healthz and /openapi.json carry no-store", async () => {
    const { sid, answers } = await sessionOnWorkspace();
    // The last one is refused by the middleware before any route: still an API answer.
    for (const path of [...answers, `/api/sessions/${sid}/messages`, `/api/sessions/${sid}?x=1`])
      expect([path, (await api(path)).headers.get("cache-control")]).toEqual([path, "no-store"]);
    const refused = await createApp().request("/api/sessions", {}, { ...env, AUTH_TOKENS: "team:secret-token" });
    expect([refused.status, refused.headers.get("cache-control")]).toEqual([401, "no-store"]);
    // The Worker's other answers too: a cached health check or document would be a stale one.
    for (const path of ["/healthz", "/openapi.json", "/no-such-route"])
      expect([path, (await api(path)).headers.get("cache-control")]).toEqual([path, "no-store"]);
  });

  it("a HEAD answers the Content-Length of its GET's body: JSON, files, /healthz and /openapi.json (hunt 66)", async () => {
    const { workspaceId, answers } = await sessionOnWorkspace();
    for (const path of [...answers, `/api/workspaces/${workspaceId}/files/a.txt`, "/healthz", "/openapi.json"]) {
      const length = (await (await api(path)).arrayBuffer()).byteLength;
      const head = await api(path, { method: "HEAD" });
      expect([path, head.headers.get("content-length"), await head.text()]).toEqual([path, String(length), ""]);
    }
  });

  it("a 201 that creates a session or a workspace names it in Location", async () => {
    const upload = await uploadWorkspace();
    const { workspaceId } = (await upload.json()) as { workspaceId: string };
    expect(upload.headers.get("location")).toBe(`/api/workspaces/${workspaceId}`);
    const created = await api("/api/sessions", post({ workspaceId }));
    const { sessionId } = (await created.json()) as { sessionId: string };
    expect(created.headers.get("location")).toBe(`/api/sessions/${sessionId}`);
    const fork = await api(`/api/sessions/${sessionId}/fork`, post({}));
    expect([fork.status, fork.headers.get("location")]).toEqual([
      201,
      `/api/sessions/${((await fork.json()) as { sessionId: string }).sessionId}`,
    ]);
  });

  it("a title may be null when creating, as when renaming and forking", async () => {
    const res = await api("/api/sessions", post({ title: null }));
    expect(res.status).toBe(201);
    const { sessionId } = (await res.json()) as { sessionId: string };
    expect(((await (await api(`/api/sessions/${sessionId}`)).json()) as { title: unknown }).title).toBeNull();
  });

  it("other methods on /api/sessions/import are no route, not a malformed session id", async () => {
    for (const method of ["GET", "PATCH", "DELETE"])
      expect([method, await refusal(await api("/api/sessions/import", { method }))]).toEqual([
        method,
        { status: 404, code: "route_not_found", message: `no route for ${method} /api/sessions/import` },
      ]);
    expect((await api("/api/sessions/import", { method: "HEAD" })).status).toBe(404);
  });
});
