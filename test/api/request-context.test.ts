import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/api/app";
import { logLine } from "../../src/api/request-context";

const app = createApp();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Bindings whose storage throws on any use, to show a route never touches it. */
function untouchable(): Record<string, unknown> {
  const trap = (name: string) =>
    new Proxy(
      {},
      {
        get: (_t, p) => {
          throw new Error(`${name}.${String(p)} was touched`);
        },
      },
    );
  return { ...env, SESSIONS: trap("SESSIONS"), TENANTS: trap("TENANTS"), STORE: trap("STORE") };
}

afterEach(() => vi.restoreAllMocks());

describe("GET /healthz", () => {
  it("answers without auth and without touching storage", async () => {
    const res = await app.fetch(new Request("http://localhost/healthz"), { ...untouchable(), AUTH_TOKENS: "acme:tok-1" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
    expect(res.headers.get("x-request-id")).toMatch(UUID);
  });
});

describe("request ids", () => {
  it("every answer carries x-request-id: success, error, preflight, not found", async () => {
    const answers = [
      await app.fetch(new Request("http://localhost/api/sessions", { method: "POST" }), env),
      await app.fetch(new Request("http://localhost/api/sessions/bad"), env),
      await app.fetch(new Request("http://localhost/api/nothing"), env),
      await app.fetch(new Request("http://localhost/api/sessions", { method: "OPTIONS" }), env),
      await app.fetch(new Request("http://localhost/openapi.json"), env),
    ];
    const ids = answers.map((res) => res.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("a client's own short id is kept; anything else is replaced", async () => {
    const own = await app.fetch(new Request("http://localhost/api/sessions/bad", { headers: { "x-request-id": "cli-42.a:b" } }), env);
    expect(own.headers.get("x-request-id")).toBe("cli-42.a:b");
    expect(((await own.json()) as { error: { requestId: string } }).error.requestId).toBe("cli-42.a:b");
    for (const bad of ["x".repeat(65), "has space", 'quote"d']) {
      const res = await app.fetch(new Request("http://localhost/healthz", { headers: { "x-request-id": bad } }), env);
      expect(res.headers.get("x-request-id")).toMatch(UUID);
    }
  });

  it("one structured JSON log line per request names the request id; failures log at error", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
    vi.spyOn(console, "error").mockImplementation((line: string) => lines.push(line));
    const bindings = { ...env, LOG_LEVEL: "info" };
    const ok = await app.fetch(new Request("http://localhost/healthz", { headers: { "x-request-id": "req-ok" } }), bindings);
    const refused = await app.fetch(new Request("http://localhost/api/sessions/bad", { headers: { "x-request-id": "req-bad" } }), bindings);
    expect([ok.status, refused.status]).toEqual([200, 400]);
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed).toEqual([
      { level: "info", msg: "request", requestId: "req-ok", method: "GET", path: "/healthz", status: 200, ms: expect.any(Number) },
      {
        level: "info",
        msg: "request",
        requestId: "req-bad",
        method: "GET",
        path: "/api/sessions/bad",
        status: 400,
        ms: expect.any(Number),
      },
    ]);
  });

  it("an unexpected error is logged with its stack and answered as internal_error with the request id", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: string) => lines.push(line));
    const explode = () => {
      throw new Error("tenant index exploded");
    };
    const broken = { ...env, TENANTS: { getByName: explode } };
    const res = await app.fetch(new Request("http://localhost/api/sessions/s_x", { headers: { "x-request-id": "req-500" } }), broken);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      error: { code: "internal_error", message: "the server failed to handle this request", requestId: "req-500" },
    });
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged[0]).toMatchObject({ level: "error", msg: "unhandled error", requestId: "req-500" });
    expect(String(logged[0]!.error)).toContain("tenant index exploded");
    expect(logged[1]).toMatchObject({ level: "error", msg: "request", requestId: "req-500", status: 500 });
  });

  it("LOG_LEVEL drops lines below it", () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
    vi.spyOn(console, "error").mockImplementation((line: string) => lines.push(line));
    logLine({ LOG_LEVEL: "warn" }, "info", "dropped", {});
    logLine({ LOG_LEVEL: "warn" }, "error", "kept", { a: 1 });
    logLine({}, "debug", "dropped by the default (info)", {});
    logLine({}, "info", "kept by the default", {});
    expect(lines).toEqual(['{"level":"error","msg":"kept","a":1}', '{"level":"info","msg":"kept by the default"}']);
  });
});
