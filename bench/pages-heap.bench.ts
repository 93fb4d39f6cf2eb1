import { expect, it } from "vitest";
import { client, model, openSession, post, prompt } from "../test/awtl/harness";
import { heap, liveReading, measure } from "./heap-measure";
import type { HeapReading } from "./setup/probes/isolate-heap";

/**
 * In-isolate memory while many clients read full pages of a session's attributions and a project's
 * cases at once (hunt 86: pages were built whole, about four copies of an 8 MB page each, with
 * nothing bounding how many at once). One isolate runs the Worker and the objects here, as under
 * `wrangler dev`. The data: one run judged `fail` 34 times, each verdict with about 250 KB of
 * artifact refs, so an attribution page holds 4 MB and a case page 8 MB. Each case: 32 requests at
 * once, every body read to its end (and dropped as it comes); then the same 32 one after another. A reading after a full GC
 * is asked for while the requests run (every 50 ms) and at the end. Only runs with `--inspect`.
 */
const MB = 1e6;
const mb = (bytes: number) => (bytes / MB).toFixed(1);
const AT_ONCE = 32;
const VERDICTS = 34;

it.skipIf(!heap)("pages of attributions and cases read by many clients at once: in-isolate V8 heap", async () => {
  const api = client();
  const projectId = "p_pages_heap";
  const { sessionId } = await openSession(api, { projectId, answers: [model.text("done")] });
  const { runId } = await prompt(api, sessionId, { text: "hi" });
  for (let i = 0; i < VERDICTS; i++) {
    const artifactRefs = Array.from({ length: 62 }, (_, k) => `src/${i}/${k}/${"x".repeat(4_070)}.ts`);
    const res = await api(`/api/sessions/${sessionId}/judgements`, post({ runId, judgeName: `ci${i}`, result: "fail", artifactRefs }));
    expect(res.status).toBe(201);
  }
  // Each body read to its end and dropped chunk by chunk: the clients run in this isolate too, and
  // must not hold what they read.
  const read = async (path: string) => {
    const res = await api(path);
    let bytes = 0;
    const reader = res.body!.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) bytes += chunk.value.byteLength;
    return { status: res.status, bytes };
  };
  const rows: string[][] = [];
  const row = (label: string, ms: number, r: HeapReading, statuses: Record<number, number>, bytes: number) =>
    rows.push([
      label,
      `${ms.toFixed(0)} ms`,
      JSON.stringify(statuses),
      mb(bytes),
      mb(r.start.usedSize + r.start.backingStorageSize),
      mb(r.peakTotal),
      mb(r.livePeak),
      String(r.liveReadings),
    ]);
  for (const [route, path] of [
    ["attributions", `/api/sessions/${sessionId}/attributions?limit=1000`],
    ["cases", `/api/projects/${projectId}/cases?limit=200`],
  ] as const) {
    for (const mode of ["at once", "one after another"] as const) {
      let polling = true;
      const { reading, ms, value } = await measure(async () => {
        const poll = (async () => {
          while (polling) {
            await liveReading();
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        })();
        const results: { status: number; bytes: number }[] = [];
        if (mode === "at once") results.push(...(await Promise.all(Array.from({ length: AT_ONCE }, () => read(path)))));
        else for (let i = 0; i < AT_ONCE; i++) results.push(await read(path));
        polling = false;
        await poll;
        await liveReading();
        return results;
      });
      const statuses: Record<number, number> = {};
      for (const r of value) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      expect(value.every((r) => r.status === 200 || r.status === 429)).toBe(true);
      row(`${route}, ${AT_ONCE} ${mode}`, ms, reading, statuses, Math.max(...value.map((r) => (r.status === 200 ? r.bytes : 0))));
    }
  }
  const header = [
    "case",
    "time",
    "statuses",
    "page MB",
    "before: used + backing MB",
    "peak used + backing + cppgc MB",
    "live after a full GC, largest MB",
    "live readings",
  ];
  const table = [header, header.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`);
  console.log(`\npages read at once, in-isolate memory (${VERDICTS} verdicts of about 250 KB)\n${table.join("\n")}\n`);
});
