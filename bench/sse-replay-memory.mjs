// Memory of 8 SSE clients that open the event stream of a session with ~22 MB of events and never
// read: workerd's resident memory before and after. Usage: node bench/sse-replay-memory.mjs [tree]
// (default: this checkout; give another tree, e.g. a `git archive` of an older commit, to compare).

import http from "node:http";
import path from "node:path";
import { startMeasuredDev } from "./dev-memory.mjs";

const { base, post, rss: rssMB, stop } = await startMeasuredDev(path.resolve(process.argv[2] ?? "."));
const rss = () => rssMB().toFixed(1);
try {
  const { sessionId } = await (await post("/api/sessions", {})).json();
  for (let i = 0; i < 20; i++) await (await post(`/api/sessions/${sessionId}/messages/stream`, { text: "BIG 600000 64" })).text();
  const events = await (await fetch(`${base}/api/sessions/${sessionId}/events`)).text();
  console.log(`log: ${(events.length / 1e6).toFixed(1)} MB of events JSON`);
  await new Promise((r) => setTimeout(r, 3000));
  console.log(`rss before: ${rss()} MB`);
  const clients = [];
  for (let i = 0; i < 8; i++) {
    clients.push(
      new Promise((resolve) => {
        const req = http.get(`${base}/api/sessions/${sessionId}/events/stream`, (res) => {
          res.pause();
          resolve({ req, status: res.statusCode });
        });
        req.on("error", () => resolve({ req, status: "error" }));
      }),
    );
  }
  const opened = await Promise.all(clients);
  console.log(`statuses: ${opened.map((c) => c.status).join(",")}`);
  for (let t = 0; t < 4; t++) {
    await new Promise((r) => setTimeout(r, 2500));
    console.log(`rss with 8 unread replays, +${(t + 1) * 2.5}s: ${rss()} MB`);
  }
  const health = await fetch(`${base}/healthz`).then(
    (r) => r.status,
    (e) => String(e),
  );
  console.log(`healthz: ${health}`);
  for (const c of opened) c.req.destroy();
} finally {
  await stop();
}
