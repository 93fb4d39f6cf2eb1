// The viewer's LiveFeed in Node, with the browser's fetch, sessionStorage and EventSource stood in
// for: the orderings a real browser shows only now and then (the idle poll and a prompt sent from the
// page both opening the stream while a stream token is on its way), the idle poll's failures (a
// server that is down, one that answers with an error, a deleted session) on a mocked clock, and a
// server that signs no stream tokens (the stream read with fetch instead).
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it, mock } from "node:test";

/** Every EventSource the feed made, open or closed. */
let sources = [];
/** Stream-token answers held back until the test lets them through. */
let pendingTokens = [];
/** The answer to GET /api/sessions/s_1 (the idle poll's look), and when each look was made. */
let sessionAnswer = null;
let looks = [];
/** Answers a test gives itself (path, init) -> Response, before the ones above; undefined: not its path. */
let routes = () => undefined;

class FakeEventSource {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSED = 2;
  constructor(url) {
    this.url = url;
    this.readyState = FakeEventSource.CONNECTING;
    sources.push(this);
  }
  addEventListener() {}
  close() {
    this.readyState = FakeEventSource.CLOSED;
  }
}

globalThis.EventSource = FakeEventSource;
const storage = new Map([["pi-harness-token", "tok"]]);
globalThis.sessionStorage = {
  getItem: (k) => storage.get(k) ?? null,
  setItem: (k, v) => storage.set(k, v),
  removeItem: (k) => storage.delete(k),
};
globalThis.fetch = (path, init) => {
  const routed = routes(path, init);
  if (routed !== undefined) return Promise.resolve(routed);
  if (path === "/api/sessions/s_1") {
    looks.push(Date.now());
    return sessionAnswer();
  }
  assert.match(path, /\/stream-token$/);
  const token = `t${pendingTokens.length + 1}`;
  return new Promise((resolve) => pendingTokens.push(() => resolve(Response.json({ token }))));
};

const { LiveFeed, NO_STREAM_TOKENS_NOTE } = await import("../../public/js/live.js");
const { FrameParser } = await import("../../public/js/fetch-event-source.js");

const feed = () => new LiveFeed("s_1", { lastSeq: 3, eventCount: 3, onEvent: () => {}, onState: () => {} });
const settle = () => new Promise((r) => setTimeout(r, 0));
/** Lets the feed's pending answers through (setImmediate: the mocked clock does not hold it). */
const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};
const idleInfo = () => Promise.resolve(Response.json({ status: "idle", counts: { events: 3 } }));

describe("LiveFeed", () => {
  beforeEach(() => {
    sources = [];
    pendingTokens = [];
  });

  it("opens one stream when the idle poll and a prompt from the page both open it at once", async () => {
    const live = feed();
    const fromPoll = live.openStream(); // the poll saw the run; its token is on the way
    live.follow(); // the prompt's answer arrived meanwhile
    assert.equal(pendingTokens.length, 2);
    for (const answer of pendingTokens) answer();
    await fromPoll;
    await settle();
    assert.deepEqual(
      sources.map((s) => [s.url, s.readyState]),
      [["/api/sessions/s_1/events/stream?after=3&token=t1", FakeEventSource.CONNECTING]],
    );
    assert.equal(live.source, sources[0]);
    live.stop();
    assert.equal(sources[0].readyState, FakeEventSource.CLOSED);
  });

  it("opens no stream when stopped (the page moved to another session) while its token was on the way", async () => {
    const live = feed();
    const opening = live.openStream();
    live.stop();
    pendingTokens[0]();
    await opening;
    assert.deepEqual(sources, []);
  });
});

describe("LiveFeed while idle", () => {
  beforeEach(() => {
    looks = [];
    mock.timers.enable({ apis: ["setTimeout", "Date"] });
  });
  afterEach(() => mock.timers.reset());

  /** A feed on an idle session; its states and the clock after `ms` of polling. */
  async function idleFeed(ms) {
    const states = [];
    const live = new LiveFeed("s_1", { lastSeq: 3, eventCount: 3, onEvent: () => {}, onState: (s) => states.push(s) });
    live.start(false);
    for (let t = 0; t < ms; t += 1000) {
      mock.timers.tick(1000);
      await flush();
    }
    return { live, states };
  }

  it("shows a server that is down as offline, and looks again later and later until it answers", async () => {
    sessionAnswer = () => Promise.reject(new TypeError("Failed to fetch"));
    const { live, states } = await idleFeed(100_000);
    // Looks at 3, 6, 12, 24, 48 s, then every minute (the first one 3 s after the start).
    assert.deepEqual(looks, [3000, 6000, 12_000, 24_000, 48_000, 96_000]);
    assert.deepEqual(states, ["idle", "offline", "offline", "offline", "offline", "offline", "offline"]);
    sessionAnswer = idleInfo;
    for (let t = 0; t < 70_000; t += 1000) {
      mock.timers.tick(1000);
      await flush();
    }
    // Answered at 156 s: idle again, and every 3 s.
    assert.deepEqual(looks.slice(6), [156_000, 159_000, 162_000, 165_000, 168_000]);
    assert.deepEqual(states.slice(7), ["idle", "idle", "idle", "idle", "idle"]);
    live.stop();
  });

  it("looks at once when the browser says it is back online, not after the grown wait (hunt 45)", async () => {
    const window = new EventTarget();
    globalThis.addEventListener = window.addEventListener.bind(window);
    globalThis.removeEventListener = window.removeEventListener.bind(window);
    try {
      sessionAnswer = () => Promise.reject(new TypeError("Failed to fetch"));
      const { live, states } = await idleFeed(50_000);
      assert.deepEqual(looks, [3000, 6000, 12_000, 24_000, 48_000]);
      sessionAnswer = idleInfo;
      window.dispatchEvent(new Event("online"));
      mock.timers.tick(0);
      await flush();
      // At 50 s, not at 96 s; idle again.
      assert.deepEqual([looks.slice(5), states.at(-1)], [[50_000], "idle"]);
      live.stop();
      // A stopped feed no longer listens.
      window.dispatchEvent(new Event("online"));
      mock.timers.tick(0);
      await flush();
      assert.equal(looks.length, 6);
    } finally {
      delete globalThis.addEventListener;
      delete globalThis.removeEventListener;
    }
  });

  it("shows the server's own error answer (5xx included) as an error with its message, not offline; a page that is not the harness's is offline", async () => {
    sessionAnswer = () =>
      Promise.resolve(Response.json({ error: { code: "internal_error", message: "something broke" } }, { status: 500 }));
    const notes = [];
    const states = [];
    const live = new LiveFeed("s_1", {
      lastSeq: 3,
      eventCount: 3,
      onEvent: () => {},
      onState: (s, note) => {
        states.push(s);
        notes.push(note);
      },
    });
    live.start(false);
    for (let t = 0; t < 30_000; t += 1000) {
      mock.timers.tick(1000);
      await flush();
    }
    // Backs off as when offline: looks at 3, 6, 12, 24 s.
    assert.deepEqual(looks, [3000, 6000, 12_000, 24_000]);
    assert.deepEqual(states, ["idle", "error", "error", "error", "error"]);
    assert.deepEqual(notes, ["", ...Array(4).fill("internal_error: something broke")]);
    sessionAnswer = () => Promise.resolve(new Response("<html>Bad gateway</html>", { status: 502 }));
    for (let t = 0; t < 30_000; t += 1000) {
      mock.timers.tick(1000);
      await flush();
    }
    assert.deepEqual([states.at(-1), notes.at(-1)], ["offline", ""]);
    live.stop();
  });

  it("stops at a deleted session (404) and says so", async () => {
    sessionAnswer = () =>
      Promise.resolve(Response.json({ error: { code: "session_not_found", message: "no such session" } }, { status: 404 }));
    const { live, states } = await idleFeed(20_000);
    assert.deepEqual(looks, [3000]);
    assert.deepEqual(states, ["idle", "deleted"]);
    assert.equal(live.stopped, true);
  });

  it("sends its requests through `call` (the page's token prompt takes a 401 there)", async () => {
    let refusals = 0;
    sessionAnswer = () =>
      Promise.resolve(
        refusals++ === 0
          ? Response.json({ error: { code: "unauthorized", message: "no" } }, { status: 401 })
          : Response.json({ status: "idle", counts: { events: 3 } }),
      );
    const asked = [];
    const call = async (work) => {
      try {
        return await work();
      } catch (err) {
        asked.push(err.status);
        return work();
      }
    };
    const states = [];
    const live = new LiveFeed("s_1", { lastSeq: 3, eventCount: 3, onEvent: () => {}, onState: (s) => states.push(s), call });
    live.start(false);
    mock.timers.tick(3000);
    await flush();
    assert.deepEqual(asked, [401]);
    assert.deepEqual(states, ["idle", "idle"]);
    live.stop();
  });
});

/** A stream answer whose body arrives in `pieces` (cut anywhere, as a network cuts it). */
function streamAnswer(pieces) {
  const encoder = new TextEncoder();
  const body = new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

const frame = (event) => `id: ${event.seq}\nevent: agent_event\ndata: ${JSON.stringify(event)}\n\n`;

describe("LiveFeed on a server without STREAM_TOKEN_SECRET (hunt 28)", () => {
  beforeEach(() => {
    sources = [];
  });
  afterEach(() => {
    routes = () => undefined;
  });

  it("reads the stream with fetch and the bearer token, shows the run, and says why", async (t) => {
    const run = [
      { seq: 4, type: "agent_started", runId: "r_1" },
      { seq: 5, type: "user_message_appended", messageId: "m_1" },
      { seq: 7, type: "assistant_delta", messageId: "m_2", text: "tick 0\n" },
      { seq: 8, type: "agent_completed", runId: "r_1", stopReason: "STOP" },
    ];
    const asked = [];
    routes = (path, init) => {
      asked.push(path);
      if (path.endsWith("/stream-token"))
        return Response.json({ error: { code: "stream_token_unconfigured", message: "STREAM_TOKEN_SECRET is not set" } }, { status: 500 });
      if (path.startsWith("/api/sessions/s_1/events/stream")) {
        assert.equal(init.headers.authorization, "Bearer tok");
        // The first two events, a ping, and the rest cut mid-frame and mid-line.
        const text = `retry: 2000\n\n${run.map(frame).join(": ping\n\n")}`;
        return streamAnswer([text.slice(0, 7), text.slice(7, 90), text.slice(90, 91), text.slice(91)]);
      }
      if (path === "/api/sessions/s_1") return Response.json({ status: "idle", counts: { events: 8 } });
      // The catch-up after the stream: only what came after the last event shown (nothing, here).
      if (path.startsWith("/api/sessions/s_1/events?after=")) {
        const after = Number(path.split("=")[1]);
        return new Response(
          run
            .filter((e) => e.seq > after)
            .map((e) => `${JSON.stringify(e)}\n`)
            .join(""),
          { headers: { "x-log-seq": "8" } },
        );
      }
      return undefined;
    };
    const shown = [];
    const states = [];
    const live = new LiveFeed("s_1", {
      lastSeq: 3,
      eventCount: 3,
      onEvent: (e) => shown.push(e.seq),
      onState: (s, note) => states.push([s, note]),
    });
    t.after(() => live.stop()); // its idle poll too, should an assertion fail
    await live.openStream();
    for (let i = 0; i < 20 && states.at(-1)?.[0] !== "idle"; i++) await flush();
    assert.deepEqual(shown, [4, 5, 7, 8]);
    assert.deepEqual(
      states.map(([s]) => s),
      ["connecting", "live", "idle"],
    );
    for (const [, note] of states) assert.equal(note, NO_STREAM_TOKENS_NOTE);
    assert.match(NO_STREAM_TOKENS_NOTE, /STREAM_TOKEN_SECRET/);
    assert.deepEqual(sources, [], "no EventSource: it could not send the token");
    assert.deepEqual(asked, [
      "/api/sessions/s_1/stream-token",
      "/api/sessions/s_1/events/stream?after=3",
      "/api/sessions/s_1",
      "/api/sessions/s_1/events?after=8",
    ]);
    // The next run: no stream token is asked for again.
    asked.length = 0;
    live.follow();
    await flush();
    assert.deepEqual(asked.slice(0, 1), ["/api/sessions/s_1/events/stream?after=8"]);
    live.stop();
  });
});

describe("FrameParser", () => {
  it("reads frames cut anywhere: fields, multi-line data, comments, CRLF, a frame without data", () => {
    const got = [];
    const parser = new FrameParser((type, message) => got.push([type, message.data, message.lastEventId]));
    const text = ': ping\r\nretry: 2000\n\nid: 4\nevent: agent_event\ndata: {"a":\ndata:1}\n\nevent: nothing\n\ndata: plain\r\n\r\n';
    for (const ch of text) parser.push(ch);
    assert.deepEqual(got, [
      ["agent_event", '{"a":\n1}', "4"],
      ["message", "plain", "4"],
    ]);
  });
});
