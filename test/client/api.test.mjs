// HarnessApi against a scripted local server: what the client does with the answers it can get.
// Run by `npm run test:client`.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, it } from "node:test";
import { ApiError, HarnessApi } from "../../client/api.mjs";

/** Answers every request from a script: each entry is one answer, in order (`raw`: the body as is). */
let script = [];
/** What each request sent: its body length. */
let received = [];
let server;
let base;

before(async () => {
  server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      received.push(Buffer.concat(chunks).byteLength);
      const next = script.shift() ?? { status: 500, body: { error: { code: "internal_error", message: "script ran out" } } };
      res.writeHead(next.status, { "content-type": "application/json", ...next.headers });
      res.end(next.raw ?? JSON.stringify(next.body));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => new Promise((resolve) => server.close(resolve)));

const busy = (retryAfter) => ({
  status: 503,
  headers: retryAfter === undefined ? {} : { "retry-after": retryAfter },
  body: { error: { code: "ingest_busy", message: "busy", requestId: "r1" } },
});
const created = { status: 201, body: { workspaceId: "w_x", files: 1, bytes: 2, skipped: [] } };

describe("HarnessApi.uploadWorkspace", () => {
  it("tries again after each 503 ingest_busy, waiting the answer's Retry-After (5 s when it names none)", async () => {
    script = [busy("2"), busy(undefined), created];
    received = [];
    const waits = [];
    const notes = [];
    const answer = await new HarnessApi(base).uploadWorkspace(new Uint8Array(3), {
      onBusy: (s) => notes.push(s),
      wait: async (ms) => waits.push(ms),
    });
    assert.deepEqual(answer, created.body);
    assert.deepEqual(waits, [2000, 5000]);
    assert.deepEqual(notes, [2, 5]);
    // The whole archive was sent every time.
    assert.deepEqual(received, [3, 3, 3]);
  });

  it("gives up after five tries with the server's ingest_busy error", async () => {
    script = [busy("1"), busy("1"), busy("1"), busy("1"), busy("1"), created];
    received = [];
    const waits = [];
    await assert.rejects(
      new HarnessApi(base).uploadWorkspace(new Uint8Array(1), { wait: async (ms) => waits.push(ms) }),
      (err) => err instanceof ApiError && err.status === 503 && err.code === "ingest_busy" && err.retryAfterSeconds === 1,
    );
    assert.deepEqual(waits, [1000, 1000, 1000, 1000]);
    assert.equal(received.length, 5);
    script = [];
  });

  it("does not try again after any other refusal", async () => {
    script = [{ status: 400, body: { error: { code: "archive_invalid", message: "truncated", requestId: "r2" } } }, created];
    received = [];
    await assert.rejects(
      new HarnessApi(base).uploadWorkspace(new Uint8Array(1), { wait: async () => assert.fail("no wait expected") }),
      (err) => err instanceof ApiError && err.code === "archive_invalid" && err.retryAfterSeconds === null,
    );
    assert.equal(received.length, 1);
    script = [];
  });
});

const serving = (retryAfter) => ({
  status: 429,
  headers: { "retry-after": retryAfter },
  body: { error: { code: "too_many_downloads", message: "serving 4", requestId: "r3" } },
});
const log = { status: 200, headers: { "content-type": "application/x-ndjson" }, raw: '{"id":"m_1"}\n{"id":"m_2"}\n' };

describe("HarnessApi.messages", () => {
  it("tries again after each 429 too_many_downloads, waiting the answer's Retry-After", async () => {
    script = [serving("5"), serving("1"), log];
    received = [];
    const waits = [];
    const notes = [];
    const messages = await new HarnessApi(base).messages("s_1", {}, { onBusy: (s) => notes.push(s), wait: async (ms) => waits.push(ms) });
    assert.deepEqual(messages, [{ id: "m_1" }, { id: "m_2" }]);
    assert.deepEqual([waits, notes, received.length], [[5000, 1000], [5, 1], 3]);
  });

  it("gives up after 14 tries (65 s of waits of 5 s, past the server's 60 s stall cutoff) with the server's error", async () => {
    script = [...Array.from({ length: 14 }, () => serving("5")), log];
    received = [];
    const waits = [];
    await assert.rejects(
      new HarnessApi(base).messages("s_1", { after: 3 }, { wait: async (ms) => waits.push(ms) }),
      (err) => err instanceof ApiError && err.status === 429 && err.code === "too_many_downloads" && err.retryAfterSeconds === 5,
    );
    assert.deepEqual([waits.length, waits.reduce((a, b) => a + b, 0), received.length], [13, 65_000, 14]);
    script = [];
  });

  it("does not try again after any other refusal, nor an upload after too_many_downloads", async () => {
    script = [{ status: 404, body: { error: { code: "session_not_found", message: "no", requestId: "r4" } } }, log];
    received = [];
    await assert.rejects(
      new HarnessApi(base).messages("s_1", {}, { wait: async () => assert.fail("no wait expected") }),
      (err) => err instanceof ApiError && err.code === "session_not_found",
    );
    script = [serving("1"), created];
    await assert.rejects(
      new HarnessApi(base).uploadWorkspace(new Uint8Array(1), { wait: async () => assert.fail("no wait expected") }),
      (err) => err instanceof ApiError && err.code === "too_many_downloads",
    );
    assert.equal(received.length, 2);
    script = [];
  });
});

describe("HarnessApi: answers that are not the harness's own (hunt 77)", () => {
  it("a redirect is not followed: it is an error naming where it points", async () => {
    script = [{ status: 301, headers: { location: "https://harness.example.com/api/sessions" }, raw: "" }];
    await assert.rejects(
      new HarnessApi(base, "tok").listSessions(),
      (err) =>
        err instanceof ApiError &&
        err.status === 301 &&
        err.code === "redirected" &&
        err.message ===
          `${base} answered 301, a redirect to https://harness.example.com/api/sessions: give the harness's own address with --url`,
    );
  });

  it("messages cut short (a last line that does not parse) are downloaded again, up to three times", async () => {
    const cut = { status: 200, headers: { "content-type": "application/x-ndjson" }, raw: '{"id":"m_1"}\n{"id":"m_' };
    script = [cut, log];
    received = [];
    assert.deepEqual(await new HarnessApi(base).messages("s_1"), [{ id: "m_1" }, { id: "m_2" }]);
    assert.equal(received.length, 2);
    script = [cut, cut, cut, log];
    await assert.rejects(
      new HarnessApi(base).messages("s_1"),
      (err) =>
        err instanceof ApiError &&
        err.code === "download_cut" &&
        err.message === "the session's messages were cut short 3 times while downloading; try again",
    );
    script = [];
  });
});

describe("HarnessApi.changes", () => {
  it("tries again after a 429 too_many_downloads, as messages does", async () => {
    script = [serving("2"), { status: 200, headers: { "content-type": "text/plain" }, raw: "diff --git a/x b/x\n" }];
    received = [];
    const waits = [];
    assert.equal(await new HarnessApi(base).changes("s_1", { wait: async (ms) => waits.push(ms) }), "diff --git a/x b/x\n");
    assert.deepEqual([waits, received.length], [[2000], 2]);
  });
});
