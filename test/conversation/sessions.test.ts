import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { safeRunOptions } from "../../src/domain";
import { SESSION_STREAM_ORIGIN, SESSION_STREAM_PATHS } from "../../src/session/session-api";
import { client, post } from "../awtl/harness";
import { readSse } from "../helpers/sse-client";
import type { SessionDO } from "../helpers/test-worker";
import { useSessionDeps } from "../helpers/test-worker";
import { api, echoAnswer, gate, postJson, prompt, sessionWithHeldRun, sessionWithModel, store, until } from "./helpers";

interface Page {
  items: { id: string; title: string | null; projectId: string | null; status: string; counts: { messages: number; events: number } }[];
  nextCursor: string | null;
}
const list = async (query: string) => {
  const res = await api(`/api/sessions?${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Page;
};
const create = async (body: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
  const res = await postJson("/api/sessions", body, headers);
  return { status: res.status, body: (await res.json()) as { sessionId: string; error?: { code: string } } };
};
const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

describe("GET /api/sessions", () => {
  it("lists the caller's sessions newest first, filtered by project, with their summaries", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ projectId: "p_listing", title: `t${i}` })).body.sessionId);
    await create({ projectId: "p_other" });
    const page = await list("projectId=p_listing");
    expect(page.items.map((s) => s.id)).toEqual([...ids].reverse());
    expect(page.items[0]).toMatchObject({ title: "t2", projectId: "p_listing", status: "idle", counts: { messages: 0, events: 0 } });
    expect(Object.keys(page.items[0]!).sort()).toEqual(
      ["counts", "createdAt", "id", "projectId", "status", "title", "updatedAt", "workspaceId"].sort(),
    );
    expect(page.nextCursor).toBeNull();
  });

  it("projectId=p_default lists the sessions created without a project (they learn in p_default) and those that name it", async () => {
    const none = (await create({ title: "no project" })).body.sessionId;
    const named = (await create({ title: "named", projectId: "p_default" })).body.sessionId;
    const other = (await create({ title: "other", projectId: "p_elsewhere" })).body.sessionId;
    const ids = (await list("projectId=p_default&limit=200")).items.map((s) => s.id);
    expect([ids.includes(none), ids.includes(named), ids.includes(other)]).toEqual([true, true, false]);
    expect(ids.indexOf(named)).toBeLessThan(ids.indexOf(none));
  });

  it("pages through p_default's two kinds of sessions merged newest first, with none skipped or repeated", async () => {
    const made: { id: string; listed: boolean }[] = [];
    for (const projectId of [undefined, "p_default", "p_elsewhere", undefined, undefined, "p_elsewhere", "p_default", undefined]) {
      const { sessionId } = (await create(projectId ? { projectId } : {})).body;
      made.push({ id: sessionId, listed: projectId !== "p_elsewhere" });
    }
    const expected = made
      .filter((m) => m.listed)
      .map((m) => m.id)
      .reverse();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = await list(`projectId=p_default&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((s) => s.id));
      cursor = page.nextCursor;
    } while (cursor && seen.length < expected.length);
    expect(seen.slice(0, expected.length)).toEqual(expected);
  });

  it("keeps status, counts and updatedAt fresh: the session reports to its index when a run starts and ends", async () => {
    const { sessionId } = await sessionWithModel((body) => echoAnswer(body));
    await api(`/api/sessions/${sessionId}`, {
      method: "PATCH",
      body: JSON.stringify({ title: "reported" }),
      headers: { "content-type": "application/json" },
    });
    await readSse(await prompt(sessionId, { text: "hello" }));
    await until(async () => {
      const item = (await list("limit=100")).items.find((s) => s.id === sessionId);
      return item?.counts.messages === 2 && item.status === "idle";
    }, "the summary report");
    const item = (await list("limit=100")).items.find((s) => s.id === sessionId)!;
    expect(item).toMatchObject({ title: "reported", counts: { messages: 2, events: 5 } });
  });

  it("pagination is stable while sessions are being created: no item twice, none skipped", async () => {
    const first: string[] = [];
    for (let i = 0; i < 7; i++) first.push((await create({ projectId: "p_pages" })).body.sessionId);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Page = await list(`projectId=p_pages&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...page.items.map((s) => s.id));
      cursor = page.nextCursor;
      pages++;
      // Sessions created between pages are newer than every cursor: they never show up further on.
      await create({ projectId: "p_pages" });
      await create({ projectId: "p_pages" });
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...first].reverse());
  });

  it("a session created after the newest ones were deleted does not show on a later page", async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await create({ projectId: "p_reuse" })).body.sessionId);
    const first: Page = await list("projectId=p_reuse&limit=2");
    expect(first.items.map((s) => s.id)).toEqual([made[4], made[3]]);
    for (const id of made.slice(2)) expect((await api(`/api/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
    const late = (await create({ projectId: "p_reuse" })).body.sessionId;
    const second: Page = await list(`projectId=p_reuse&limit=2&cursor=${first.nextCursor}`);
    expect(second.items.map((s) => s.id)).toEqual([made[1], made[0]]);
    expect((await list("projectId=p_reuse&limit=10")).items.map((s) => s.id)).toEqual([late, made[1], made[0]]);
  });

  it("lists only the caller's tenant; another tenant's session is 404 for PATCH and DELETE", async () => {
    const tokens = { AUTH_TOKENS: "ann:tok-ann-0123456789abcdef,bob:tok-bob-0123456789abcdef" };
    const ann = client(tokens, "tok-ann-0123456789abcdef");
    const bob = client(tokens, "tok-bob-0123456789abcdef");
    const created = await ann("/api/sessions", post({ title: "ann's" }));
    expect(created.status).toBe(201);
    const { sessionId } = (await created.json()) as { sessionId: string };
    const annList = (await (await ann("/api/sessions")).json()) as Page;
    const bobList = (await (await bob("/api/sessions")).json()) as Page;
    expect(annList.items.map((s) => s.id)).toContain(sessionId);
    expect(bobList.items.map((s) => s.id)).not.toContain(sessionId);
    expect((await bob(`/api/sessions/${sessionId}`, { method: "DELETE" })).status).toBe(404);
    const patch = { method: "PATCH", body: JSON.stringify({ title: "x" }), headers: { "content-type": "application/json" } };
    expect((await bob(`/api/sessions/${sessionId}`, patch)).status).toBe(404);
    expect((await ann(`/api/sessions/${sessionId}`, { method: "DELETE" })).status).toBe(204);
  });

  it("refuses a cursor it did not make and a limit out of range", async () => {
    const bad = await api("/api/sessions?cursor=not-a-cursor");
    expect(bad.status).toBe(400);
    expect(await errorCode(bad)).toBe("invalid_cursor");
    const tooMany = await api("/api/sessions?limit=1000");
    expect(tooMany.status).toBe(400);
  });
});

describe("PATCH /api/sessions/:id", () => {
  it("renames a session; GET shows the new title; an unknown session is 404", async () => {
    const { sessionId } = (await create({ title: "old" })).body;
    const res = await api(`/api/sessions/${sessionId}`, {
      method: "PATCH",
      body: JSON.stringify({ title: "new" }),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { title: string }).title).toBe("new");
    expect(((await (await api(`/api/sessions/${sessionId}`)).json()) as { title: string }).title).toBe("new");
    const missing = await api(`/api/sessions/s_nope`, {
      method: "PATCH",
      body: JSON.stringify({ title: "x" }),
      headers: { "content-type": "application/json" },
    });
    expect(missing.status).toBe(404);
  });
});

describe("DELETE /api/sessions/:id", () => {
  const routes = (id: string): [string, string, unknown?][] => [
    ["GET", `/api/sessions/${id}`],
    ["GET", `/api/sessions/${id}/messages`],
    ["GET", `/api/sessions/${id}/events`],
    ["GET", `/api/sessions/${id}/files/a.txt`],
    ["GET", `/api/sessions/${id}/changes`],
    ["GET", `/api/sessions/${id}/events/stream`],
    ["POST", `/api/sessions/${id}/messages/stream`, { text: "hi" }],
    ["POST", `/api/sessions/${id}/abort`, {}],
    ["POST", `/api/sessions/${id}/fork`, {}],
    ["PATCH", `/api/sessions/${id}`, { title: "x" }],
    ["DELETE", `/api/sessions/${id}/queue/m_1`],
    ["DELETE", `/api/sessions/${id}`],
  ];

  it("aborts the active run, removes the log and R2 objects; then every route answers 404", async () => {
    const first = gate();
    const { sessionId } = await sessionWithModel(async (body, n, signal) => {
      if (n === 1) await first.wait(signal);
      return echoAnswer(body);
    });
    first.open();
    await readSse(await prompt(sessionId, { text: "one" }));
    expect((await store.stub(sessionId).flush()).ok).toBe(true);
    expect((await env.STORE.list({ prefix: `sessions/${sessionId}/` })).objects.length).toBeGreaterThan(0);
    const second = gate();
    useSessionDeps(sessionId, {
      modelFetch: async (_i, init) => {
        await second.wait(init?.signal);
        return echoAnswer(JSON.parse(String(init?.body)));
      },
    });
    const running = prompt(sessionId, { text: "two" });
    await until(async () => (await store.info(sessionId))!.status === "running", "the run");

    const res = await api(`/api/sessions/${sessionId}`, { method: "DELETE" });
    expect(res.status).toBe(204);
    const { frames } = await readSse(await running);
    expect(frames.at(-1)!.data).toMatchObject({ type: "agent_completed", stopReason: "ABORTED" });
    expect((await env.STORE.list({ prefix: `sessions/${sessionId}/` })).objects).toEqual([]);
    expect(await store.stub(sessionId).describe()).toBeNull();
    expect((await list("limit=100")).items.map((s) => s.id)).not.toContain(sessionId);
    for (const [method, path, body] of routes(sessionId)) {
      const r = await api(path, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
      });
      expect([method, path, r.status]).toEqual([method, path, 404]);
      await r.body?.cancel();
    }
  });

  it("a prompt that reaches the object once its deletion has begun is refused, not run after it", async () => {
    const { sessionId } = await sessionWithModel((body) => echoAnswer(body));
    await readSse(await prompt(sessionId, { text: "one" }));
    // The route had let it through before the session was unlisted; the object gets it mid-deletion.
    const delivery = JSON.stringify({ command: { sessionId, userText: "two", options: safeRunOptions() }, whenBusy: "followUp" });
    const [status, code] = await runInDurableObject(store.stub(sessionId), async (instance: SessionDO) => {
      const request = new Request(`${SESSION_STREAM_ORIGIN}${SESSION_STREAM_PATHS.run}`, { method: "POST", body: delivery });
      const deletion = instance.destroy();
      const late = await instance.fetch(request);
      await deletion;
      return [late.status, await errorCode(late)];
    });
    expect([status, code]).toEqual([404, "session_not_found"]);
    expect(await store.stub(sessionId).describe()).toBeNull();
  });

  it("a deletion that failed half-way is unlisted and unreadable, and DELETE again finishes it", async () => {
    const { sessionId } = await sessionWithModel((body) => echoAnswer(body));
    await readSse(await prompt(sessionId, { text: "one" }));
    await store.stub(sessionId).flush();
    let failures = 1;
    useSessionDeps(sessionId, {
      bucket: new Proxy(env.STORE, {
        get(target, property) {
          if (property === "delete" && failures-- > 0) return async () => Promise.reject(new Error("R2 is down"));
          const value = Reflect.get(target, property);
          return typeof value === "function" ? value.bind(target) : value;
        },
      }),
    });
    const failed = await api(`/api/sessions/${sessionId}`, { method: "DELETE" });
    expect(failed.status).toBe(500);
    await failed.body?.cancel();
    expect((await api(`/api/sessions/${sessionId}`)).status).toBe(404);
    expect((await list("limit=100")).items.map((s) => s.id)).not.toContain(sessionId);
    expect((await env.STORE.list({ prefix: `sessions/${sessionId}/` })).objects.length).toBeGreaterThan(0);

    expect((await api(`/api/sessions/${sessionId}`, { method: "DELETE" })).status).toBe(204);
    expect((await env.STORE.list({ prefix: `sessions/${sessionId}/` })).objects).toEqual([]);
    expect((await api(`/api/sessions/${sessionId}`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("Idempotency-Key", () => {
  it("creating a session twice with one key creates one session; another body under the key is 422", async () => {
    const a = await create({ title: "once", projectId: "p_idem" }, { "idempotency-key": "create-1" });
    const b = await create({ title: "once", projectId: "p_idem" }, { "idempotency-key": "create-1" });
    expect(a.status).toBe(201);
    expect(b).toEqual(a);
    expect((await list("projectId=p_idem")).items).toHaveLength(1);
    const other = await create({ title: "different", projectId: "p_idem" }, { "idempotency-key": "create-1" });
    expect(other.status).toBe(422);
    expect(other.body.error?.code).toBe("idempotency_key_reused");
    // requestId in the body is the same key.
    const c = await create({ title: "once", projectId: "p_idem", requestId: "create-1" });
    expect(c).toEqual(a);
  });

  it("a repeat of the create after a DELETE does not bring the session back: 404, and it stays unlisted", async () => {
    const first = await create({ title: "doomed", projectId: "p_idem_del" }, { "idempotency-key": "create-del" });
    const id = first.body.sessionId;
    expect((await api(`/api/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
    const res = await postJson("/api/sessions", { title: "doomed", projectId: "p_idem_del" }, { "idempotency-key": "create-del" });
    expect([res.status, ((await res.json()) as { error: { code: string; message: string } }).error]).toEqual([
      404,
      {
        code: "session_not_found",
        message: `session '${id}' was deleted; repeating the request that created it does not bring it back (send it with a new Idempotency-Key)`,
        requestId: expect.any(String),
      },
    ]);
    expect((await list("projectId=p_idem_del")).items).toEqual([]);
    expect((await api(`/api/sessions/${id}`)).status).toBe(404);
    // A new key makes a new session.
    const again = await create({ title: "doomed", projectId: "p_idem_del" }, { "idempotency-key": "create-del-2" });
    expect([again.status, again.body.sessionId === id]).toEqual([201, false]);
  });

  it("a duplicated prompt with the same key yields one run; the repeat streams that run from its first event", async () => {
    const { sessionId, requests } = await sessionWithModel((body) => echoAnswer(body));
    const key = { "idempotency-key": "prompt-1" };
    const first = await readSse(await prompt(sessionId, { text: "only once" }, key));
    const again = await prompt(sessionId, { text: "only once" }, key);
    expect(again.status).toBe(200);
    const repeat = await readSse(again);
    expect(repeat.frames).toEqual(first.frames);
    expect(repeat.frames[0]!.data.type).toBe("agent_started");
    expect(requests).toHaveLength(1);
    const different = await prompt(sessionId, { text: "something else" }, key);
    expect(different.status).toBe(422);
    expect(await errorCode(different)).toBe("idempotency_key_reused");
    expect(requests).toHaveLength(1);
  });

  it("concurrent duplicates of a queued follow-up: one queued message, both answered with its run", async () => {
    const { sessionId, first, running } = await sessionWithHeldRun("one");
    const key = { "idempotency-key": "follow-1" };
    const [a, b] = await Promise.all([
      prompt(sessionId, { text: "two", whenBusy: "followUp" }, key),
      prompt(sessionId, { text: "two", whenBusy: "followUp" }, key),
    ]);
    expect(a.headers.get("x-run-id")).toBe(b.headers.get("x-run-id"));
    first.open();
    await readSse(await running);
    const [fa, fb] = await Promise.all([readSse(a), readSse(b)]);
    expect(fa.frames).toEqual(fb.frames);
    const users = (await store.loadMessages(sessionId)).filter((m) => m.kind === "user");
    expect(users).toHaveLength(2);
  });

  it("an invalid key is refused", async () => {
    const res = await postJson("/api/sessions", {}, { "idempotency-key": "has space" });
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe("invalid_idempotency_key");
  });
});

describe("Idempotency-Key on judgements", () => {
  it("a repeated judgement with the same key is recorded once and answers the same", async () => {
    const { sessionId } = await sessionWithModel((body) => echoAnswer(body));
    const frames = (await readSse(await prompt(sessionId, { text: "hello" }))).frames;
    const runId = String(frames[0]!.data.runId);
    const verdict = { runId, judgeName: "ci", result: "pass", artifactRefs: [] };
    const send = (body: unknown) => postJson(`/api/sessions/${sessionId}/judgements`, body, { "idempotency-key": "judge-1" });
    const [a, b] = await Promise.all([send(verdict), send(verdict)]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(await b.json()).toEqual(await a.json());
    const trace = await (await api(`/api/sessions/${sessionId}/trace`)).text();
    expect(trace.split("\n").filter((l) => l.includes('"judge_result"') && l.includes('"ci"'))).toHaveLength(1);
    const other = await send({ ...verdict, result: "fail" });
    expect(other.status).toBe(422);
  });
});
