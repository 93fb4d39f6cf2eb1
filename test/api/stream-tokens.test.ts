import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { bearerTag, issueStreamToken, verifyStreamToken } from "../../src/api/stream-tokens";
import { DEFAULT_STREAM_TOKEN_TTL_SECONDS } from "../../src/domain";
import { DurableSessionStore } from "../../src/session/session-store";
import { deltaEvent } from "../helpers/records";
import { readSse } from "../helpers/sse-client";

const SECRET = "a-test-secret-of-at-least-32-characters!";
const NOW = 1_800_000_000;
const claims = { tenant: "acme", sessionId: "s_a", expiresAt: NOW + 300, bearer: "tag-of-the-bearer" };

const codeOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
    return "accepted";
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
};

describe("issueStreamToken / verifyStreamToken", () => {
  it("a token verifies for its session until it expires", async () => {
    const token = await issueStreamToken(SECRET, claims);
    expect(token).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(await verifyStreamToken(SECRET, token, "s_a", NOW)).toEqual(claims);
    expect(await verifyStreamToken(SECRET, token, "s_a", NOW + 299)).toEqual(claims);
    expect(await codeOf(verifyStreamToken(SECRET, token, "s_a", NOW + 300))).toBe("stream_token_expired");
  });

  it("is refused for another session, under another secret, or altered", async () => {
    const token = await issueStreamToken(SECRET, claims);
    expect(await codeOf(verifyStreamToken(SECRET, token, "s_b", NOW))).toBe("stream_token_invalid");
    expect(await codeOf(verifyStreamToken(`${SECRET}-rotated`, token, "s_a", NOW))).toBe("stream_token_invalid");
    const [v, body, sig] = token.split(".") as [string, string, string];
    // The claims of another session under the original signature.
    const forged = btoa(JSON.stringify({ t: "acme", s: "s_b", e: NOW + 300 })).replace(/=+$/, "");
    expect(await codeOf(verifyStreamToken(SECRET, `${v}.${forged}.${sig}`, "s_b", NOW))).toBe("stream_token_invalid");
    const flipped = sig[0] === "A" ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
    expect(await codeOf(verifyStreamToken(SECRET, `${v}.${body}.${flipped}`, "s_a", NOW))).toBe("stream_token_invalid");
    for (const junk of ["", "v1", "v1.x", "v2.a.b", `${token}.x`, "v1.!!.@@"])
      expect(await codeOf(verifyStreamToken(SECRET, junk, "s_a", NOW)), junk).toBe("stream_token_invalid");
  });

  it("needs a secret of at least 32 characters", async () => {
    expect(await codeOf(issueStreamToken(undefined, claims))).toBe("stream_token_unconfigured");
    expect(await codeOf(issueStreamToken("short", claims))).toBe("stream_token_unconfigured");
    // A server without a secret has signed nothing: a token sent to it is not its own.
    const token = await issueStreamToken(SECRET, claims);
    for (const secret of [undefined, "short"]) {
      expect(await codeOf(verifyStreamToken(secret, "v1.a.b", "s_a", NOW))).toBe("stream_token_invalid");
      expect(await codeOf(verifyStreamToken(secret, token, "s_a", NOW))).toBe("stream_token_invalid");
    }
  });
});

describe("POST /api/sessions/:id/stream-token and ?token= on the event stream", () => {
  const app = createApp();
  const authed = { ...env, AUTH_TOKENS: "acme:tok-acme, globex:tok-globex", STREAM_TOKEN_SECRET: SECRET };
  const call = (path: string, init: RequestInit & { token?: string } = {}, bindings: object = authed) =>
    app.fetch(
      new Request(`http://localhost${path}`, {
        ...init,
        headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.headers as object) },
      }),
      bindings,
    );
  const streamToken = async (sessionId: string, body: unknown = {}, bindings: object = authed) =>
    call(
      `/api/sessions/${sessionId}/stream-token`,
      { method: "POST", token: "tok-acme", body: JSON.stringify(body), headers: { "content-type": "application/json" } },
      bindings,
    );
  const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;
  const tagOf = async (bearer: string) => bearerTag(SECRET, await crypto.subtle.digest("SHA-256", new TextEncoder().encode(bearer)));

  async function sessionWithEvents(token = "tok-acme") {
    const created = await call("/api/sessions", { method: "POST", token });
    const { sessionId } = (await created.json()) as { sessionId: string };
    const store = new DurableSessionStore(env);
    await store.appendEvent(sessionId, deltaEvent(sessionId, "e_1", "one"));
    await store.appendEvent(sessionId, deltaEvent(sessionId, "e_2", "two"));
    return sessionId;
  }

  it("hands out a token (default 5 minutes) that opens that session's event stream without Authorization", async () => {
    const sessionId = await sessionWithEvents();
    const before = Date.now();
    const res = await streamToken(sessionId);
    expect(res.status).toBe(200);
    const { token, expiresAt } = (await res.json()) as { token: string; expiresAt: string };
    const ttl = (Date.parse(expiresAt) - before) / 1000;
    expect(ttl).toBeGreaterThan(DEFAULT_STREAM_TOKEN_TTL_SECONDS - 2);
    expect(ttl).toBeLessThanOrEqual(DEFAULT_STREAM_TOKEN_TTL_SECONDS + 1);
    const stream = await call(`/api/sessions/${sessionId}/events/stream?token=${encodeURIComponent(token)}`);
    expect(stream.status).toBe(200);
    const { frames } = await readSse(stream);
    expect(frames.map((f) => [f.id, f.data.text])).toEqual([
      [1, "one"],
      [2, "two"],
    ]);
    // HEAD answers as GET does (hunt 53 found it 401: the token was read for GET only).
    const head = await call(`/api/sessions/${sessionId}/events/stream?token=${encodeURIComponent(token)}`, { method: "HEAD" });
    expect([head.status, head.headers.get("content-type"), await head.text()]).toEqual([200, "text/event-stream; charset=utf-8", ""]);
    const altered = await call(`/api/sessions/${sessionId}/events/stream?token=${encodeURIComponent(`${token}x`)}`, { method: "HEAD" });
    expect(altered.status).toBe(401);
    // A chosen lifetime within the range.
    const short = (await (await streamToken(sessionId, { ttlSeconds: 60 })).json()) as { expiresAt: string };
    expect((Date.parse(short.expiresAt) - before) / 1000).toBeLessThanOrEqual(61);
    expect(await errorCode(await streamToken(sessionId, { ttlSeconds: 5 }))).toBe("invalid_body");
    expect(await errorCode(await streamToken(sessionId, { ttlSeconds: 100_000 }))).toBe("invalid_body");
  });

  it("is accepted nowhere else: not on other routes, not for another session", async () => {
    const sessionId = await sessionWithEvents();
    const other = await sessionWithEvents();
    const { token } = (await (await streamToken(sessionId)).json()) as { token: string };
    const q = `?token=${encodeURIComponent(token)}`;
    for (const path of ["", "/messages", "/events", "/changes"]) {
      const res = await call(`/api/sessions/${sessionId}${path}${q}`);
      expect([path, res.status, await errorCode(res)]).toEqual([path, 401, "unauthorized"]);
    }
    const posted = await call(`/api/sessions/${sessionId}/abort${q}`, { method: "POST" });
    expect(await errorCode(posted)).toBe("unauthorized");
    const foreign = await call(`/api/sessions/${other}/events/stream${q}`);
    expect([foreign.status, await errorCode(foreign)]).toEqual([401, "stream_token_invalid"]);
    const garbage = await call(`/api/sessions/${sessionId}/events/stream?token=v1.nope.nope`);
    expect([garbage.status, await errorCode(garbage)]).toEqual([401, "stream_token_invalid"]);
  });

  it("is refused once expired, and once its tenant is no longer configured", async () => {
    const sessionId = await sessionWithEvents();
    const expired = await issueStreamToken(SECRET, {
      tenant: "acme",
      sessionId,
      expiresAt: Math.floor(Date.now() / 1000) - 1,
      bearer: await tagOf("tok-acme"),
    });
    const late = await call(`/api/sessions/${sessionId}/events/stream?token=${expired}`);
    expect([late.status, await errorCode(late)]).toEqual([401, "stream_token_expired"]);
    const { token } = (await (await streamToken(sessionId)).json()) as { token: string };
    const revoked = await call(
      `/api/sessions/${sessionId}/events/stream?token=${token}`,
      {},
      { ...authed, AUTH_TOKENS: "globex:tok-globex" },
    );
    expect([revoked.status, await errorCode(revoked)]).toEqual([401, "stream_token_invalid"]);
  });

  it("is refused once the bearer token it was issued under is rotated out, kept while that token is", async () => {
    const both = { ...authed, AUTH_TOKENS: "acme:tok-old, acme:tok-new" };
    const created = await call("/api/sessions", { method: "POST", token: "tok-old" }, both);
    const { sessionId } = (await created.json()) as { sessionId: string };
    const issue = async (bearer: string) => {
      const res = await call(
        `/api/sessions/${sessionId}/stream-token`,
        { method: "POST", token: bearer, body: "{}", headers: { "content-type": "application/json" } },
        both,
      );
      return ((await res.json()) as { token: string }).token;
    };
    const underOld = await issue("tok-old");
    const underNew = await issue("tok-new");
    // The claims name the bearer token by its tag, never by its text or its plain SHA-256.
    const claimsOf = (token: string) => JSON.parse(atob(token.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/")));
    expect(claimsOf(underOld)).toEqual({ t: "acme", s: sessionId, e: expect.any(Number), b: await tagOf("tok-old") });
    expect(claimsOf(underNew).b).toBe(await tagOf("tok-new"));
    expect(claimsOf(underOld).b).not.toBe(claimsOf(underNew).b);
    const open = async (token: string, tokens: string) => {
      const res = await call(`/api/sessions/${sessionId}/events/stream?token=${token}`, {}, { ...authed, AUTH_TOKENS: tokens });
      if (res.status !== 401) return [res.status];
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      return [401, error.code, error.message];
    };
    const rotated = "the stream token was issued under a bearer token that is no longer configured (rotated or removed); ask for a new one";
    // While both are configured each token opens the stream (204: no run, nothing after it).
    expect(await open(underOld, "acme:tok-old, acme:tok-new")).toEqual([204]);
    expect(await open(underNew, "acme:tok-old, acme:tok-new")).toEqual([204]);
    // tok-old rotated out: what it asked for goes with it, the tenant's other token's stays.
    expect(await open(underOld, "acme:tok-new")).toEqual([401, "stream_token_invalid", rotated]);
    expect(await open(underNew, "acme:tok-new")).toEqual([204]);
    // The same text given to another tenant does not revive it either.
    expect(await open(underOld, "acme:tok-new, globex:tok-old")).toEqual([401, "stream_token_invalid", rotated]);
    // A token signed without a bearer tag (issued with auth off, or before tags existed) is refused
    // while auth is on, saying so: the bearer token of the client is still configured (hunt 44).
    const untagged = await issueStreamToken(SECRET, {
      tenant: "acme",
      sessionId,
      expiresAt: Math.floor(Date.now() / 1000) + 60,
      bearer: null,
    });
    expect(await open(untagged, "acme:tok-old, acme:tok-new")).toEqual([
      401,
      "stream_token_invalid",
      "the stream token names no bearer token (it was issued while auth was off, or by an earlier version of this server); ask for a new one",
    ]);
  });

  it("a token of one tenant does not open another tenant's session of the same id", async () => {
    const sessionId = await sessionWithEvents("tok-globex");
    // globex's session, but a token claiming acme: the lookup runs as acme and finds nothing.
    const token = await issueStreamToken(SECRET, {
      tenant: "acme",
      sessionId,
      expiresAt: Math.floor(Date.now() / 1000) + 60,
      bearer: await tagOf("tok-acme"),
    });
    const res = await call(`/api/sessions/${sessionId}/events/stream?token=${token}`);
    expect([res.status, await errorCode(res)]).toEqual([404, "session_not_found"]);
  });

  it("without STREAM_TOKEN_SECRET no token is issued (500 stream_token_unconfigured), and one sent is a 401 (hunt 60)", async () => {
    const sessionId = await sessionWithEvents();
    const unset = { ...authed, STREAM_TOKEN_SECRET: undefined };
    const res = await streamToken(sessionId, {}, unset);
    expect([res.status, await errorCode(res)]).toEqual([500, "stream_token_unconfigured"]);
    // Anyone without a bearer token can send ?token=: that must not be a server error.
    for (const method of ["GET", "HEAD"]) {
      const sent = await call(`/api/sessions/${sessionId}/events/stream?token=junk`, { method }, unset);
      expect([method, sent.status, sent.headers.get("www-authenticate")]).toEqual([method, 401, 'Bearer realm="pi-harness"']);
      if (method === "GET") expect(await errorCode(sent)).toBe("stream_token_invalid");
    }
  });
});
