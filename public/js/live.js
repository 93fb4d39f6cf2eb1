// Keeps a session's timeline current. While a run is active: an EventSource on the session's event
// stream (the browser reconnects by itself, sending Last-Event-ID). When the stream closes for good
// (the run ended and the server answered 204, or a stream token expired): catch up from the stored
// events, then either reopen (a run is still active) or poll for the next run.
import { eventStreamUrl, getJson, getJsonl } from "./api.js";

const POLL_INTERVAL_MS = 3000;
const REOPEN_DELAY_MS = 1000;
const TERMINAL_EVENTS = new Set(["agent_completed", "agent_error"]);

export class LiveFeed {
  /**
   * @param {string} sessionId
   * @param {{ lastSeq: number; eventCount: number; onEvent: (event: object) => void; onState: (state: string) => void }} options
   */
  constructor(sessionId, { lastSeq, eventCount, onEvent, onState }) {
    this.sessionId = sessionId;
    this.lastSeq = lastSeq;
    this.eventCount = eventCount;
    this.onEvent = onEvent;
    this.onState = onState;
    this.source = null;
    this.timer = null;
    this.stopped = false;
  }

  /** Starts following: a stream when a run is active, else polling for one. */
  start(running) {
    if (running) this.openStream();
    else this.poll();
  }

  stop() {
    this.stopped = true;
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
      url = await eventStreamUrl(this.sessionId, this.lastSeq);
    } catch {
      this.onState("offline");
      this.timer = setTimeout(() => this.openStream(), POLL_INTERVAL_MS);
      return;
    }
    // Another path (the idle poll, a prompt sent from this page) opened one meanwhile: one stream only.
    if (this.stopped || this.source) return;
    const source = new EventSource(url);
    this.source = source;
    this.onState("connecting");
    source.onopen = () => this.onState("live");
    source.addEventListener("agent_event", (message) => this.deliver(JSON.parse(message.data)));
    source.onerror = () => {
      if (source.readyState === EventSource.CONNECTING) {
        this.onState("reconnecting");
        return;
      }
      source.close();
      if (this.source === source) this.source = null;
      this.afterClose();
    };
  }

  /** The stream closed for good: catch up, then reopen or poll. */
  async afterClose() {
    if (this.stopped) return;
    try {
      const info = await getJson(`/api/sessions/${encodeURIComponent(this.sessionId)}`);
      await this.catchUp();
      if (info.status === "running") {
        this.onState("reconnecting");
        this.timer = setTimeout(() => this.openStream(), REOPEN_DELAY_MS);
        return;
      }
    } catch {
      this.onState("offline");
    }
    this.poll();
  }

  async catchUp() {
    const events = await getJsonl(`/api/sessions/${encodeURIComponent(this.sessionId)}/events`);
    for (const event of events) this.deliver(event);
  }

  /** Idle: look every few seconds for a new run (started from a terminal, say) or missed events. */
  poll() {
    if (this.stopped) return;
    this.onState("idle");
    clearTimeout(this.timer);
    this.timer = setTimeout(async () => {
      if (this.stopped) return;
      try {
        const info = await getJson(`/api/sessions/${encodeURIComponent(this.sessionId)}`);
        if (info.status === "running") return this.openStream();
        if (info.counts.events > this.eventCount) await this.catchUp();
      } catch {
        this.onState("offline");
      }
      this.poll();
    }, POLL_INTERVAL_MS);
  }
}
