import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { deleteUnder } from "../../src/r2";

async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const listed = await env.STORE.list({ prefix, cursor });
    keys.push(...listed.objects.map((o) => o.key));
    cursor = listed.truncated ? listed.cursor : undefined;
  } while (cursor);
  return keys;
}

describe("deleteUnder", () => {
  it("deletes every key under the prefix across listing pages, and nothing beside it", async () => {
    // 1,003 keys: more than one listing page (1,000) and one batch delete.
    const under = Array.from({ length: 1003 }, (_, i) => `du/a/${String(i).padStart(4, "0")}`);
    const beside = ["du/a", "du/ab/0", "du/b/0"];
    for (let i = 0; i < under.length; i += 50) await Promise.all(under.slice(i, i + 50).map((k) => env.STORE.put(k, "x")));
    await Promise.all(beside.map((k) => env.STORE.put(k, "y")));
    expect((await keysUnder("du/a/")).length).toBe(1003);

    await deleteUnder(env.STORE, "du/a/");

    expect(await keysUnder("du/a/")).toEqual([]);
    expect(await keysUnder("du/")).toEqual(["du/a", "du/ab/0", "du/b/0"]);
    // Nothing left to delete is not an error.
    await deleteUnder(env.STORE, "du/a/");
    expect(await keysUnder("du/")).toEqual(["du/a", "du/ab/0", "du/b/0"]);
  });
});
