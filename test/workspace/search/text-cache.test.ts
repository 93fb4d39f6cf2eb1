import { describe, expect, it } from "vitest";
import { SearchTextCache } from "../../../src/workspace/search/text-cache";

describe("SearchTextCache", () => {
  it("keeps text and binary markers, counting ASCII at 1 byte a character and anything else at 2", () => {
    const cache = new SearchTextCache(100);
    const search = cache.beginSearch();
    cache.set("a", "x".repeat(10), 10, search);
    cache.set("b", "é".repeat(10), 20, search);
    cache.set("bin", null, 5000, search);
    expect([cache.get("a", search), cache.get("b", search), cache.get("bin", search), cache.get("missing", search)]).toEqual([
      "x".repeat(10),
      "é".repeat(10),
      null,
      undefined,
    ]);
    expect(cache.bytes).toBe(10 + 20);
  });

  it("evicts the least recently used entries of earlier searches", () => {
    const cache = new SearchTextCache(30);
    const first = cache.beginSearch();
    for (const key of ["a", "b", "c"]) cache.set(key, key.repeat(10), 10, first);
    const second = cache.beginSearch();
    cache.get("a", second);
    cache.set("d", "d".repeat(10), 10, second);
    expect(["a", "b", "c", "d"].map((k) => cache.get(k, second) !== undefined)).toEqual([true, false, true, true]);
  });

  it("does not let one search evict what it used itself: a tree larger than the cache keeps a stable part cached", () => {
    const cache = new SearchTextCache(30);
    const keys = ["a", "b", "c", "d", "e"];
    const scan = () => {
      const search = cache.beginSearch();
      let hits = 0;
      for (const key of keys) {
        if (cache.get(key, search) !== undefined) hits++;
        else cache.set(key, key.repeat(10), 10, search);
      }
      return hits;
    };
    expect([scan(), scan(), scan()]).toEqual([0, 3, 3]);
  });
});
