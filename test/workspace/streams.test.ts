import { describe, expect, it } from "vitest";
import { pipeThroughOnDemand } from "../../src/workspace/streams";
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
