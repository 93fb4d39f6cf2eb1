import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DurableSessionStore } from "../../src/session/session-store";
import { client, model, openSession, prompt } from "../awtl/harness";
import { useSessionDeps } from "../helpers/test-worker";

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const store = new DurableSessionStore(env);

/**
 * R2 whose `method` calls (reads by default) on keys under `prefix` wait until `open()`; `entered()`
 * waits until the first such call has begun, so a test can start a deletion while one is in flight.
 * Each side polls a flag on its own timer: a promise settled from the other side would resume it in
 * the other's context (the object's, or the test's), where its I/O is refused.
 */
function gatedBucket(prefix: string, method: "get" | "put" = "get") {
  const state = { open: false, entered: false };
  const until = async (done: () => boolean) => {
    while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  const bucket = new Proxy(env.STORE, {
    get(target, property) {
      if (property === method) {
        return async (key: string, ...rest: unknown[]) => {
          if (key.startsWith(prefix)) {
            state.entered = true;
            await until(() => state.open);
          }
          return (target[method] as (key: string, ...rest: unknown[]) => Promise<unknown>)(key, ...rest);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { bucket, open: () => (state.open = true), entered: () => until(() => state.entered) };
}

describe("a read of the log that a deletion overtakes", () => {
  // Through the object's RPC: an API answer resumed by the object's timer would carry a body the
  // test may not read (the black-box check does it over HTTP).
  for (const [read, call] of [
    ["a fork", (sid: string) => store.stub(sid).forkSource()],
    ["an export", (sid: string) => store.stub(sid).exportJsonl("messages")],
  ] as const) {
    it(`${read} whose read of the log meets the DELETE answers session_not_found, not history_unreadable (hunt 52)`, async () => {
      const { sessionId: sid } = (await (await api("/api/sessions", { method: "POST" })).json()) as { sessionId: string };
      let parent: string | null = null;
      for (let i = 1; i <= 4; i++) {
        const id = `m_${i}`;
        await store.appendMessage(sid, {
          kind: "user",
          id,
          sessionId: sid,
          parentId: parent,
          createdAt: "2026-12-04T04:00:00.000Z",
          text: `q${i}`,
        });
        parent = id;
      }
      await store.stub(sid).flush();
      const gated = gatedBucket(`sessions/${sid}/messages/`);
      useSessionDeps(sid, { bucket: gated.bucket });

      const reading = call(sid);
      await gated.entered();
      expect((await api(`/api/sessions/${sid}`, { method: "DELETE" })).status).toBe(204);
      gated.open();
      expect(await reading).toEqual({ ok: false, code: "session_not_found", message: "session not found" });
      expect((await api(`/api/sessions/${sid}`)).status).toBe(404);
    });
  }
});

/** Starts the session's DELETE without waiting: `status()` is its answer once it came (null before). */
function startDelete(sid: string) {
  let status: number | null = null;
  const done = api(`/api/sessions/${sid}`, { method: "DELETE" }).then((res) => {
    status = res.status;
  });
  return { status: () => status, done };
}

describe("a rename or a verdict that a deletion overtakes (hunt 61)", () => {
  const awtl = client();
  const objectsOf = async (sid: string) => (await env.STORE.list({ prefix: `sessions/${sid}/` })).objects.map((o) => o.key);

  it("a rename whose session.json write is under way: the deletion lets it land, then removes it; the rename answers, never a 500", async () => {
    const { sessionId: sid } = (await (await api("/api/sessions", { method: "POST" })).json()) as { sessionId: string };
    const gated = gatedBucket(`sessions/${sid}/session.json`, "put");
    useSessionDeps(sid, { bucket: gated.bucket });

    const renaming = store.stub(sid).setTitle("a new title");
    await gated.entered();
    const deletion = startDelete(sid);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The deletion waits for the write under way instead of removing the objects under it.
    expect(deletion.status()).toBeNull();
    gated.open();
    const renamed = await renaming;
    await deletion.done;
    expect(deletion.status()).toBe(204);
    expect(renamed.ok ? renamed.value.title : renamed.code).toBe("a new title");
    expect(await objectsOf(sid)).toEqual([]);
    expect((await api(`/api/sessions/${sid}`)).status).toBe(404);
  });

  it("a flush whose segment write is under way: the deletion lets it land, then removes everything", async () => {
    const { sessionId: sid } = (await (await api("/api/sessions", { method: "POST" })).json()) as { sessionId: string };
    await store.appendMessage(sid, {
      kind: "user",
      id: "m_1",
      sessionId: sid,
      parentId: null,
      createdAt: "2026-12-04T04:00:00.000Z",
      text: "q",
    });
    const gated = gatedBucket(`sessions/${sid}/messages/`, "put");
    useSessionDeps(sid, { bucket: gated.bucket });

    const flushing = store.stub(sid).flush();
    await gated.entered();
    const deletion = startDelete(sid);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(deletion.status()).toBeNull();
    gated.open();
    expect((await flushing).ok).toBe(true);
    await deletion.done;
    expect(deletion.status()).toBe(204);
    expect(await objectsOf(sid)).toEqual([]);
  });

  it("a verdict whose read of the run's trace meets the DELETE answers session_not_found, not a 500", async () => {
    const { sessionId: sid } = await openSession(awtl, { answers: [model.text("done")] });
    const { runId } = await prompt(awtl, sid, { text: "hi" });
    await store.stub(sid).flush(); // the run's trace is in R2 segments now
    const gated = gatedBucket(`sessions/${sid}/trace/`);
    useSessionDeps(sid, { bucket: gated.bucket });

    const judging = store.stub(sid).judge(runId, { judgeName: "ci", result: "fail", artifactRefs: [], sourceActionId: null, detail: "" });
    await gated.entered();
    expect((await api(`/api/sessions/${sid}`, { method: "DELETE" })).status).toBe(204);
    gated.open();
    expect(await judging).toEqual({ ok: false, code: "session_not_found", message: "session not found" });
    expect(await objectsOf(sid)).toEqual([]);
  });
});
