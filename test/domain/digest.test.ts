import { describe, expect, it } from "vitest";
import { Sha256Stream } from "../../src/api/sha256-stream";
import { hexOf, sha256Hex } from "../../src/domain";

// FIPS 180-2 test vectors.
const ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
const EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

describe("digests", () => {
  it("writes bytes as two lower-case hex digits each, leading zeros kept", () => {
    expect(hexOf(new Uint8Array([0, 1, 15, 16, 171, 255]))).toBe("00010f10abff");
    expect(hexOf(new Uint8Array([0, 255]).buffer)).toBe("00ff");
    expect(hexOf(new Uint8Array(0))).toBe("");
  });

  it("hashes a string as its UTF-8 bytes, and bytes as given", async () => {
    expect(await sha256Hex("abc")).toBe(ABC);
    expect(await sha256Hex(new TextEncoder().encode("abc"))).toBe(ABC);
    expect(await sha256Hex("")).toBe(EMPTY);
    expect(await sha256Hex("é")).toBe(await sha256Hex(new Uint8Array([0xc3, 0xa9])));
  });

  it("hashes pieces as the whole they make", async () => {
    const hash = new Sha256Stream();
    for (const piece of ["a", "", "bc"]) await hash.add(new TextEncoder().encode(piece));
    await hash.finish();
    expect(await hash.hex).toBe(ABC);
  });

  it("rejects the hex of an aborted hash without an unhandled rejection", async () => {
    const hash = new Sha256Stream();
    await hash.add(new Uint8Array([1]));
    await hash.abort(new Error("refused"));
    await expect(hash.hex).rejects.toThrow();
  });
});
