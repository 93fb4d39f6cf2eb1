import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { HarnessError } from "../../src/domain";
import { UPLOAD_MIN_BYTES_PER_WINDOW, UPLOAD_PACE_WINDOW_MS } from "../../src/domain/limits";
import { ingestSlots } from "../../src/workspace/ingest-slots";
import { pacedUpload } from "../../src/workspace/upload-pace";
import { keysUnder, tarOf } from "./archives";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A body that sends `chunks` (each after `everyMs`), then ends or, with `stall`, sends nothing more until cancelled. */
function slowBody(chunks: Uint8Array[], everyMs: number, stall = false) {
  const state = { cancelled: null as unknown };
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i >= chunks.length) {
        if (!stall) return controller.close();
        await new Promise(() => {});
      }
      if (i > 0) await sleep(everyMs);
      controller.enqueue(chunks[i++]!);
    },
    cancel(reason) {
      state.cancelled = reason;
    },
  });
  return { body, state };
}

async function drain(stream: ReadableStream<Uint8Array>, pauseMs = 0): Promise<{ bytes: number; error: string | null }> {
  const reader = stream.getReader();
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes, error: null };
      bytes += value.byteLength;
      if (pauseMs > 0) await sleep(pauseMs);
    }
  } catch (error) {
    return { bytes, error: error instanceof HarnessError ? `${error.code}: ${error.message}` : String(error) };
  }
}

const bytes = (n: number) => new Uint8Array(n);

describe("pacedUpload", () => {
  it("passes a body that keeps coming through unchanged", async () => {
    const { body } = slowBody([bytes(40), bytes(40), bytes(40)], 20);
    expect(await drain(pacedUpload(body, 10, 100))).toEqual({ bytes: 120, error: null });
  });

  it("refuses a body that stalls, and cancels it", async () => {
    const { body, state } = slowBody([bytes(5)], 0, true);
    expect(await drain(pacedUpload(body, 10, 100))).toEqual({
      bytes: 5,
      error:
        "upload_too_slow: the upload sent 5 bytes in 0.1 s, under the 10 an upload must send in that time while it holds one of the server's upload slots; nothing was stored",
    });
    expect((state.cancelled as HarnessError).code).toBe("upload_too_slow");
  });

  it("refuses a body that trickles, though every read brings a byte", async () => {
    const { body } = slowBody(
      Array.from({ length: 40 }, () => bytes(1)),
      30,
    );
    const { error } = await drain(pacedUpload(body, 10, 100));
    expect(error).toMatch(/^upload_too_slow: the upload sent [1-4] bytes in 0.1 s/);
  });

  it("counts only the time spent waiting on the client: a slow consumer is not a slow upload", async () => {
    // The consumer takes 150 ms per chunk (longer than the window); the client answers at once.
    const { body } = slowBody([bytes(4), bytes(4), bytes(4)], 0);
    expect(await drain(pacedUpload(body, 10, 100), 150)).toEqual({ bytes: 12, error: null });
  });
});

describe("POST /api/workspaces with stalled uploads", () => {
  it(
    "refuses two stalled uploads with 408 upload_too_slow, storing nothing, while a third gets its slot and is stored",
    async () => {
      const tar = await tarOf({ "a.txt": "alpha\n", "b.txt": `${"b".repeat(8000)}\n` });
      const before = await keysUnder(env.STORE, "workspaces/");
      // Hono's own request: the body streams into the route as a client sends it.
      const post = async (body: ReadableStream<Uint8Array> | Uint8Array) =>
        createApp().request("/api/workspaces", { method: "POST", body, headers: { "content-type": "application/x-tar" } }, env);
      // Each sends the first 4 KiB of an archive, then nothing: they take both of the isolate's slots.
      const stalled = [post(slowBody([tar.subarray(0, 4096)], 0, true).body), post(slowBody([tar.subarray(0, 4096)], 0, true).body)];
      for (let i = 0; i < 100 && ingestSlots.load.running < 2; i++) await sleep(20);
      expect(ingestSlots.load).toEqual({ running: 2, waiting: 0 });
      const started = Date.now();
      const normal = await post(tar);
      const waited = Date.now() - started;
      expect(normal.status).toBe(201);
      // It waited for a stalled one to be refused (one window), not for the line's 60 s.
      expect(waited).toBeLessThan(UPLOAD_PACE_WINDOW_MS * 2);
      const refused = await Promise.all(stalled);
      const errors = await Promise.all(refused.map(async (r) => [r.status, ((await r.json()) as { error: { code: string } }).error.code]));
      expect(errors).toEqual([
        [408, "upload_too_slow"],
        [408, "upload_too_slow"],
      ]);
      const { workspaceId } = (await normal.json()) as { workspaceId: string };
      // Only the stored upload's objects are new.
      const added = (await keysUnder(env.STORE, "workspaces/")).filter((k) => !before.includes(k));
      expect(added.length).toBeGreaterThan(0);
      expect(added.filter((k) => !k.startsWith(`workspaces/${workspaceId}/`))).toEqual([]);
      expect(ingestSlots.load).toEqual({ running: 0, waiting: 0 });
      expect(UPLOAD_MIN_BYTES_PER_WINDOW).toBeGreaterThan(4096);
    },
    UPLOAD_PACE_WINDOW_MS * 3,
  );
});
