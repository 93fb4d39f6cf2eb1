import { env } from "cloudflare:workers";
import { expect, inject, it } from "vitest";
import { ingestWorkspace } from "../src/workspace/ingest";
import { deleteWorkspace } from "../src/workspace/snapshot";
import { HEAP_COLUMNS, heap, heapCells, mb, measure, sampled } from "./heap-measure";
import type { HeapReading } from "./setup/probes/isolate-heap";
import type { WorkspaceBenchInput } from "./setup/workspace";

/**
 * In-isolate memory while ingesting the 100 MB archives of bench/workspace.bench.ts: V8's own
 * heap figures for the isolate this bench runs in (JS heap and ArrayBuffer backing stores), read
 * over the DevTools protocol by bench/setup/isolate-heap.ts. Only runs when vitest is started with
 * `--inspect=127.0.0.1:<port>`; skipped otherwise (so `npm run bench` does not pay for it).
 */

function row(label: string, ms: number, r: HeapReading, readings: HeapReading[]): string[] {
  readings.push(r);
  return [
    ...heapCells(label, ms, r),
    r.liveReadings > 0 ? `${mb(r.livePeak)} (${r.liveReadings} readings)` : "-",
    `${r.samples}, max ${r.maxLatencyMs.toFixed(0)} ms`,
  ];
}

it.skipIf(!heap)("workspace ingest of a 100 MB archive: in-isolate V8 heap and ArrayBuffer backing stores", async () => {
  const input: WorkspaceBenchInput = inject("workspaceBench");
  const { large } = input;
  const rows: string[][] = [];
  const readings: HeapReading[] = [];

  for (const archive of large.archives) {
    const workspaceId = `w_bench_heap_${archive.format.replace(".", "_")}`;
    const { reading, ms, value } = await measure(async () => {
      const response = await fetch(`${input.baseUrl}/${archive.path}`);
      return ingestWorkspace(env.STORE, sampled(response.body!), {
        workspaceId,
        owner: null,
        contentType: archive.contentType,
        searchIndex: large.searchIndex,
      });
    });
    expect(value).toMatchObject({ files: large.files, bytes: large.sourceBytes, skipped: [] });
    await deleteWorkspace(env.STORE, workspaceId);
    rows.push(row(`${archive.format} ${mb(archive.bytes)} MB: ingest`, ms, reading, readings));
  }

  // Two uploads at once in one isolate (a stateless Worker isolate serves concurrent requests).
  const pair = large.archives.find((a) => a.format === "tar");
  if (pair) {
    const { reading, ms, value } = await measure(() =>
      Promise.all(
        [0, 1].map(async (i) => {
          const response = await fetch(`${input.baseUrl}/${pair.path}`);
          const workspaceId = `w_bench_heap_pair_${i}`;
          const result = await ingestWorkspace(env.STORE, sampled(response.body!, i === 0), {
            workspaceId,
            owner: null,
            contentType: pair.contentType,
            searchIndex: large.searchIndex,
          });
          await deleteWorkspace(env.STORE, workspaceId);
          return result;
        }),
      ),
    );
    for (const result of value) expect(result).toMatchObject({ files: large.files, bytes: large.sourceBytes, skipped: [] });
    rows.push(row(`two ${pair.format} ${mb(pair.bytes)} MB ingests at once`, ms, reading, readings));
  }

  // The network body alone, read and dropped: what fetch() costs before our pipeline (after the
  // ingests, so that its garbage does not start them off).
  const tar = large.archives.find((a) => a.format === "tar");
  if (tar) {
    const drained = await measure(async () => {
      const reader = sampled((await fetch(`${input.baseUrl}/${tar.path}`)).body!).getReader();
      let bytes = 0;
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) bytes += chunk.value.byteLength;
      return bytes;
    });
    expect(drained.value).toBe(tar.bytes);
    rows.push(row("tar: fetch() body read and dropped (no ingest)", drained.ms, drained.reading, readings));
  }

  // Calibration (last, so its 64 MiB does not linger into the other cases): which field counts a
  // Uint8Array's bytes? Hold 64 MiB (touched) across the samples and a live reading (which must
  // count it: the reading after a full GC sees what is held).
  const calibration = await measure(async () => {
    const bytes = new Uint8Array(64 * 1024 * 1024).fill(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await (await fetch(`${heap!.url}/heap/live`, { method: "POST" })).arrayBuffer();
    return bytes.byteLength;
  });
  rows.push(row("calibration: hold one 64 MiB Uint8Array", calibration.ms, calibration.reading, readings));

  const header = [...HEAP_COLUMNS, "live after a full GC, largest MB", "samples"];
  const table = [header, ...rows].map((r) => `| ${r.join(" | ")} |`);
  table.splice(1, 0, `| ${header.map(() => "---").join(" | ")} |`);
  console.log(
    `\nworkspace ingest, in-isolate memory, search index ${large.searchIndex ? "on" : "off"} (${calibration.reading.target}, via ${heap!.inspector}): ` +
      `${large.files} files, ${large.sourceBytes.toLocaleString("en-US")} B of source text\n${table.join("\n")}\n` +
      `(no forced GC: used heap includes uncollected garbage; cppgc embedder heap peaked at ${mb(Math.max(...readings.map((r) => r.peak.embedderHeapUsedSize)))} MB)\n`,
  );
});
