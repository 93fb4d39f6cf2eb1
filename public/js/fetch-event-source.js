// An event stream read with fetch, for when EventSource will not do: EventSource cannot send
// Authorization, and a server without STREAM_TOKEN_SECRET hands out no stream token to use instead.
// It offers what LiveFeed uses of an EventSource, and like one it ends (onerror, readyState CLOSED)
// on a 204, a refusal, a dropped connection or the end of the stream; it does not reconnect by itself.

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 2;

export class FetchEventSource {
  /**
   * @param {string} url
   * @param {Record<string, string>} headers sent with the request (Authorization)
   */
  constructor(url, headers) {
    this.url = url;
    this.readyState = CONNECTING;
    /** @type {(() => void) | null} */
    this.onopen = null;
    /** @type {(() => void) | null} */
    this.onerror = null;
    /** @type {Map<string, ((message: { data: string; lastEventId: string }) => void)[]>} */
    this.listeners = new Map();
    this.aborter = new AbortController();
    this.read(headers).then(
      () => this.end(),
      () => this.end(),
    );
  }

  addEventListener(type, listener) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  close() {
    this.readyState = CLOSED;
    this.aborter.abort();
  }

  end() {
    if (this.readyState === CLOSED) return; // closed by its owner: no error to report
    this.readyState = CLOSED;
    this.onerror?.();
  }

  async read(headers) {
    const res = await fetch(this.url, { headers: { ...headers, accept: "text/event-stream" }, signal: this.aborter.signal });
    if (res.status !== 200 || !res.body) return; // 204: nothing to follow; anything else: refused
    this.readyState = OPEN;
    this.onopen?.();
    const frames = new FrameParser((type, message) => {
      for (const listener of this.listeners.get(type) ?? []) if (this.readyState === OPEN) listener(message);
    });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done || this.readyState !== OPEN) return;
      frames.push(value);
    }
  }
}

/** The SSE wire format, line by line: `event:`, `data:` and `id:` fields, a blank line ends a frame, `:` starts a comment. */
export class FrameParser {
  /** @param {(type: string, message: { data: string; lastEventId: string }) => void} dispatch */
  constructor(dispatch) {
    this.dispatch = dispatch;
    this.buffer = "";
    this.type = "";
    this.data = [];
    this.lastEventId = "";
  }

  /** @param {string} text the next piece of the stream, cut anywhere */
  push(text) {
    this.buffer += text;
    const lines = this.buffer.split("\n");
    this.buffer = lines.pop() ?? "";
    for (const line of lines) this.line(line.endsWith("\r") ? line.slice(0, -1) : line);
  }

  line(line) {
    if (line === "") {
      if (this.data.length > 0) this.dispatch(this.type || "message", { data: this.data.join("\n"), lastEventId: this.lastEventId });
      this.type = "";
      this.data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") this.type = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id") this.lastEventId = value;
  }
}
