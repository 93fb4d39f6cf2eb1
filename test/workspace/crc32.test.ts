import { describe, expect, it } from "vitest";
import { crc32 } from "../../src/workspace/crc32";
import { centralDirectory, noise, text, zip, zipWithDataDescriptors } from "./archives";

describe("crc32", () => {
  it("matches the IEEE check values", () => {
    expect(crc32(new Uint8Array(0))).toBe(0);
    expect(crc32(text("123456789"))).toBe(0xcbf43926);
    expect(crc32(text("The quick brown fox jumps over the lazy dog"))).toBe(0x414fa339);
    expect(crc32(new Uint8Array(32))).toBe(0x190a55ad);
    expect(crc32(new Uint8Array(32).fill(0xff))).toBe(0xff6cab0b);
  });

  it("gives the same value chunk by chunk as in one go", () => {
    const bytes = noise(100_000);
    let running = 0;
    for (let at = 0; at < bytes.byteLength; at += 777) running = crc32(bytes.subarray(at, at + 777), running);
    expect(running).toBe(crc32(bytes));
    expect(crc32(new Uint8Array(0), running)).toBe(running);
  });

  it("agrees with the CRC-32 fflate writes into zips, stored, deflated and with data descriptors", () => {
    const files = { "a.bin": noise(70_000, 1), "b.txt": text("hello\n".repeat(5000)), empty: new Uint8Array(0) };
    const plain = zip({ "a.bin": [files["a.bin"], { level: 0 }], "b.txt": [files["b.txt"], { level: 9 }], empty: files.empty });
    const streamed = zipWithDataDescriptors({
      "a.bin": { data: files["a.bin"], level: 0 },
      "b.txt": { data: files["b.txt"], level: 6 },
      empty: { data: files.empty, level: 6 },
    });
    const expected = Object.entries(files).map(([name, data]) => ({ name, crc32: crc32(data) }));
    expect(centralDirectory(plain).map(({ name, crc32 }) => ({ name, crc32 }))).toEqual(expected);
    expect(centralDirectory(streamed).map(({ name, crc32 }) => ({ name, crc32 }))).toEqual(expected);
    expect(expected[2]!.crc32).toBe(0);
  });
});
