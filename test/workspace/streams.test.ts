import { describe, expect, it } from "vitest";
import { pipeThroughOnDemand, textStream, withEndMark, withoutEndMark } from "../../src/workspace/streams";
import { gzip } from "./archives";

const MIB = 1024 * 1024;

/** About 4 MiB of source-like text gzipped, served in 4 KiB chunks that count how many were pulled. */
function countedGzip() {
  const words = ["const", "let", "return", "function", "=>", "if", "else", "import", "export", "await", "{", "}", ";", "\n"];
  let seed = 7;
  const text: string[] = [];
  for (let size = 0; size < 4 * MIB; ) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const word = `${words[seed % words.length]}${seed % 97} `;
    text.push(word);
    size += word.length;
  }
  const plain = new TextEncoder().encode(text.join(""));
  const compressed = gzip(plain);
  const source = { pulled: 0, total: compressed.byteLength, plainBytes: plain.byteLength };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (source.pulled >= compressed.byteLength) return controller.close();
        controller.enqueue(compressed.slice(source.pulled, source.pulled + 4096));
        source.pulled += 4096;
      },
    },
    { highWaterMark: 0 },
  );
  return { source, stream };
}

describe("textStream", () => {
  /** Yields `parts`, counting how many were asked for. */
  function counted(parts: string[]) {
    const asked = { count: 0 };
    async function* gen() {
      for (const part of parts) {
        asked.count++;
        yield part;
      }
    }
    return { asked, gen: gen() };
  }

  it("joins small parts into chunks of at least 64 Ki characters, asking for parts only as the reader reads", async () => {
    // 56,001 one-line diffs of about 100 bytes: one chunk each made /changes slow enough for local workerd to drop the connection (hunt 63).
    const parts = Array.from({ length: 2000 }, (_, i) => `${String(i).padStart(99, "-")}\n`);
    const { asked, gen } = counted(parts);
    const reader = (await textStream(gen)).getReader();
    expect(asked.count).toBe(1);
    const sizes: number[] = [];
    let text = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (sizes.length === 0) expect(asked.count).toBe(656);
      sizes.push(value.byteLength);
      text += new TextDecoder().decode(value);
    }
    expect(sizes).toEqual([65_600, 65_600, 65_600, 3_200]);
    expect(text).toBe(parts.join(""));
  });

  it("cuts a part larger than 1 MiB into chunks of 1 MiB; a part past 64 Ki characters is a chunk of its own", async () => {
    const big = "x".repeat(2.5 * 1024 * 1024);
    const reader = (await textStream(counted([big, "tail"]).gen)).getReader();
    const sizes: number[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) sizes.push(r.value.byteLength);
    expect(sizes).toEqual([1024 * 1024, 1024 * 1024, 0.5 * 1024 * 1024, 4]);
  });
});

describe("pipeThroughOnDemand", () => {
  it("feeds a native DecompressionStream only as fast as its output is read", async () => {
    const { source, stream } = countedGzip();
    const reader = pipeThroughOnDemand(stream, new DecompressionStream("gzip")).getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    // One or two 4 KiB chunks in, not the whole compressed body (a plain pipe takes all of it).
    expect(source.pulled).toBeLessThanOrEqual(2 * 4096);
    expect(source.total).toBeGreaterThan(4 * 4096);
    let bytes = first.value!.byteLength;
    for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.byteLength;
    expect(bytes).toBe(source.plainBytes);
  });

  it("surfaces a decompression failure (truncated gzip) on the returned stream", async () => {
    const compressed = gzip(new TextEncoder().encode("x".repeat(100_000) + "y".repeat(100_000)));
    const truncated = new Blob([compressed.subarray(0, compressed.byteLength - 10)]).stream();
    const error = await new Response(pipeThroughOnDemand(truncated, new DecompressionStream("gzip"))).arrayBuffer().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
  });

  it("surfaces a source failure on the returned stream", async () => {
    const failing = new ReadableStream<Uint8Array>({ pull: (controller) => controller.error(new RangeError("source broke")) });
    const error = await new Response(pipeThroughOnDemand(failing, new DecompressionStream("gzip"))).arrayBuffer().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toEqual(new RangeError("source broke"));
  });
});

describe("withEndMark / withoutEndMark", () => {
  const streamOf = (chunks: Uint8Array[], error?: Error) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        if (error) controller.error(error);
        else controller.close();
      },
    });
  const text = (s: string) => new TextEncoder().encode(s);
  /** A stream's bytes cut into pieces of `size` (the mark may arrive split). */
  const rechunk = async (stream: ReadableStream<Uint8Array>, size: number) => {
    const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
    return streamOf(Array.from({ length: Math.ceil(bytes.byteLength / size) }, (_, i) => bytes.slice(i * size, (i + 1) * size)));
  };

  it("gives back exactly the marked stream's bytes, however the mark arrives cut", async () => {
    for (const size of [1, 3, 7, 16, 1000]) {
      const marked = await rechunk(withEndMark(streamOf([text("diff --git a/x b/x\n"), text("+y\n")])), size);
      expect(await new Response(withoutEndMark(marked)).text()).toBe("diff --git a/x b/x\n+y\n");
    }
    expect(await new Response(withoutEndMark(withEndMark(streamOf([])))).text()).toBe("");
  });

  it("errors when the stream ends without its mark: cut off, or an error that reached the reader as an end", async () => {
    const cut = async (size: number) => {
      const bytes = new Uint8Array(await new Response(withEndMark(streamOf([text("abc\n".repeat(10))]))).arrayBuffer());
      return streamOf([bytes.slice(0, bytes.byteLength - size)]);
    };
    let told = 0;
    for (const missing of [1, 5, 15, 40]) {
      await expect(new Response(withoutEndMark(await cut(missing), () => told++)).text()).rejects.toThrow(
        "the stream broke off before its end",
      );
    }
    await expect(new Response(withoutEndMark(streamOf([text("a")], new Error("lost")), () => told++)).text()).rejects.toThrow("lost");
    expect(told).toBe(5);
    await expect(new Response(withEndMark(streamOf([text("a")], new Error("read failed")))).text()).rejects.toThrow("read failed");
  });
});

/** A body that sends one chunk, then waits (a slow export): the client is reading when it hangs up. */
function slowBody(): { stream: ReadableStream<Uint8Array>; cancelled: Promise<unknown> } {
  let cancelled!: (reason: unknown) => void;
  const done = new Promise<unknown>((resolve) => (cancelled = resolve));
  let sent = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!sent) {
          sent = true;
          return controller.enqueue(new TextEncoder().encode('{"a":1}\n'.repeat(10)));
        }
        await new Promise(() => {}); // the next segment is slow to come
      },
      cancel(reason) {
        cancelled(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, cancelled: done };
}

describe("withoutEndMark and a client that hangs up", () => {
  it("a download the client cancels mid-way is not logged as broken off", async () => {
    const { stream, cancelled } = slowBody();
    let broken = 0;
    const body = withoutEndMark(withEndMark(stream), () => broken++);
    const reader = body.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    // The HTTP sink reads on; the client disconnects while that read waits.
    const pending = reader.read().catch(() => null);
    await new Promise((r) => setTimeout(r, 10));
    await reader.cancel(new Error("client disconnected"));
    await cancelled;
    await pending;
    await new Promise((r) => setTimeout(r, 10));
    expect(broken).toBe(0);
  });
});
