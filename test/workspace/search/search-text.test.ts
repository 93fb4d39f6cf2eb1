import { describe, expect, it } from "vitest";
import { lines } from "../../../src/tools/grep-matcher";
import { SEARCH_PIECE_BYTES, searchTextOf } from "../../../src/workspace/search/search-text";
import { decodeText } from "../../../src/workspace/text";
import { random, randomFile } from "./helpers";

const encode = (s: string) => new TextEncoder().encode(s);

describe("searchTextOf", () => {
  it("cuts an ASCII file into pieces at line breaks, at 1 byte a character", () => {
    const small = searchTextOf(encode("a\nb\n"));
    expect([small.selected("all"), small.bytes]).toEqual([["a\nb\n"], 4]);
    const line = `${"x".repeat(99)}\n`;
    const big = searchTextOf(encode(line.repeat(400)));
    expect(big.selected("all").join("")).toBe(line.repeat(400));
    expect(big.selected("all").length).toBe(3);
    expect(big.selected("all").every((p) => p.endsWith("\n"))).toBe(true);
    expect(big.bytes).toBe(40_000);
  });

  it("numbers lines across pieces as lines() does", () => {
    const source = Array.from(
      { length: 3000 },
      (_, i) => `line ${i} ${"-".repeat(20)}${i % 7 === 0 ? "\r" : ""}${i === 1500 ? " é" : ""}`,
    ).join("\n");
    const text = searchTextOf(encode(source));
    expect(text.selected("all").length).toBeGreaterThan(2);
    const all = lines(source);
    for (const n of [0, 1, 999, 1500, 2999]) expect(text.line(n)).toBe(all[n]);
    expect(text.line(3000)).toBeUndefined();
    const k = text.selected("all").findIndex((p) => p.includes("line 2000 "));
    expect(text.lineNumber(k, text.selected("all")[k]!.indexOf("line 2000 "))).toBe(2000);
  });

  it("numbers every line start of every piece right, asked in any order (each answer counts on from the last within a piece)", () => {
    const source = Array.from({ length: 3000 }, (_, i) => `${i} ${"-".repeat(i % 40)}`).join("\n");
    const text = searchTextOf(encode(source));
    const pieces = text.selected("all");
    expect(pieces.length).toBeGreaterThan(2);
    const starts: [number, number, number][] = []; // piece, offset, line
    let line = 0;
    pieces.forEach((piece, k) => {
      for (let at = 0; at < piece.length; at = piece.indexOf("\n", at) + 1 || piece.length) starts.push([k, at, line++]);
    });
    expect(line).toBe(3000);
    const asked = (order: [number, number, number][]) => order.map(([k, at]) => text.lineNumber(k, at));
    expect(asked(starts)).toEqual(starts.map(([, , n]) => n));
    const backwards = [...starts].reverse();
    expect(asked(backwards)).toEqual(backwards.map(([, , n]) => n));
    const shuffled = starts
      .map((s, i) => [s, (i * 7919) % starts.length] as const)
      .sort((a, b) => a[1] - b[1])
      .map(([s]) => s);
    expect(asked(shuffled)).toEqual(shuffled.map(([, , n]) => n));
    // An offset inside a line numbers the line that holds it.
    const [k, at, n] = starts[1234]!;
    expect([text.lineNumber(k, at + 1), text.lineNumber(k, at)]).toEqual([n, n]);
  });

  it("cuts a file with wide characters at line breaks, so that only the pieces holding them cost 2 bytes a character", () => {
    const ascii = `${"x".repeat(99)}\n`.repeat(400); // 40,000 bytes
    const text = searchTextOf(encode(`${ascii}one — dash\n${ascii}`));
    expect(text.selected("all").join("")).toBe(`${ascii}one — dash\n${ascii}`);
    expect(text.selected("all").every((p, i) => i === text.selected("all").length - 1 || p.endsWith("\n"))).toBe(true);
    expect(text.selected("all").every((p) => encode(p).byteLength < SEARCH_PIECE_BYTES + 100)).toBe(true);
    const wide = text.selected("all").filter((p) => p.includes("—"));
    expect(wide).toHaveLength(1);
    expect(text.bytes).toBe(text.selected("all").join("").length + wide[0]!.length);
  });

  it("counts Latin-1 characters at 1 byte, and a file decoded with U+FFFD at 2", () => {
    expect(searchTextOf(encode("café\n")).bytes).toBe(5);
    expect(searchTextOf(new Uint8Array([0x61, 0xff, 0x0a])).bytes).toBe(6);
  });

  it("drops a leading BOM only, as decodeText does", () => {
    const bytes = encode(`\uFEFFfirst\n${"y".repeat(SEARCH_PIECE_BYTES)}\n\uFEFFlater\n`);
    expect(searchTextOf(bytes).selected("all").join("")).toBe(decodeText(bytes));
    expect(decodeText(bytes).startsWith("first")).toBe(true);
  });

  it("joins to decodeText and splits into the same lines, for generated files with invalid bytes, BOMs and CRLF", () => {
    const next = random(5);
    for (let i = 0; i < 500; i++) {
      // Long enough to be cut: repeat a generated file.
      const unit = randomFile(next);
      const bytes = new Uint8Array(unit.byteLength * 900);
      for (let at = 0; at < bytes.byteLength; at += unit.byteLength) bytes.set(unit, at);
      const text = searchTextOf(bytes);
      const expected = decodeText(bytes);
      expect(text.selected("all").join("")).toBe(expected);
      expect(text.selected("all").flatMap(lines)).toEqual(lines(expected));
    }
  });
});
