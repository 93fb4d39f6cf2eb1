import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/api/app";
import { MAX_LOGGED_PATH_CHARS } from "../../src/api/request-context";
import { HarnessError } from "../../src/domain";
import { logLine, ReportedOnce, useLogLevel } from "../../src/log";

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

/** Every log line written from now on, with the console method that wrote it. */
function captureLog(): { via: "log" | "warn" | "error"; line: Record<string, unknown> }[] {
  const lines: { via: "log" | "warn" | "error"; line: Record<string, unknown> }[] = [];
  for (const via of ["log", "warn", "error"] as const)
    vi.spyOn(console, via).mockImplementation((line: string) => lines.push({ via, line: JSON.parse(line) as Record<string, unknown> }));
  return lines;
}

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
        code: "invalid_session_id",
        ms: expect.any(Number),
      },
    ]);
  });

  it("a route that does not exist: the request line carries route_not_found", async () => {
    const lines = captureLog();
    const res = await app.fetch(new Request("http://localhost/api/nothing", { headers: { "x-request-id": "req-404" } }), {
      ...env,
      LOG_LEVEL: "info",
    });
    expect(res.status).toBe(404);
    expect(lines).toEqual([
      {
        via: "log",
        line: {
          level: "info",
          msg: "request",
          requestId: "req-404",
          method: "GET",
          path: "/api/nothing",
          status: 404,
          code: "route_not_found",
          ms: expect.any(Number),
        },
      },
    ]);
  });

  it("a registry-coded 500 is logged once with its code and message, and the request line carries the code", async () => {
    const lines = captureLog();
    const misconfigured = { ...env, AUTH_TOKENS: "justatoken0123456789" };
    const res = await app.fetch(
      new Request("http://localhost/api/sessions", {
        headers: { authorization: "Bearer justatoken0123456789", "x-request-id": "req-conf" },
      }),
      misconfigured,
    );
    expect(res.status).toBe(500);
    const { message } = ((await res.json()) as { error: { message: string } }).error;
    expect(lines).toEqual([
      {
        via: "error",
        line: { level: "error", msg: "error answered", requestId: "req-conf", status: 500, code: "auth_misconfigured", message },
      },
      {
        via: "error",
        line: {
          level: "error",
          msg: "request",
          requestId: "req-conf",
          method: "GET",
          path: "/api/sessions",
          status: 500,
          code: "auth_misconfigured",
          ms: expect.any(Number),
        },
      },
    ]);
  });

  it("a 503 is back-pressure: both its lines are warnings (console.warn), with the code", async () => {
    const busy = createApp();
    busy.get("/api/busy", () => {
      throw new HarnessError("ingest_busy", "the server is ingesting its maximum of uploads; retry");
    });
    const lines = captureLog();
    const res = await busy.fetch(new Request("http://localhost/api/busy", { headers: { "x-request-id": "req-busy" } }), env);
    expect(res.status).toBe(503);
    expect(lines).toEqual([
      {
        via: "warn",
        line: {
          level: "warn",
          msg: "error answered",
          requestId: "req-busy",
          status: 503,
          code: "ingest_busy",
          message: "the server is ingesting its maximum of uploads; retry",
        },
      },
      {
        via: "warn",
        line: {
          level: "warn",
          msg: "request",
          requestId: "req-busy",
          method: "GET",
          path: "/api/busy",
          status: 503,
          code: "ingest_busy",
          ms: expect.any(Number),
        },
      },
    ]);
  });

  it("a long path is clipped in the request line, with its full length", async () => {
    const lines = captureLog();
    const path = `/api/sessions/${"A".repeat(8000)}/files/x`;
    const res = await app.fetch(new Request(`http://localhost${path}`, { headers: { "x-request-id": "req-long" } }), {
      ...env,
      AUTH_TOKENS: "team-a:tokAlpha_7Hx2Kq9Wm4Zp8Rt3",
      LOG_LEVEL: "info",
    });
    expect(res.status).toBe(401);
    expect(lines).toEqual([
      {
        via: "log",
        line: {
          level: "info",
          msg: "request",
          requestId: "req-long",
          method: "GET",
          path: `${path.slice(0, MAX_LOGGED_PATH_CHARS)}…`,
          pathChars: path.length,
          status: 401,
          code: "unauthorized",
          ms: expect.any(Number),
        },
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
    expect(logged[1]).toMatchObject({ level: "error", msg: "request", requestId: "req-500", status: 500, code: "internal_error" });
    expect(logged).toHaveLength(2);
  });
});

describe("the log line", () => {
  afterEach(() => useLogLevel(env.LOG_LEVEL));

  it("LOG_LEVEL drops lines below it; each level goes to its console method", () => {
    const lines: string[] = [];
    for (const via of ["log", "warn", "error"] as const)
      vi.spyOn(console, via).mockImplementation((line: string) => lines.push(`${via} ${line}`));
    useLogLevel("warn");
    logLine("info", "dropped");
    logLine("warn", "kept", { a: 1 });
    logLine("error", "kept too");
    useLogLevel(undefined);
    logLine("debug", "dropped by the default (info)");
    logLine("info", "kept by the default");
    expect(lines).toEqual([
      'warn {"level":"warn","msg":"kept","a":1}',
      'error {"level":"error","msg":"kept too"}',
      'log {"level":"info","msg":"kept by the default"}',
    ]);
  });

  it("LOG_LEVEL is read in any case; an unknown one is said once, and info applies", () => {
    const lines: string[] = [];
    for (const via of ["log", "warn", "error"] as const)
      vi.spyOn(console, via).mockImplementation((line: string) => lines.push(`${via} ${line}`));
    useLogLevel(" ERROR ");
    logLine("warn", "dropped");
    useLogLevel("loud");
    useLogLevel("loud");
    logLine("debug", "dropped");
    logLine("info", "kept");
    expect(lines).toEqual([
      'warn {"level":"warn","msg":"LOG_LEVEL is not one of debug, info, warn, error: logging at info","logLevel":"loud"}',
      'log {"level":"info","msg":"kept"}',
    ]);
  });

  it("a condition reported once is reported again only once it is forgotten (the oldest first)", () => {
    const reported = new ReportedOnce(2);
    expect(["a", "a", "b", "c", "b", "a"].map((key) => reported.first(key))).toEqual([true, false, true, true, false, true]);
  });
});
