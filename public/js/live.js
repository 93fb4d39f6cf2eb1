// Keeps a session's timeline current. While a run is active: an EventSource on the session's event
// stream (the browser reconnects by itself, sending Last-Event-ID). When the stream closes for good
// (the run ended and the server answered 204, or a stream token expired): catch up from the stored
// events, then either reopen (a run is still active) or poll for the next run.
// A failed look is retried later and later (a server that is down, a network that is gone, or one
// that answers with an error); a deleted session ends the feed; a 401 goes through `call`, which asks
// for a token. With auth on, a server without STREAM_TOKEN_SECRET hands out no stream token: then
// the stream is read with fetch and the bearer token instead, and the page is told why.
import { ApiError, authHeaders, eventStreamPath, eventStreamUrl, getJson, getLog, UNEXPECTED_ANSWER } from "./api.js";
import { FetchEventSource } from "./fetch-event-source.js";

const POLL_INTERVAL_MS = 3000;
const MAX_POLL_INTERVAL_MS = 60_000;
const REOPEN_DELAY_MS = 1000;
const TERMINAL_EVENTS = new Set(["agent_completed", "agent_error"]);
/** What the page says while the stream is read without stream tokens. */
export const NO_STREAM_TOKENS_NOTE =
  "Live updates need STREAM_TOKEN_SECRET on the server (32 characters or more; it answered stream_token_unconfigured): until it is set, this page follows runs with your token instead.";

/** The wait before the next look after `failures` failed ones in a row: doubling, up to a minute. */
const pollDelay = (failures) => Math.min(POLL_INTERVAL_MS * 2 ** Math.max(failures - 1, 0), MAX_POLL_INTERVAL_MS);

export class LiveFeed {
  /**
   * @param {string} sessionId
   * @param {{ lastSeq: number; eventCount: number; onEvent: (event: object) => void; onState: (state: string, note: string) => void; call?: <T>(work: () => Promise<T>) => Promise<T> }} options
   *   `onState` gets live, connecting, reconnecting, idle, offline (no answer), error (an error answer), or
   *   deleted, and a note to show beside it ("" for none): the error's code and message, or why the
   *   stream is read without stream tokens; `call` runs each request (the page's passes a 401 to its token prompt)
   */
  constructor(sessionId, { lastSeq, eventCount, onEvent, onState, call = (work) => work() }) {
    this.sessionId = sessionId;
    this.lastSeq = lastSeq;
    this.eventCount = eventCount;
    this.onEvent = onEvent;
    this.onState = onState;
    this.call = call;
    this.source = null;
    this.timer = null;
    this.stopped = false;
    /** Looks at the session that failed in a row. */
    this.failures = 0;
    /** The server hands out no stream tokens (no STREAM_TOKEN_SECRET): read the stream with fetch. */
    this.withoutStreamTokens = false;
    // Back online: look at once rather than after the grown wait (up to a minute; 45 s after an outage).
    this.onOnline = () => {
      if (this.failures > 0 && !this.source) this.poll(0);
    };
    globalThis.addEventListener?.("online", this.onOnline);
  }

  /** Tells the page the feed's state; the standing note unless an error says more. */
  setState(state, error = "") {
    this.onState(state, error || (this.withoutStreamTokens ? NO_STREAM_TOKENS_NOTE : ""));
  }

  get path() {
    return `/api/sessions/${encodeURIComponent(this.sessionId)}`;
  }

  /** Starts following: a stream when a run is active, else polling for one. */
  start(running) {
    if (running) this.openStream();
    else this.idle();
  }

  stop() {
    this.stopped = true;
    globalThis.removeEventListener?.("online", this.onOnline);
    this.source?.close();
    this.source = null;
    clearTimeout(this.timer);
  }

  /** A run was just started from this page: follow it now instead of at the next poll. */
  follow() {
    if (this.source || this.stopped) return;
    clearTimeout(this.timer);
    this.openStream();
  }

  deliver(event) {
    if (event.seq <= this.lastSeq) return; // already shown (a replay after a reconnect overlaps)
    this.lastSeq = event.seq;
    this.eventCount++;
    this.onEvent(event);
    // The run is over: close now rather than let the browser reconnect only to be told 204.
    if (TERMINAL_EVENTS.has(event.type) && this.source) {
      this.source.close();
      this.source = null;
      this.afterClose();
    }
  }

  async openStream() {
    if (this.stopped) return;
    clearTimeout(this.timer);
    let url;
    try {
      url = await this.call(() => this.streamUrl());
    } catch (err) {
      this.failed(err);
      return;
    }
    // Another path (the idle poll, a prompt sent from this page) opened one meanwhile: one stream only.
    if (this.stopped || this.source) return;
    const source = this.withoutStreamTokens ? new FetchEventSource(url, authHeaders()) : new EventSource(url);
    this.source = source;
    this.setState("connecting");
    source.onopen = () => {
      this.failures = 0;
      this.setState("live");
    };
    source.addEventListener("agent_event", (message) => this.deliver(JSON.parse(message.data)));
    source.onerror = () => {
      if (source.readyState === EventSource.CONNECTING) {
        this.setState("reconnecting");
        return;
      }
      source.close();
      if (this.source === source) this.source = null;
      this.afterClose();
    };
  }

  /** The stream's URL: with a stream token when the page has a bearer token and the server signs them. */
  async streamUrl() {
    if (this.withoutStreamTokens) return eventStreamPath(this.sessionId, this.lastSeq);
    try {
      return await eventStreamUrl(this.sessionId, this.lastSeq);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === "stream_token_unconfigured")) throw err;
      this.withoutStreamTokens = true;
      return eventStreamPath(this.sessionId, this.lastSeq);
    }
  }

  /** The stream closed for good: catch up, then reopen or poll. */
  async afterClose() {
    if (this.stopped) return;
    try {
      const info = await this.call(() => getJson(this.path));
      await this.catchUp();
      if (this.stopped) return; // the page moved on meanwhile: its next feed owns the badge
      if (info.status === "running") {
        this.setState("reconnecting");
        this.timer = setTimeout(() => this.openStream(), REOPEN_DELAY_MS);
        return;
      }
    } catch (err) {
      this.failed(err);
      return;
    }
    this.idle();
  }

  /** The events after the last one shown (never the whole log again: a long session's is megabytes). */
  async catchUp() {
    const { records } = await this.call(() => getLog(`${this.path}/events`, this.lastSeq));
    for (const event of records) this.deliver(event);
  }

  /** The session answered and no run is active: say so, and look again in a while. */
  idle() {
    if (this.stopped || this.source) return;
    this.failures = 0;
    this.setState("idle");
    this.poll(POLL_INTERVAL_MS);
  }

  /**
   * A look failed: a deleted session ends the feed; anything else is shown and tried again, later
   * each time. The server's own error answer (a code and a message) is an error it reports, not
   * "offline"; no answer, or one that is not the harness's (a proxy's 502 page), is offline.
   */
  failed(err) {
    if (this.stopped || this.source) return; // a stream opened meanwhile: it says how things are
    if (err instanceof ApiError && err.code === "session_not_found") {
      this.stop();
      this.setState("deleted");
      return;
    }
    this.failures++;
    if (err instanceof ApiError && err.code !== UNEXPECTED_ANSWER) this.setState("error", `${err.code}: ${err.message}`);
    else this.setState("offline");
    this.poll(pollDelay(this.failures));
  }

  /** Look for a new run (started from a terminal, say) or missed events after `delay`. */
  poll(delay) {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.look(), delay);
  }

  async look() {
    if (this.stopped || this.source) return;
    try {
      const info = await this.call(() => getJson(this.path));
      if (info.status === "running") return this.openStream();
      if (info.counts.events > this.eventCount) await this.catchUp();
    } catch (err) {
      this.failed(err);
      return;
    }
    this.idle();
  }
}
