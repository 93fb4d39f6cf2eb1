import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DurableSessionStore } from "../../src/session/session-store";
import { useSessionDeps } from "../helpers/test-worker";

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const store = new DurableSessionStore(env);

/**
 * R2 whose reads of `prefix` wait until `open()`; `entered()` waits until the first such read has
 * begun, so a test can start a deletion while a read of the log is in flight. Each side polls a
 * flag on its own timer: a promise settled from the other side would resume it in the other's
 * context (the object's, or the test's), where its I/O is refused.
 */
function gatedBucket(prefix: string) {
  const state = { open: false, entered: false };
  const until = async (done: () => boolean) => {
    while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  const bucket = new Proxy(env.STORE, {
    get(target, property) {
      if (property === "get") {
        return async (key: string, options?: R2GetOptions) => {
          if (key.startsWith(prefix)) {
            state.entered = true;
            await until(() => state.open);
          }
          return target.get(key, options);
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
