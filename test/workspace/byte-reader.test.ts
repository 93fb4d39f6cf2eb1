import { describe, expect, it } from "vitest";
import { ByteReader } from "../../src/workspace/byte-reader";
import { peekStream } from "../../src/workspace/streams";
import { decode, streamOf, text } from "./archives";

describe("ByteReader", () => {
  it("reads, skips and takes exact byte counts across chunk boundaries", async () => {
    const reader = new ByteReader(streamOf(text("0123456789abcdef"), 3));
    expect(decode(await reader.read(4))).toBe("0123");
    await reader.skip(5);
    expect(reader.position).toBe(9);
    expect(await new Response(reader.take(4)).text()).toBe("9abc");
    expect(decode(await reader.read(3))).toBe("def");
    await expect(reader.read(1)).rejects.toThrow("stream ended early");
  });
});

describe("peekStream", () => {
  it("returns the first bytes and a stream that still yields everything", async () => {
    const { head, stream } = await peekStream(streamOf(text("hello world"), 4), 6);
    expect(decode(head)).toBe("hello ");
    expect(await new Response(stream).text()).toBe("hello world");
  });

  it("handles streams shorter than the peek", async () => {
    const { head, stream } = await peekStream(streamOf(text("hi"), 4), 6);
    expect(decode(head)).toBe("hi");
    expect(await new Response(stream).text()).toBe("hi");
  });
});
