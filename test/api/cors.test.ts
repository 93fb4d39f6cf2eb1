import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { CORS_ALLOW_HEADERS, parseCorsOrigins } from "../../src/api/cors";
import { API_ROUTES } from "../../src/api/route-docs";

const app = createApp();
const ORIGIN = "https://viewer.example.com";
const withCors = { ...env, CORS_ORIGINS: `${ORIGIN}, http://localhost:5173` };

/** A concrete path for a route pattern (`/api/sessions/:id/files/:path{.+}` -> `/api/sessions/s_x/files/a.txt`). */
const concrete = (path: string) =>
  path
    .replace(":id", "s_x")
    .replace(":wid", "w_x")
    .replace(":pid", "p_default")
    .replace(":caseId", "c_x")
    .replace(":messageId", "m_x")
    .replace(/:path\{[^}]*\}/, "a.txt");

describe("parseCorsOrigins", () => {
  it("unset or blank: no cross-origin access", () => {
    expect(parseCorsOrigins(undefined, false)).toBe("none");
    expect(parseCorsOrigins(" , ", true)).toBe("none");
  });

  it("a list of origins, trimmed", () => {
    expect(parseCorsOrigins(" https://a.example.com ,http://localhost:8787", true)).toEqual([
      "https://a.example.com",
      "http://localhost:8787",
    ]);
  });

  it("origins as a browser sends them: host and scheme in lower case, no default port (hunt 60)", () => {
    expect(
      parseCorsOrigins("http://App.Example.com:5173, https://x.example.com:443,HTTP://Y.example.com:80,http://z.example.com:443", true),
    ).toEqual(["http://app.example.com:5173", "https://x.example.com", "http://y.example.com", "http://z.example.com:443"]);
  });

  it("* only while auth is off, and never mixed with origins", () => {
    expect(parseCorsOrigins("*", false)).toBe("any");
    expect(() => parseCorsOrigins("*", true)).toThrow(expect.objectContaining({ code: "cors_misconfigured" }));
    expect(() => parseCorsOrigins("*,https://a.example.com", false)).toThrow(expect.objectContaining({ code: "cors_misconfigured" }));
  });

  it("anything that is not an origin fails closed", () => {
    for (const bad of [
      "a.example.com",
      "https://a.example.com/",
      "https://a.example.com/path",
      "ftp://a.example.com",
      "https://*.example.com",
      "https://a.example.com:99999",
    ])
      expect(() => parseCorsOrigins(bad, false), bad).toThrow(expect.objectContaining({ code: "cors_misconfigured" }));
  });
});

describe("CORS", () => {
  it("answers the preflight of every /api/ route, before auth, allowing Last-Event-ID and Idempotency-Key", async () => {
    const authed = { ...withCors, AUTH_TOKENS: "acme:tok-1" };
    const routes = API_ROUTES.filter((r) => r.path.startsWith("/api/"));
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) expect(concrete(route.path)).not.toContain(":");
    for (const route of routes) {
      const res = await app.fetch(
        new Request(`http://localhost${concrete(route.path)}`, {
          method: "OPTIONS",
          headers: {
            origin: ORIGIN,
            "access-control-request-method": route.method.toUpperCase(),
            "access-control-request-headers": "authorization, content-type, last-event-id, idempotency-key",
          },
        }),
        authed,
      );
      expect(res.status, `${route.method} ${route.path}`).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
      expect(res.headers.get("access-control-allow-methods")!.split(",")).toContain(route.method.toUpperCase());
      const allowed = res.headers.get("access-control-allow-headers")!.toLowerCase().split(",");
      for (const header of ["authorization", "content-type", "last-event-id", "idempotency-key"]) expect(allowed).toContain(header);
      expect(res.headers.get("access-control-max-age")).toBe("600");
      // As every answer of the Worker (hunt 58: the preflight lacked it).
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("vary")).toContain("Origin");
    }
    expect(CORS_ALLOW_HEADERS).toEqual(expect.arrayContaining(["Last-Event-ID", "Idempotency-Key"]));
  });

  it("answers and errors carry the origin and expose x-run-id, x-request-id, retry-after, location and x-log-seq", async () => {
    const ok = await app.fetch(new Request("http://localhost/api/sessions", { method: "POST", headers: { origin: ORIGIN } }), withCors);
    expect(ok.status).toBe(201);
    expect(ok.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(ok.headers.get("access-control-expose-headers")!.toLowerCase().split(",")).toEqual([
      "x-run-id",
      "x-request-id",
      "retry-after",
      "location",
      "x-log-seq",
    ]);
    // A refusal is readable by the page too, so it can show the error.
    const refused = await app.fetch(new Request("http://localhost/api/sessions/s_nope", { headers: { origin: ORIGIN } }), {
      ...withCors,
      AUTH_TOKENS: "acme:tok-1",
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe(ORIGIN);
  });

  it("an origin that is not listed gets no CORS headers; unset CORS_ORIGINS allows none", async () => {
    const other = await app.fetch(new Request("http://localhost/healthz", { headers: { origin: "https://evil.example.com" } }), withCors);
    expect(other.status).toBe(200);
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const unset = await app.fetch(new Request("http://localhost/healthz", { headers: { origin: ORIGIN } }), env);
    expect(unset.headers.get("access-control-allow-origin")).toBeNull();
    const written = { ...env, CORS_ORIGINS: "http://Viewer.Example.com:80" };
    const listed = await app.fetch(new Request("http://localhost/healthz", { headers: { origin: "http://viewer.example.com" } }), written);
    expect(listed.headers.get("access-control-allow-origin")).toBe("http://viewer.example.com");
  });

  it("a write sent by a page of another site that CORS does not allow is refused before it is done (403 origin_not_allowed)", async () => {
    const post = (origin: string | null, config = env) =>
      app.fetch(
        new Request("http://localhost/api/sessions", {
          method: "POST",
          body: "{}",
          headers: { "content-type": "text/plain", ...(origin === null ? {} : { origin }) },
        }),
        config,
      );
    const count = async () =>
      ((await (await app.fetch(new Request("http://localhost/api/sessions?limit=200"), env)).json()) as { items: unknown[] }).items.length;
    const before = await count();
    const evil = await post("https://evil.example.com");
    expect([evil.status, ((await evil.json()) as { error: { code: string; message: string } }).error]).toEqual([
      403,
      {
        code: "origin_not_allowed",
        message:
          'a POST from a page on "https://evil.example.com" is not allowed; to call the API from that origin, list it in CORS_ORIGINS',
        requestId: evil.headers.get("x-request-id"),
      },
    ]);
    // An upload (which takes any body type) is refused the same way, before a byte is stored.
    const upload = await app.fetch(
      new Request("http://localhost/api/workspaces", { method: "POST", body: "x", headers: { origin: "https://evil.example.com" } }),
      env,
    );
    expect(upload.status).toBe(403);
    // Same origin (the viewer), a listed origin, and clients that send no Origin (curl, the terminal
    // client) pass the check (and get the JSON route's 415 for text/plain).
    for (const [origin, config] of [
      ["http://localhost", env],
      [ORIGIN, withCors],
      // Listed in another case and with its default port: the browser's Origin still matches.
      ["https://viewer.example.com", { ...env, CORS_ORIGINS: "https://Viewer.Example.com:443" }],
      [null, env],
    ] as const)
      expect((await post(origin, config)).status).toBe(415);
    const created = await app.fetch(
      new Request("http://localhost/api/sessions", { method: "POST", body: "{}", headers: { "content-type": "application/json" } }),
      env,
    );
    expect([created.status, await count()]).toEqual([201, before + 1]);
    // Reads are not refused (their answers carry no CORS header, so the page cannot read them).
    expect(
      (await app.fetch(new Request("http://localhost/healthz", { headers: { origin: "https://evil.example.com" } }), env)).status,
    ).toBe(200);
  });

  it("* answers any origin while auth is off; with auth on it fails closed", async () => {
    const open = await app.fetch(new Request("http://localhost/healthz", { headers: { origin: "https://any.example.org" } }), {
      ...env,
      CORS_ORIGINS: "*",
    });
    expect(open.headers.get("access-control-allow-origin")).toBe("*");
    const closed = await app.fetch(new Request("http://localhost/api/sessions/s_x", { headers: { origin: ORIGIN } }), {
      ...env,
      CORS_ORIGINS: "*",
      AUTH_TOKENS: "acme:tok-1",
    });
    expect(closed.status).toBe(500);
    expect(((await closed.json()) as { error: { code: string } }).error.code).toBe("cors_misconfigured");
  });
});

describe("DNS rebinding: with auth off only loopback hosts are answered", () => {
  const call = (url: string, bindings: Record<string, unknown>, init: RequestInit = {}) =>
    app.fetch(new Request(url, init), { ...env, ...bindings });
  const code = async (res: Response) => ({
    status: res.status,
    code: res.status >= 400 ? ((await res.json()) as { error: { code: string } }).error.code : null,
  });

  it("a page's own name pointed at this machine gets 403 host_not_allowed, reads and writes alike", async () => {
    // The rebound page: its Origin is its own, so the origin check alone lets it through.
    const origin = { origin: "http://attacker.example:8787" };
    expect(await code(await call("http://attacker.example:8787/api/sessions", {}, { headers: origin }))).toEqual({
      status: 403,
      code: "host_not_allowed",
    });
    expect(await code(await call("http://attacker.example:8787/api/sessions", {}, { method: "POST", headers: origin }))).toEqual({
      status: 403,
      code: "host_not_allowed",
    });
    expect(await code(await call("http://dev.example.com./api/workspaces", {}))).toEqual({ status: 403, code: "host_not_allowed" });
    const res = await call("http://attacker.example/api/sessions", {});
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      'AUTH_TOKENS is unset, so the API answers only on localhost and IP addresses, not on the name "attacker.example" (a page could point a name of its own at this machine): set AUTH_TOKENS, or list the host in OPEN_HOSTS',
    );
    // Liveness is not behind auth and tells nothing.
    expect((await call("http://attacker.example/healthz", {})).status).toBe(200);
  });

  it("localhost, IP addresses and the hosts in OPEN_HOSTS are answered; with auth on any host is (the token decides)", async () => {
    // An address cannot be rebound: a page that calls one is another origin (CORS, the write check).
    for (const host of [
      "localhost",
      "localhost.",
      "127.0.0.1",
      "127.0.0.2:8787",
      "[::1]:8787",
      "app.localhost",
      "LOCALHOST",
      "0.0.0.0",
      "192.168.1.20:8787",
      "[::ffff:7f00:1]",
    ])
      expect(await code(await call(`http://${host}/api/sessions`, {})), host).toEqual({ status: 200, code: null });
    expect(await code(await call("http://dev.box:8787/api/sessions", { OPEN_HOSTS: "other.box, Dev.Box." }))).toEqual({
      status: 200,
      code: null,
    });
    expect(await code(await call("http://dev.boxes/api/sessions", { OPEN_HOSTS: "dev.box" }))).toEqual({
      status: 403,
      code: "host_not_allowed",
    });
    const authed = { AUTH_TOKENS: "acme:tok-1" };
    expect(await code(await call("http://api.example.com/api/sessions", authed, { headers: { authorization: "Bearer tok-1" } }))).toEqual({
      status: 200,
      code: null,
    });
  });
});
