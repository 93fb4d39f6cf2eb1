// An HTTP proxy in front of `wrangler dev` that can break event streams on purpose, to test that
// clients resume with Last-Event-ID. Test tooling only.
import http from "node:http";

/**
 * Forwards every request to `target`. `dropStreams(which)` cuts the event streams open right now
 * that `which` picks, by default all (the client sees its connection reset mid-stream);
 * `dropNextStreamAfter(n)` cuts the next event stream once it has passed `n` SSE frames with an id;
 * `refuseNext(method, path)` answers the next such request 503 itself.
 * @param {string} target e.g. http://127.0.0.1:8787
 */
export function startFlakyProxy(target) {
  const streams = new Set();
  let dropAfter = null;
  let dropped = 0;
  const requests = [];
  /** Requests to refuse with 503 before they reach the server: each entry once, for the first request it matches. */
  const refusals = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url.replace(/([?&]token=)[^&]*/, "$1…")}`);
    const refusal = refusals.findIndex((r) => r.method === req.method && r.path.test(req.url));
    if (refusal >= 0) {
      refusals.splice(refusal, 1);
      res.writeHead(503, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { code: "internal_error", message: "refused by the test proxy" } }));
    }
    const upstream = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      const isStream = String(answer.headers["content-type"] ?? "").startsWith("text/event-stream");
      if (!isStream) return answer.pipe(res);
      const stream = { method: req.method, url: req.url, req, res, answer };
      streams.add(stream);
      const limit = dropAfter;
      dropAfter = null;
      let frames = 0;
      answer.on("data", (chunk) => {
        res.write(chunk);
        frames += (String(chunk).match(/^id: /gm) ?? []).length;
        if (limit !== null && frames >= limit) cut(stream);
      });
      answer.on("end", () => {
        streams.delete(stream);
        res.end();
      });
      answer.on("error", () => cut(stream));
      // The client went away (a cancelled body): stop relaying; the run goes on without it.
      res.on("close", () => {
        if (streams.delete(stream)) answer.destroy();
      });
    });
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  function cut(stream) {
    if (!streams.delete(stream)) return;
    dropped++;
    stream.answer.destroy();
    stream.res.socket?.destroy();
  }
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        base: `http://127.0.0.1:${port}`,
        /**
         * Cuts the open event streams `which` picks (all by default); returns how many.
         * @param {(stream: { method: string; url: string }) => boolean} [which]
         */
        dropStreams(which = () => true) {
          const open = [...streams].filter(which);
          for (const s of open) cut(s);
          return open.length;
        },
        /** The event streams open right now, as method and path (no query: it may hold a token). */
        get openStreams() {
          return [...streams].map((s) => `${s.method} ${s.url.split("?")[0]}`);
        },
        /**
         * Answers the next `method` request whose URL `path` matches with a 503, without passing it on.
         * @param {string} method @param {RegExp} path
         */
        refuseNext(method, path) {
          refusals.push({ method, path });
        },
        /** @param {number} n */
        dropNextStreamAfter(n) {
          dropAfter = n;
        },
        get dropped() {
          return dropped;
        },
        /** Every request so far, as method and URL (a `token` query value hidden). */
        get requests() {
          return [...requests];
        },
        close: () =>
          new Promise((r) => {
            for (const s of [...streams]) cut(s);
            server.closeAllConnections?.();
            server.close(() => r());
          }),
      });
    });
  });
}
