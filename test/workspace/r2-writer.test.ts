import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { R2ObjectWriter } from "../../src/workspace/r2-writer";
import { keysUnder, text } from "./archives";

const MIB = 1024 * 1024;

describe("R2ObjectWriter", () => {
  it("writes a small object with a single put", async () => {
    const writer = new R2ObjectWriter(env.STORE, "writer/small");
    await writer.write(text("hello "));
    await writer.write(text("world"));
    expect(writer.length).toBe(11);
    expect(await writer.close()).toBe(11);
    expect(await (await env.STORE.get("writer/small"))!.text()).toBe("hello world");
  });

  it("switches to a multipart upload of equal parts past one part", async () => {
    const writer = new R2ObjectWriter(env.STORE, "writer/big", 5 * MIB);
    const chunk = new Uint8Array(MIB + 3);
    for (let i = 0; i < 11; i++) {
      chunk.fill(i);
      await writer.write(chunk);
    }
    const length = 11 * (MIB + 3);
    expect(await writer.close()).toBe(length);
    const object = await env.STORE.get("writer/big");
    expect(object!.size).toBe(length);
    const bytes = new Uint8Array(await object!.arrayBuffer());
    // Byte k belongs to chunk floor(k / (MIB + 3)): check across both part boundaries.
    for (const k of [0, 5 * MIB - 1, 5 * MIB, 10 * MIB, length - 1]) expect(bytes[k]).toBe(Math.floor(k / (MIB + 3)));
  });

  it("abort removes a half-written multipart object and a finished small one", async () => {
    const big = new R2ObjectWriter(env.STORE, "writer/aborted-big", 5 * MIB);
    await big.write(new Uint8Array(6 * MIB));
    await big.abort();
    const small = new R2ObjectWriter(env.STORE, "writer/aborted-small");
    await small.write(text("x"));
    await small.close();
    await small.abort();
    expect(await keysUnder(env.STORE, "writer/aborted")).toEqual([]);
  });
});
