import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { SessionList } from "../../src/api/schemas";

const app = createApp();
let tenantCount = 0;

/** A fresh tenant (its own index), so the list holds only what this test created. */
function tenant() {
  const name = `lister${++tenantCount}`;
  const bindings = { ...env, AUTH_TOKENS: `${name}:tok-${name}, other:tok-other` };
  const call = (path: string, init: RequestInit = {}, token = `tok-${name}`) =>
    app.fetch(
      new Request(`http://localhost${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as object) } }),
      bindings,
    );
  const create = async (title: string) => {
    const res = await call("/api/sessions", {
      method: "POST",
      body: JSON.stringify({ title }),
      headers: { "content-type": "application/json" },
    });
    return ((await res.json()) as { sessionId: string }).sessionId;
  };
  const list = async (query = "") => {
    const res = await call(`/api/sessions${query}`);
    expect(res.status).toBe(200);
    return SessionList.parse(await res.json());
  };
  return { call, create, list };
}

describe("GET /api/sessions", () => {
  it("lists the caller's sessions, newest first", async () => {
    const t = tenant();
    expect(await t.list()).toEqual({ items: [], nextCursor: null });
    const ids: string[] = [];
    for (const title of ["first", "second", "third"]) {
      ids.push(await t.create(title));
      await new Promise((r) => setTimeout(r, 5)); // distinct createdAt
    }
    const { items, nextCursor } = await t.list();
    expect(items.map((s) => [s.id, s.title])).toEqual([
      [ids[2], "third"],
      [ids[1], "second"],
      [ids[0], "first"],
    ]);
    expect(items[0]).toEqual({
      id: ids[2],
      title: "third",
      projectId: null,
      workspaceId: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      status: "idle",
      counts: { messages: 0, events: 0 },
    });
    expect(nextCursor).toBeNull();
    // Another tenant sees none of them.
    expect(SessionList.parse(await (await t.call("/api/sessions", {}, "tok-other")).json()).items.map((s) => s.id)).not.toContain(ids[0]);
  });

  it("pages with limit and an opaque cursor: every session once, in order", async () => {
    const t = tenant();
    const ids = new Set<string>();
    // Created in a burst, so several share a createdAt: ties are ordered by id.
    for (let i = 0; i < 7; i++) ids.add(await t.create(`s${i}`));
    const seen: { id: string; createdAt: string }[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await t.list(`?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(new Set(seen.map((s) => s.id))).toEqual(ids);
    expect(seen.length).toBe(7);
    const order = [...seen].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1));
    expect(seen).toEqual(order);
  });

  it("refuses a bad limit, an unknown parameter and a cursor it did not hand out", async () => {
    const t = tenant();
    const code = async (query: string) => {
      const res = await t.call(`/api/sessions${query}`);
      return [res.status, ((await res.json()) as { error: { code: string } }).error.code];
    };
    expect(await code("?limit=0")).toEqual([400, "invalid_query"]);
    expect(await code("?limit=201")).toEqual([400, "invalid_query"]);
    expect(await code("?limit=ten")).toEqual([400, "invalid_query"]);
    expect(await code("?limit=%2B5")).toEqual([400, "invalid_query"]);
    expect(await code("?limit=99999999999999999")).toEqual([400, "invalid_query"]);
    expect(await code("?sort=asc")).toEqual([400, "invalid_query"]);
    // Leading zeros are the same number (five digits were refused as out of range).
    const made = [await t.create("a"), await t.create("b"), await t.create("c")];
    expect((await t.list("?limit=00002")).items.map((s) => s.id)).toEqual([made[2], made[1]]);
    expect(await code("?cursor=nonsense")).toEqual([400, "invalid_cursor"]);
    expect(await code(`?cursor=${btoa(JSON.stringify(["yesterday", "s_x"]))}`)).toEqual([400, "invalid_cursor"]);
  });
});
