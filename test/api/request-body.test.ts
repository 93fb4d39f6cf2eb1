import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/api/app";
import { MAX_DRAIN_BYTES } from "../../src/api/request-body";
import { MAX_JSON_BODY_BYTES } from "../../src/domain";
import { gzip, tarOf } from "../workspace/archives";

/** A request body that records how far it was read and whether it was cancelled. */
function trackedBody(chunks: number, chunkBytes: number, fill = 0x20) {
  const state = { pulled: 0, cancelled: false, total: chunks };
  const chunk = new Uint8Array(chunkBytes).fill(fill);
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (state.pulled === chunks) return controller.close();
        state.pulled++;
        controller.enqueue(chunk.slice());
      },
      cancel() {
        state.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

/** The bytes of `bytes` as a chunked body (no Content-Length), tracked like `trackedBody`. */
function trackedBytes(bytes: Uint8Array, chunkBytes = 16 * 1024) {
  const state = { pulled: 0, cancelled: false, total: Math.ceil(bytes.byteLength / chunkBytes) };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (state.pulled === state.total) return controller.close();
        controller.enqueue(bytes.slice(state.pulled * chunkBytes, (state.pulled + 1) * chunkBytes));
        state.pulled++;
      },
      cancel() {
        state.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

async function send(path: string, body: ReadableStream<Uint8Array>, contentType: string, bindings: object = env) {
  return createApp().request(path, { method: "POST", body, headers: { "content-type": contentType } }, bindings);
}

describe("a refused request body is read to the end before the answer, never cancelled half read", () => {
  it("a chunked JSON body over the limit: 413, and every byte was consumed", async () => {
    const { stream, state } = trackedBody(40, 16 * 1024); // 640 KiB, the limit is 256 KiB
    const res = await send("/api/sessions", stream, "application/json");
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("body_too_large");
    expect(MAX_JSON_BODY_BYTES).toBe(256 * 1024);
    expect(state).toEqual({ pulled: 40, cancelled: false, total: 40 });
  });

  it("a gzip bomb: 422 archive_bomb, and the rest of the upload was consumed", async () => {
    const bomb = gzip(new Uint8Array(64 * 1024 * 1024)); // ~64 KB that inflates 1000x
    const { stream, state } = trackedBytes(bomb, 4 * 1024);
    const res = await send("/api/workspaces", stream, "application/gzip");
    expect(res.status).toBe(422);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("archive_bomb");
    expect(state.cancelled).toBe(false);
    expect(state.pulled).toBe(state.total);
  });

  it("through the runtime's own request stream (one pending read at a time): a refused tar is drained and answered", async () => {
    // exports.default.fetch hands the Worker a native request body, as production does; a second
    // read queued behind the route's unfinished one used to throw, and the body was left half read.
    const { stream, state } = trackedBody(512, 16 * 1024, 0x07); // 8 MiB of bytes that are no tar
    const res = await exports.default.fetch(
      new Request("http://localhost/api/workspaces", { method: "POST", body: stream, headers: { "content-type": "application/x-tar" } }),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("archive_invalid");
    expect(state.cancelled).toBe(false);
    expect(state.pulled).toBe(512);
  });

  it("a body far beyond the drain allowance is cancelled once MAX_DRAIN_BYTES more have been read", async () => {
    const chunkBytes = 4 * 1024 * 1024;
    const { stream, state } = trackedBody(MAX_DRAIN_BYTES / chunkBytes + 40, chunkBytes);
    const res = await send("/api/sessions", stream, "application/json");
    expect(res.status).toBe(413);
    expect(state.cancelled).toBe(true);
    // 1 chunk passes the 256 KiB limit, then MAX_DRAIN_BYTES are discarded, and the next one trips the cap.
    expect(state.pulled).toBe(1 + MAX_DRAIN_BYTES / chunkBytes + 1);
  });
});

describe("a body that breaks off before its end", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is 400 body_incomplete on every kind of body route (not an internal error), and nothing is listed", async () => {
    const logged: unknown[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => logged.push(JSON.parse(line)));
    // Read in this isolate, the stream's error is what a dropped connection gives a Worker's read
    // ("Network connection lost"); through exports.default.fetch it arrives as a clean end instead.
    const broken = (first: string | Uint8Array) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(typeof first === "string" ? new TextEncoder().encode(first) : first);
        },
        pull(controller) {
          controller.error(new Error("Network connection lost."));
        },
      });
    const app = createApp();
    const sessions = async () =>
      ((await (await app.request("/api/sessions?limit=200", {}, env)).json()) as { items: unknown[] }).items.length;
    const before = await sessions();
    const line = JSON.stringify({
      sessionId: "s_x",
      createdAt: "2026-12-03T00:00:00.000Z",
      kind: "user",
      id: "m_1",
      parentId: null,
      text: "hi",
    });
    // Archives broken off inside an entry, past the bytes the format is told by: the decoders' own refusal must not hide it.
    const noise = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(33 + ((i * 7919) % 90))).join("");
    const tar = await tarOf({ "a.txt": noise(64 * 1024) });
    const tgz = await gzip(tar);
    // The project's object is made first: a Durable Object's constructor sets the isolate's log level
    // from its own bindings (LOG_LEVEL warn here), which would hide the Worker's info line after it.
    expect((await app.request("/api/projects/p_default/cases", {}, env)).status).toBe(200);
    const answers: [string, number, string][] = [];
    for (const [path, type, first] of [
      ["/api/sessions/import", "application/x-ndjson", `${line}\n${line.slice(0, 20)}`],
      ["/api/projects/p_default/traces", "application/x-ndjson", '{"x":1}\n'],
      ["/api/sessions", "application/json", '{"title":'],
      ["/api/workspaces", "application/x-tar", "a".repeat(600)],
      ["/api/workspaces", "application/x-tar", tar.subarray(0, 4096)],
      ["/api/workspaces", "application/gzip", tgz.subarray(0, tgz.byteLength >> 1)],
    ] as const) {
      const res = await send(path, broken(first), type, { ...env, LOG_LEVEL: "info" });
      answers.push([`${path} ${type}`, res.status, ((await res.json()) as { error: { code: string } }).error.code]);
    }
    expect(answers).toEqual([
      ["/api/sessions/import application/x-ndjson", 400, "body_incomplete"],
      ["/api/projects/p_default/traces application/x-ndjson", 400, "body_incomplete"],
      ["/api/sessions application/json", 400, "body_incomplete"],
      ["/api/workspaces application/x-tar", 400, "body_incomplete"],
      ["/api/workspaces application/x-tar", 400, "body_incomplete"],
      ["/api/workspaces application/gzip", 400, "body_incomplete"],
    ]);
    expect(await sessions()).toBe(before);
    // What the runtime said is kept in the log, one line per broken body (a body may be read to its
    // break after its answer went out, so the line can come a little later).
    await vi.waitFor(() =>
      expect(logged.filter((line) => (line as { msg?: string }).msg === "request body broke off")).toEqual(
        Array.from({ length: 6 }, () => ({ level: "info", msg: "request body broke off", cause: "Error: Network connection lost." })),
      ),
    );
  });
});
