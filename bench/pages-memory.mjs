// Memory of 32 clients reading a full page of a session's attributions (4 MB) and of a project's
// cases (8 MB) at once, every body read to its end: workerd's resident memory before and at its peak,
// three rounds each (hunt 86). Usage: node bench/pages-memory.mjs [tree] (default: this checkout;
// give another tree, e.g. a `git archive` of an older commit, to compare).

import path from "node:path";
import { startMeasuredDev } from "./dev-memory.mjs";

const AT_ONCE = 32;
const VERDICTS = 34;
const { base, post, rss, stop } = await startMeasuredDev(path.resolve(process.argv[2] ?? "."));

async function round(label, route) {
  const before = rss();
  let peak = before;
  let polling = true;
  const poll = (async () => {
    while (polling) {
      peak = Math.max(peak, rss());
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const start = Date.now();
  const results = await Promise.all(
    Array.from({ length: AT_ONCE }, async () => {
      const res = await fetch(base + route);
      let bytes = 0;
      for await (const chunk of res.body) bytes += chunk.byteLength;
      return { status: res.status, bytes };
    }),
  );
  polling = false;
  await poll;
  const statuses = {};
  for (const { status } of results) statuses[status] = (statuses[status] ?? 0) + 1;
  const page = Math.max(...results.map((r) => (r.status === 200 ? r.bytes : 0)));
  console.log(
    `${label}: ${Date.now() - start} ms, statuses ${JSON.stringify(statuses)}, page ${(page / 1e6).toFixed(1)} MB, workerd RSS ${before.toFixed(0)} -> peak ${peak.toFixed(0)} MB`,
  );
}

try {
  const projectId = "p_pagesmem";
  const { sessionId } = await (await post("/api/sessions", { projectId })).json();
  const run = await post(`/api/sessions/${sessionId}/messages/stream`, { text: "hello" });
  const runId = run.headers.get("x-run-id");
  await run.text();
  // Verdicts of about 250 KB of artifact refs each (a JSON body's 256 KiB): each makes an attribution and a case of that size.
  for (let i = 0; i < VERDICTS; i++) {
    const artifactRefs = Array.from({ length: 62 }, (_, k) => `src/${i}/${k}/${"x".repeat(4_070)}.ts`);
    const res = await post(`/api/sessions/${sessionId}/judgements`, { runId, judgeName: `ci${i}`, result: "fail", artifactRefs });
    if (res.status !== 201) throw new Error(`judgement: ${res.status} ${await res.text()}`);
  }
  console.log(`${VERDICTS} verdicts of about 250 KB; ${AT_ONCE} clients at once per round`);
  for (let i = 1; i <= 3; i++) {
    await round(`attributions, round ${i}`, `/api/sessions/${sessionId}/attributions?limit=1000`);
    await round(`cases, round ${i}`, `/api/projects/${projectId}/cases?limit=200`);
  }
} finally {
  await stop();
}
