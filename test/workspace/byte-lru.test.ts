import { describe, expect, it } from "vitest";
import { ByteLru } from "../../src/workspace/byte-lru";

const bytes = (n: number) => new Uint8Array(n);

describe("ByteLru", () => {
  it("evicts the least recently used past its size, and never keeps a value over the entry limit", () => {
    const lru = new ByteLru(30, 15);
    for (const key of ["a", "b", "c"]) lru.set(key, bytes(10));
    lru.get("a");
    lru.set("d", bytes(10));
    lru.set("big", bytes(16));
    expect([["a", "b", "c", "d", "big"].map((k) => lru.get(k)?.byteLength ?? 0), lru.size]).toEqual([[10, 0, 10, 10, 0], 30]);
  });

  it("lends part of its budget: the oldest leave until the rest fits, larger values are refused until it is given back", () => {
    const lru = new ByteLru(30, 15);
    for (const key of ["a", "b", "c"]) lru.set(key, bytes(10));
    lru.reserve(15);
    expect([["a", "b", "c"].map((k) => lru.get(k) !== undefined), lru.size]).toEqual([[false, false, true], 10]);
    lru.set("d", bytes(10));
    expect([lru.get("c"), lru.get("d")?.byteLength, lru.size]).toEqual([undefined, 10, 10]);
    lru.reserve(30);
    lru.set("e", bytes(1));
    expect([lru.get("d"), lru.get("e"), lru.size]).toEqual([undefined, undefined, 0]);
    lru.reserve(0);
    lru.set("e", bytes(15));
    expect(lru.size).toBe(15);
  });
});
