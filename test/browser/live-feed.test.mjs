// The viewer's LiveFeed in Node, with the browser's fetch, sessionStorage and EventSource stood in
// for: the orderings a real browser shows only now and then (the idle poll and a prompt sent from the
// page both opening the stream while a stream token is on its way).
import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";

/** Every EventSource the feed made, open or closed. */
let sources = [];
/** Stream-token answers held back until the test lets them through. */
let pendingTokens = [];

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
globalThis.fetch = (path) => {
  assert.match(path, /\/stream-token$/);
  const token = `t${pendingTokens.length + 1}`;
  return new Promise((resolve) => pendingTokens.push(() => resolve(Response.json({ token }))));
};

const { LiveFeed } = await import("../../public/js/live.js");

const feed = () => new LiveFeed("s_1", { lastSeq: 3, eventCount: 3, onEvent: () => {}, onState: () => {} });
const settle = () => new Promise((r) => setTimeout(r, 0));

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
