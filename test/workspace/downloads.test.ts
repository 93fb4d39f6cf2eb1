import { describe, expect, it } from "vitest";
import { DOWNLOAD_STALL_MS, MAX_DOWNLOADS_PER_SESSION, MAX_STALLED_DOWNLOADS_PER_ISOLATE } from "../../src/domain/limits";
import { Downloads, isolateStalledDownloads } from "../../src/workspace/downloads";
import { StalledStreams } from "../../src/workspace/stalled-streams";

const encoder = new TextEncoder();
const encode = (lines: string[]) => encoder.encode(lines.map((l) => `${l}\n`).join(""));

/** A body of `chunks`, recording whether it was cancelled; it fails with `fail` after them. */
function source(chunks: string[][], fail?: Error) {
  const state = { cancelled: false };
  let next = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (next < chunks.length) return controller.enqueue(encode(chunks[next++]!));
        if (fail) return controller.error(fail);
        controller.close();
      },
      cancel() {
        state.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

/** A download as the session starts it: its place taken, its body served. */
function download(downloads: Downloads, chunks: string[][], fail?: Error) {
  expect(downloads.take()).toBe(true);
  const { stream, state } = source(chunks, fail);
  return { body: downloads.serve(stream), state };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("Downloads", () => {
  it("serves at most MAX_DOWNLOADS_PER_SESSION (4) at once by default, and stalls after DOWNLOAD_STALL_MS (60 s)", () => {
    expect([MAX_DOWNLOADS_PER_SESSION, DOWNLOAD_STALL_MS]).toEqual([4, 60_000]);
    const downloads = new Downloads();
    expect([downloads.take(), downloads.take(), downloads.take(), downloads.take(), downloads.take()]).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
    downloads.giveBack();
    expect([downloads.take(), downloads.take()]).toEqual([true, false]);
  });

  it("says when a place frees for certain only once every place's client has read nothing for the grace (hunt 71)", async () => {
    const downloads = new Downloads(2, 3_000, new StalledStreams(8, "cut"), 100);
    const t0 = Date.now();
    const first = download(downloads, [["a"], ["b"]]);
    expect(downloads.retryAfterSeconds(t0)).toBeUndefined(); // the other place is free
    expect(downloads.take()).toBe(true); // taken, not served yet: it may be read at once
    expect(downloads.retryAfterSeconds(t0 + 200)).toBeUndefined();
    const second = { body: downloads.serve(source([["c"]]).stream) };
    // Both unread, but for less than the grace: they may still be read.
    expect(downloads.retryAfterSeconds(Date.now())).toBeUndefined();
    await sleep(150);
    // Unread past the grace: the first cutoff, 3 s after the first began to wait, rounded up.
    expect(downloads.retryAfterSeconds(t0 + 150)).toBe(3);
    expect(downloads.retryAfterSeconds(t0 + 1_100)).toBe(2);
    expect(downloads.retryAfterSeconds(t0 + 2_999)).toBe(1);
    // One read again: it may end any moment, so no certain time.
    const reader = first.body.getReader();
    expect(await reader.read()).toEqual({ done: false, value: encode(["a"]) });
    expect(downloads.retryAfterSeconds(Date.now())).toBeUndefined();
    await reader.cancel();
    await second.body.cancel();
  });

  it("a body read to its end gives its place back; its bytes are every chunk in order", async () => {
    const downloads = new Downloads(1, 10_000);
    const { body, state } = download(downloads, [["a", "b"], [], ["c"]]);
    expect(downloads.take()).toBe(false);
    expect(await new Response(body).text()).toBe("a\nb\nc\n");
    expect(state.cancelled).toBe(false);
    expect(downloads.take()).toBe(true);
  });

  it("a body its client cancels gives its place back and cancels its source", async () => {
    const downloads = new Downloads(1, 10_000);
    const { body, state } = download(downloads, [["a"], ["b"], ["c"]]);
    const reader = body.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("a\n");
    await reader.cancel();
    expect(state.cancelled).toBe(true);
    expect(downloads.take()).toBe(true);
  });

  it("a read that fails part-way errors the body and gives its place back", async () => {
    const downloads = new Downloads(1, 10_000);
    const { body } = download(downloads, [["a"], ["b"]], new Error("segment missing"));
    await expect(new Response(body).text()).rejects.toThrow("segment missing");
    expect(downloads.take()).toBe(true);
  });

  it("a body nobody reads is ended after the stall time: its place is given back and its source cancelled", async () => {
    const downloads = new Downloads(1, 50);
    const { body, state } = download(downloads, [["a"], ["b"], ["c"], ["d"], ["e"]]);
    const reader = body.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("a\n");
    await sleep(20);
    expect([downloads.take(), state.cancelled]).toEqual([false, false]);
    await sleep(100);
    expect(state.cancelled).toBe(true);
    expect(downloads.take()).toBe(true);
    // Ended with an error, not closed: the client never takes a cut-off body for a whole one.
    await expect(reader.read()).rejects.toThrow("the client read nothing for 50 ms");
  });

  it("a body whose last chunk its client has taken is over: it keeps no place and is never cut short, however long the client takes to read its end", async () => {
    const downloads = new Downloads(1, 30);
    const { body, state } = download(downloads, [["a"], ["b"]]);
    const reader = body.getReader();
    const decoder = new TextDecoder();
    expect(decoder.decode((await reader.read()).value)).toBe("a\n");
    expect(decoder.decode((await reader.read()).value)).toBe("b\n");
    // Past the stall time without the read that would see the end (a client draining its socket).
    await sleep(80);
    expect([downloads.take(), state.cancelled]).toEqual([true, false]);
    expect(await reader.read()).toEqual({ done: true, value: undefined });
  });

  it("a body never read at all is ended after the stall time too", async () => {
    const downloads = new Downloads(1, 30);
    const { body, state } = download(downloads, [["a"], ["b"]]);
    await sleep(80);
    expect([downloads.take(), state.cancelled]).toEqual([true, true]);
    await expect(new Response(body).text()).rejects.toThrow("the client read nothing for 30 ms");
  });

  it("a client that keeps reading is never stalled, however long the download lasts", async () => {
    const downloads = new Downloads(1, 40);
    const { body } = download(downloads, [["a"], ["b"], ["c"], ["d"]]);
    const reader = body.getReader();
    const got: string[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      got.push(new TextDecoder().decode(value));
      await sleep(25);
    }
    expect(got).toEqual(["a\n", "b\n", "c\n", "d\n"]);
    expect(downloads.take()).toBe(true);
  });

  it("downloads of all sessions in an isolate that read nothing past the grace count together: past the bound, the one stalled longest is cut short", async () => {
    expect([isolateStalledDownloads.max, MAX_STALLED_DOWNLOADS_PER_ISOLATE]).toEqual([8, 8]);
    const isolate = new StalledStreams(2, "more than 2 downloads went unread on this server and this one longest; download it again");
    const sessions = [new Downloads(4, 10_000, isolate, 20), new Downloads(4, 10_000, isolate, 20)];
    const first = download(sessions[0]!, [["a"]]);
    await sleep(5);
    const second = download(sessions[1]!, [["b"]]);
    const third = download(sessions[1]!, [["c"]]);
    expect(isolate.size).toBe(0);
    await sleep(60);
    // Three stalled, two allowed: the first, stalled longest, was cut short and gave its place back.
    expect([isolate.size, first.state.cancelled, second.state.cancelled, third.state.cancelled]).toEqual([2, true, false, false]);
    await expect(new Response(first.body).text()).rejects.toThrow(
      "more than 2 downloads went unread on this server and this one longest; download it again",
    );
    expect([sessions[0]!.take(), sessions[0]!.take(), sessions[0]!.take(), sessions[0]!.take(), sessions[0]!.take()]).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
    // The others are whole once read, and leave the bound as they are read.
    expect(await new Response(second.body).text()).toBe("b\n");
    expect(await new Response(third.body).text()).toBe("c\n");
    expect(isolate.size).toBe(0);
  });
});
