import { describe, expect, it } from "vitest";
import { BINARY_SNIFF_BYTES, decodeText, isBinary, textOf } from "../../src/workspace/text";

const withNulAt = (at: number) => {
  const bytes = new Uint8Array(at + 1).fill(0x61);
  bytes[at] = 0;
  return bytes;
};

describe("telling text from binary", () => {
  it("a NUL among the first 8000 bytes makes a file binary; a later one does not", () => {
    expect(BINARY_SNIFF_BYTES).toBe(8000);
    expect([isBinary(withNulAt(0)), isBinary(withNulAt(7999)), isBinary(withNulAt(8000))]).toEqual([true, true, false]);
    expect([textOf(withNulAt(7999)), textOf(withNulAt(8000))?.length]).toEqual([null, 8001]);
  });

  it("textOf refuses invalid UTF-8, which the tools' lenient decodeText replaces", () => {
    const invalid = new Uint8Array([0x61, 0xff, 0x62]);
    expect([isBinary(invalid), textOf(invalid), decodeText(invalid)]).toEqual([false, null, "a\uFFFDb"]);
  });

  it("textOf keeps a BOM, decodeText drops it", () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, 0x78]);
    expect([textOf(bom), decodeText(bom)]).toEqual(["\uFEFFx", "x"]);
  });
});
