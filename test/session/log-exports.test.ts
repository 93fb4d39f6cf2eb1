import { describe, expect, it } from "vitest";
import { EXPORT_STALL_MS, MAX_EXPORTS_PER_SESSION } from "../../src/domain/limits";
import { LogExports } from "../../src/session/log-exports";

const encoder = new TextEncoder();
const encode = (lines: string[]) => encoder.encode(lines.map((l) => `${l}\n`).join(""));

/** A log read in `batches`, recording whether it was closed early (`return`). */
function log(batches: string[][], fail?: Error) {
  const state = { returned: false };
  async function* read(): AsyncGenerator<string[]> {
    try {
      for (const batch of batches) yield batch;
      if (fail) throw fail;
    } finally {
      state.returned = true;
    }
  }
  return { batches: read(), state };
}

/** A download as the session starts it: its place taken, its first batch read. */
async function download(exports: LogExports, batches: string[][], fail?: Error) {
  expect(exports.take()).toBe(true);
  const read = log(batches, fail);
  const first = await read.batches.next();
  return { body: exports.body(first, read.batches, encode), state: read.state };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("LogExports", () => {
  it("serves at most MAX_EXPORTS_PER_SESSION (4) at once by default, and stalls after EXPORT_STALL_MS (60 s)", () => {
    expect([MAX_EXPORTS_PER_SESSION, EXPORT_STALL_MS]).toEqual([4, 60_000]);
    const exports = new LogExports();
    expect([exports.take(), exports.take(), exports.take(), exports.take(), exports.take()]).toEqual([true, true, true, true, false]);
    exports.giveBack();
    expect([exports.take(), exports.take()]).toEqual([true, false]);
  });

  it("a body read to its end gives its place back; its bytes are every batch in order", async () => {
    const exports = new LogExports(1, 10_000);
    const { body, state } = await download(exports, [["a", "b"], [], ["c"]]);
    expect(exports.take()).toBe(false);
    expect(await new Response(body).text()).toBe("a\nb\nc\n");
    expect(state.returned).toBe(true);
    expect(exports.take()).toBe(true);
  });

  it("a body its client cancels gives its place back and closes the log read", async () => {
    const exports = new LogExports(1, 10_000);
    const { body, state } = await download(exports, [["a"], ["b"], ["c"]]);
    const reader = body.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("a\n");
    await reader.cancel();
    expect(state.returned).toBe(true);
    expect(exports.take()).toBe(true);
  });

  it("a read that fails part-way errors the body and gives its place back", async () => {
    const exports = new LogExports(1, 10_000);
    const { body } = await download(exports, [["a"], ["b"]], new Error("segment missing"));
    await expect(new Response(body).text()).rejects.toThrow("segment missing");
    expect(exports.take()).toBe(true);
  });

  it("a body nobody reads is ended after the stall time: its place is given back and the log read closed", async () => {
    const exports = new LogExports(1, 50);
    const { body, state } = await download(exports, [["a"], ["b"], ["c"], ["d"], ["e"]]);
    const reader = body.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("a\n");
    await sleep(20);
    expect([exports.take(), state.returned]).toEqual([false, false]);
    await sleep(100);
    expect(state.returned).toBe(true);
    expect(exports.take()).toBe(true);
    // Ended with an error, not closed: the client never takes a cut-off body for a whole one.
    await expect(reader.read()).rejects.toThrow("the client read nothing for 50 ms");
  });

  it("a body never read at all is ended after the stall time too", async () => {
    const exports = new LogExports(1, 30);
    const { body, state } = await download(exports, [["a"], ["b"]]);
    await sleep(80);
    expect([exports.take(), state.returned]).toEqual([true, true]);
    await expect(new Response(body).text()).rejects.toThrow("the client read nothing for 30 ms");
  });

  it("a client that keeps reading is never stalled, however long the download lasts", async () => {
    const exports = new LogExports(1, 40);
    const { body } = await download(exports, [["a"], ["b"], ["c"], ["d"]]);
    const reader = body.getReader();
    const got: string[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      got.push(new TextDecoder().decode(value));
      await sleep(25);
    }
    expect(got).toEqual(["a\n", "b\n", "c\n", "d\n"]);
    expect(exports.take()).toBe(true);
  });
});
