import { describe, expect, it } from "vitest";
import { SearchText } from "../../../src/workspace/search/search-text";
import { SearchTextCache } from "../../../src/workspace/search/text-cache";

const text = (s: string, bytes = s.length) => new SearchText([s], bytes);

describe("SearchTextCache", () => {
  it("keeps texts and binary markers, counting each text's string bytes", () => {
    const cache = new SearchTextCache(100);
    const search = cache.beginSearch();
    cache.set("a", text("x".repeat(10)), search);
    cache.set("b", text("é€".repeat(5), 20), search);
    cache.set("bin", null, search);
    expect([cache.get("a", search), cache.get("b", search), cache.get("bin", search), cache.get("missing", search)]).toEqual([
      text("x".repeat(10)),
      text("é€".repeat(5), 20),
      null,
      undefined,
    ]);
    expect(cache.bytes).toBe(10 + 20);
  });

  it("lends part of its budget to other work: the oldest entries leave, even the running search's, until it is given back", () => {
    const cache = new SearchTextCache(40);
    const search = cache.beginSearch();
    for (const key of ["a", "b", "c", "d"]) cache.set(key, text(key.repeat(10)), search);
    cache.get("a", search);
    cache.reserve(20);
    expect([cache.capacity, cache.bytes, cache.room]).toEqual([20, 20, 0]);
    expect(["a", "b", "c", "d"].map((k) => cache.peek(k) !== undefined)).toEqual([true, false, false, true]);
    // Nothing more fits while lent: not by evicting (the search used both), not ahead of a search.
    cache.set("e", text("e".repeat(10)), search);
    expect([cache.peek("e"), cache.addIfRoom("f", text("f".repeat(10))), cache.bytes]).toEqual([undefined, false, 20]);
    cache.reserve(100);
    expect([cache.capacity, cache.bytes, cache.room, cache.peek("a"), cache.peek("d")]).toEqual([0, 0, 0, undefined, undefined]);
    cache.reserve(0);
    expect([cache.capacity, cache.room, cache.addIfRoom("f", text("f".repeat(10))), cache.bytes]).toEqual([40, 40, true, 10]);
  });

  it("holds at most its count of entries, empty and binary ones included (each costs memory its text does not show)", () => {
    const cache = new SearchTextCache(1000, 3);
    const first = cache.beginSearch();
    for (const key of ["a", "b"]) cache.set(key, text(""), first);
    cache.set("bin", null, first);
    const second = cache.beginSearch();
    cache.set("c", text("c"), second);
    expect(["a", "b", "bin", "c"].map((k) => cache.peek(k) !== undefined)).toEqual([false, true, true, true]);
    // A search does not evict what it used itself; a warm-up never evicts.
    cache.get("b", second);
    cache.get("bin", second);
    cache.set("d", text("d"), second);
    expect([cache.peek("d"), cache.addIfRoom("e", text("e")), cache.addIfRoom("c", text("cc"))]).toEqual([undefined, false, true]);
    expect(cache.bytes).toBe(2);
  });

  it("evicts the least recently used entries of earlier searches", () => {
    const cache = new SearchTextCache(30);
    const first = cache.beginSearch();
    for (const key of ["a", "b", "c"]) cache.set(key, text(key.repeat(10)), first);
    const second = cache.beginSearch();
    cache.get("a", second);
    cache.set("d", text("d".repeat(10)), second);
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
        else cache.set(key, text(key.repeat(10)), search);
      }
      return hits;
    };
    expect([scan(), scan(), scan()]).toEqual([0, 3, 3]);
  });

  it("adds a warm-up's texts only into free room: it never evicts, replaces a partial entry, and says when it is full", () => {
    const cache = new SearchTextCache(30);
    const search = cache.beginSearch();
    cache.set("used", text("u".repeat(10)), search);
    cache.set("partial", text("p".repeat(5)), search);
    expect(cache.room).toBe(15);
    expect(cache.addIfRoom("partial", text("P".repeat(12)))).toBe(true);
    expect([cache.bytes, cache.room]).toEqual([22, 8]);
    expect(cache.addIfRoom("w1", text("w".repeat(8)))).toBe(true);
    expect(cache.addIfRoom("w2", text("x"))).toBe(false);
    expect(cache.addIfRoom("bin", null)).toBe(true);
    const next = cache.beginSearch();
    expect(["used", "partial", "w1", "w2", "bin"].map((k) => cache.peek(k))).toEqual([
      text("u".repeat(10)),
      text("P".repeat(12)),
      text("w".repeat(8)),
      undefined,
      null,
    ]);
    // peek is not a use: a search's inserts evict "used" first (the least recently used).
    cache.set("new", text("n".repeat(10)), next);
    expect(["used", "partial", "w1", "new"].map((k) => cache.peek(k) !== undefined)).toEqual([false, true, true, true]);
  });

  it("leaves a warm-up's text over the entry limit out without calling the cache full", () => {
    const cache = new SearchTextCache(64 * 1024 * 1024);
    expect(cache.addIfRoom("huge", text("h", 9 * 1024 * 1024))).toBe(true);
    expect([cache.peek("huge"), cache.bytes]).toEqual([undefined, 0]);
  });
});
