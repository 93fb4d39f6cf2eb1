// followRun against a scripted local server: which stream it resumes and where it stops.
// Run by `npm run test:client`.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, it } from "node:test";
import { HarnessApi } from "../../client/api.mjs";
import { followRun } from "../../client/event-stream.mjs";

/** The answers, by "METHOD path?query": each an SSE body (its frames) and the x-run-id header. */
let routes = new Map();
/** What each request asked for: "METHOD path?query last-event-id". */
let received = [];
/** The Idempotency-Key of each request ("-" without one). */
let keys = [];
let server;
let base;

before(async () => {
  server = createServer((req, res) => {
    received.push(`${req.method} ${req.url} ${req.headers["last-event-id"] ?? "-"}`);
    keys.push(req.headers["idempotency-key"] ?? "-");
    req.resume();
    const answer = routes.get(`${req.method} ${req.url}`);
    // The server took the request, then the connection dropped before any answer.
    if (answer?.drop > 0) {
      answer.drop--;
      return req.on("end", () => req.socket.destroy());
    }
    if (!answer) {
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { code: "route_not_found", message: req.url } }));
    }
    res.writeHead(200, { "content-type": "text/event-stream", ...(answer.runId ? { "x-run-id": answer.runId } : {}) });
    // Ends after its frames: a stream that has no terminal event of the run is a dropped connection.
    res.end(answer.events.map((e) => `id: ${e.seq}\nevent: agent_event\ndata: ${JSON.stringify(e)}\n\n`).join(""));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => new Promise((resolve) => server.close(resolve)));

const POST = "POST /api/sessions/s_1/messages/stream";
/** An earlier run r_1 (seqs 1-5), then the prompt's run r_2 (seqs 7-10). */
const earlierRun = [
  { seq: 1, type: "agent_started", runId: "r_1" },
  { seq: 3, type: "user_message_appended", messageId: "m_1" },
  { seq: 5, type: "agent_completed", runId: "r_1", stopReason: "STOP" },
];
const promptRun = [
  { seq: 7, type: "agent_started", runId: "r_2" },
  { seq: 8, type: "user_message_appended", messageId: "m_3" },
  { seq: 9, type: "assistant_delta", runId: "r_2", text: "hi" },
  { seq: 10, type: "agent_completed", runId: "r_2", stopReason: "STOP" },
];

/** Runs followRun to its end: the events it yielded as [seq, type, runId]. */
async function follow() {
  const got = [];
  for await (const event of followRun(new HarnessApi(base), "s_1", { text: "two" }, { reconnectDelayMs: 1 })) {
    got.push([event.seq, event.type, event.runId ?? null]);
  }
  return got;
}

describe("followRun", () => {
  it("a prompt stream cut before its first frame resumes the prompt's run (?runId=), not the session from its start", async () => {
    routes = new Map([
      [POST, { runId: "r_2", events: [] }],
      ["GET /api/sessions/s_1/events/stream?runId=r_2", { runId: "r_2", events: promptRun }],
      // The unscoped stream replays the session from Last-Event-ID 0: the earlier run first.
      ["GET /api/sessions/s_1/events/stream", { runId: "r_2", events: [...earlierRun, ...promptRun] }],
    ]);
    received = [];
    assert.deepEqual(await follow(), [
      [7, "agent_started", "r_2"],
      [8, "user_message_appended", null],
      [9, "assistant_delta", "r_2"],
      [10, "agent_completed", "r_2"],
    ]);
    assert.deepEqual(received, [`${POST} -`, "GET /api/sessions/s_1/events/stream?runId=r_2 0"]);
  });

  it("another run's terminal event does not end the prompt's run", async () => {
    routes = new Map([[POST, { runId: "r_2", events: [earlierRun[2], ...promptRun] }]]);
    received = [];
    assert.deepEqual(await follow(), [
      [5, "agent_completed", "r_1"],
      [7, "agent_started", "r_2"],
      [8, "user_message_appended", null],
      [9, "assistant_delta", "r_2"],
      [10, "agent_completed", "r_2"],
    ]);
    assert.deepEqual(received, [`${POST} -`]);
  });

  it("a stream dropped mid-run resumes the run's stream from the last seq read", async () => {
    routes = new Map([
      [POST, { runId: "r_2", events: promptRun.slice(0, 2) }],
      ["GET /api/sessions/s_1/events/stream?runId=r_2", { runId: "r_2", events: promptRun.slice(2) }],
    ]);
    received = [];
    assert.deepEqual(
      (await follow()).map(([seq]) => seq),
      [7, 8, 9, 10],
    );
    assert.deepEqual(received, [`${POST} -`, "GET /api/sessions/s_1/events/stream?runId=r_2 8"]);
  });

  it("a queued prompt withdrawn before its run started ends with queued_message_withdrawn, without reconnecting", async () => {
    routes = new Map([
      [
        POST,
        {
          runId: "r_2",
          events: [
            { seq: 4, type: "message_queued", messageId: "m_2", mode: "followUp", runId: "r_2", afterFailedRun: "withdraw" },
            { seq: 5, type: "queue_updated", steering: [], followUp: ["m_2"] },
            { seq: 9, type: "queued_message_withdrawn", messageId: "m_2", runId: "r_2", reason: "previous_run_failed" },
          ],
        },
      ],
    ]);
    received = [];
    assert.deepEqual(await follow(), [
      [4, "message_queued", "r_2"],
      [5, "queue_updated", null],
      [9, "queued_message_withdrawn", "r_2"],
    ]);
    assert.deepEqual(received, [`${POST} -`]);
  });

  it("a prompt whose connection drops before the answer is sent again under the same Idempotency-Key (hunt 58)", async () => {
    routes = new Map([[POST, { runId: "r_2", events: promptRun, drop: 2 }]]);
    received = [];
    keys = [];
    assert.deepEqual(
      (await follow()).map(([seq]) => seq),
      [7, 8, 9, 10],
    );
    assert.deepEqual(received, [`${POST} -`, `${POST} -`, `${POST} -`]);
    assert.equal(new Set(keys).size, 1);
    assert.match(keys[0], /^cli-[0-9a-f-]{36}$/);
  });

  it("a prompt refused (4xx) is not sent again", async () => {
    routes = new Map();
    received = [];
    await assert.rejects(follow(), { code: "route_not_found" });
    assert.deepEqual(received, [`${POST} -`]);
  });
});
