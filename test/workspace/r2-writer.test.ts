import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { R2ObjectWriter } from "../../src/workspace/r2-writer";
import { keysUnder, text } from "./archives";
import { hold, multipartLedger } from "./multipart-ledger";

const MIB = 1024 * 1024;
/** Parts this small are fine for uploads that are aborted; only complete() insists on 5 MiB. */
const SMALL_PART_BYTES = 1024;

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
    const ledger = multipartLedger();
    const writer = new R2ObjectWriter(ledger.bucket, "writer/big", 5 * MIB);
    const chunk = new Uint8Array(MIB + 3);
    for (let i = 0; i < 11; i++) {
      chunk.fill(i);
      await writer.write(chunk);
    }
    const length = 11 * (MIB + 3);
    expect(await writer.close()).toBe(length);
    expect(ledger.uploads).toEqual([{ key: "writer/big", uploadId: expect.any(String), parts: 3, outcome: "completed" }]);
    const object = await env.STORE.get("writer/big");
    expect(object!.size).toBe(length);
    const bytes = new Uint8Array(await object!.arrayBuffer());
    // Byte k belongs to chunk floor(k / (MIB + 3)): check across both part boundaries.
    for (const k of [0, 5 * MIB - 1, 5 * MIB, 10 * MIB, length - 1]) expect(bytes[k]).toBe(Math.floor(k / (MIB + 3)));
  });

  it("abort removes a half-written multipart object and a finished small one", async () => {
    const ledger = multipartLedger();
    const big = new R2ObjectWriter(ledger.bucket, "writer/aborted-big", 5 * MIB);
    await big.write(new Uint8Array(6 * MIB));
    await big.abort();
    const small = new R2ObjectWriter(ledger.bucket, "writer/aborted-small");
    await small.write(text("x"));
    await small.close();
    await small.abort();
    expect(await keysUnder(env.STORE, "writer/aborted")).toEqual([]);
    expect(ledger.outcomes()).toEqual([{ key: "writer/aborted-big", outcome: "aborted" }]);
    expect(await ledger.stillOpen()).toEqual([]);
  });

  it("abort while a part is uploading waits for the part, then aborts the upload", async () => {
    const ledger = multipartLedger();
    const writer = new R2ObjectWriter(ledger.bucket, "writer/part-in-flight", SMALL_PART_BYTES);
    // Fills two parts: the first has been uploaded, the second is still uploading when write() returns.
    await writer.write(new Uint8Array(2 * SMALL_PART_BYTES));
    await writer.abort();
    expect(ledger.uploads).toEqual([{ key: "writer/part-in-flight", uploadId: expect.any(String), parts: 2, outcome: "aborted" }]);
    expect(await ledger.stillOpen()).toEqual([]);
  });

  it("abort while R2 is still creating the multipart upload aborts that upload once it exists", async () => {
    const creating = hold();
    const ledger = multipartLedger(env.STORE, { holdCreate: creating });
    const writer = new R2ObjectWriter(ledger.bucket, "writer/create-race", SMALL_PART_BYTES);
    const writing = writer.write(new Uint8Array(SMALL_PART_BYTES)).catch(() => {});
    await creating.reached;
    const aborting = writer.abort();
    creating.release();
    await Promise.all([writing, aborting]);
    // No part went into the new upload, and the upload itself was aborted.
    expect(ledger.uploads).toEqual([{ key: "writer/create-race", uploadId: expect.any(String), parts: 0, outcome: "aborted" }]);
    expect(await ledger.stillOpen()).toEqual([]);
    expect(await keysUnder(env.STORE, "writer/create-race")).toEqual([]);
  });

  it("abort while close() is putting a small object removes the object, and close() fails", async () => {
    const putting = hold();
    const ledger = multipartLedger(env.STORE, { holdPut: putting });
    const writer = new R2ObjectWriter(ledger.bucket, "writer/put-race");
    await writer.write(text("x"));
    const closing = writer.close().then(
      () => "closed",
      (e: Error) => e.message,
    );
    await putting.reached;
    const aborting = writer.abort();
    putting.release();
    await aborting;
    expect(await closing).toBe("writing writer/put-race was aborted");
    expect(await keysUnder(env.STORE, "writer/put-race")).toEqual([]);
  });

  it("refuses writes and close after abort, and after close", async () => {
    const aborted = new R2ObjectWriter(env.STORE, "writer/after-abort");
    await aborted.abort();
    await expect(aborted.write(text("x"))).rejects.toThrow("writing writer/after-abort was aborted");
    await expect(aborted.close()).rejects.toThrow("writing writer/after-abort was aborted");
    const closed = new R2ObjectWriter(env.STORE, "writer/after-close");
    await closed.close();
    await expect(closed.write(text("x"))).rejects.toThrow("writing writer/after-close was finished");
    expect(await keysUnder(env.STORE, "writer/after-")).toEqual(["writer/after-close"]);
  });
});
