import { env } from "cloudflare:workers";
import { expect, inject, it } from "vitest";
import { ingestWorkspace } from "../src/workspace/ingest";
import { SearchIndexBuilder } from "../src/workspace/search/index-builder";
import { deleteWorkspace, loadWorkspace } from "../src/workspace/snapshot";
import { countingGets } from "./counting-bucket";
import { median } from "./median";
import type { MemoryReading } from "./setup/probes/workerd-memory";
import type { WorkspaceBenchInput } from "./setup/workspace";

/**
 * Workspace ingest: MB/s of source text stored as pack + index in (local) R2, for tar, tar.gz and
 * zip bodies fetched from the setup's HTTP server, with the search index and without it
 * (alternating, so both see the same machine), next to native extraction of the same archive to
 * disk in the same run. Plus one full readMany pass (what grep does) and its subrequests, and the
 * peak resident memory of workerd while it ingests archives of 100 MB of source text.
 */
const RUNS = 5;
const MB = 1e6;

/** Bytes of a workspace's search index objects. */
async function searchIndexBytes(workspaceId: string): Promise<number> {
  const listed = await env.STORE.list({ prefix: `workspaces/${workspaceId}/search/` });
  return listed.objects.reduce((sum, o) => sum + o.size, 0);
}

/**
 * Milliseconds of the search index builder's own computation, summed since the last reset: each
 * call's synchronous part (an async method runs synchronously up to its first await, where it
 * starts or waits for a shard upload; the uploads themselves, 1.6 MB in all, are not counted). A
 * measure of the index's share that does not depend on two separate ingests seeing the same machine.
 */
const builderTime = (() => {
  const proto = SearchIndexBuilder.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const clock = { ms: 0 };
  for (const name of ["beginFile", "addBytes", "endFile", "finish"]) {
    const original = proto[name]!;
    proto[name] = function (this: unknown, ...args: unknown[]) {
      const start = performance.now();
      const result = original.apply(this, args);
      clock.ms += performance.now() - start;
      return result;
    };
  }
  return clock;
})();

type Archive = WorkspaceBenchInput["archives"][number];

/**
 * Ingests `archive` `runs` times with the search index and `runs` times without, alternating; with
 * `pace`, the body arrives at about that many bytes per second. The run-0 ingest with the index is
 * kept (its workspace is read back below); the others are deleted.
 */
async function withAndWithout(input: WorkspaceBenchInput, archive: Archive, runs: number, pace = 0) {
  const samples = { with: [] as number[], without: [] as number[], builder: [] as number[] };
  let indexBytes = 0;
  for (let run = 0; run < runs; run++) {
    for (const searchIndex of run % 2 === 0 ? [true, false] : [false, true]) {
      const workspaceId = `w_bench_${archive.format.replace(".", "_")}${pace ? "_paced" : ""}_${run}_${searchIndex ? "i" : "n"}`;
      builderTime.ms = 0;
      const start = performance.now();
      const response = await fetch(`${input.baseUrl}/${archive.path}${pace ? `?pace=${pace}` : ""}`);
      const result = await ingestWorkspace(env.STORE, response.body!, {
        workspaceId,
        owner: null,
        contentType: archive.contentType,
        searchIndex,
      });
      (searchIndex ? samples.with : samples.without).push(performance.now() - start);
      if (searchIndex) samples.builder.push(builderTime.ms);
      expect(result).toMatchObject({ files: input.files, bytes: input.sourceBytes, skipped: [] });
      if (searchIndex && run === 0) indexBytes = await searchIndexBytes(workspaceId);
      if (run > 0 || !searchIndex || pace) await deleteWorkspace(env.STORE, workspaceId);
    }
  }
  const withMs = median(samples.with);
  const withoutMs = median(samples.without);
  const shares = samples.builder.map((ms, i) => ms / samples.with[i]!);
  return { withMs, withoutMs, builderMs: median(samples.builder), shares, indexBytes };
}

/** An upload over a link of about 80 Mbit/s: 10 MB/s. */
const PACE_BYTES_PER_SECOND = 10_000_000;
const PACED_RUNS = 3;

it("workspace ingest throughput, with and without the search index, vs native extraction", async () => {
  const input: WorkspaceBenchInput = inject("workspaceBench");
  const rows: string[][] = [];
  const mbps = (ms: number) => (input.sourceBytes / MB / (ms / 1000)).toFixed(1);
  const row = (label: string, archive: Archive, runs: number, r: Awaited<ReturnType<typeof withAndWithout>>, baseline: string) => [
    label,
    `${(archive.bytes / MB).toFixed(1)} MB`,
    `${r.withMs.toFixed(0)} ms = ${mbps(r.withMs)} MB/s (median of ${runs})`,
    `${r.withoutMs.toFixed(0)} ms = ${mbps(r.withoutMs)} MB/s (median of ${runs})`,
    `${(((r.withMs - r.withoutMs) / r.withoutMs) * 100).toFixed(1)} %`,
    `${r.builderMs.toFixed(0)} ms = ${(median(r.shares) * 100).toFixed(1)} % (${(Math.min(...r.shares) * 100).toFixed(1)}-${(Math.max(...r.shares) * 100).toFixed(1)})`,
    r.indexBytes ? `${(r.indexBytes / MB).toFixed(2)} MB (${((r.indexBytes / input.sourceBytes) * 100).toFixed(1)} %)` : "",
    baseline,
  ];
  for (const archive of input.archives) {
    const r = await withAndWithout(input, archive, RUNS);
    rows.push(
      row(archive.format, archive, RUNS, r, `${archive.baseline}: ${archive.baselineMs.toFixed(0)} ms = ${mbps(archive.baselineMs)} MB/s`),
    );
  }
  // The same tar arriving at network pace: the index is built while the ingest waits for bytes.
  const tar = input.archives.find((a) => a.format === "tar")!;
  const paced = await withAndWithout(input, tar, PACED_RUNS, PACE_BYTES_PER_SECOND);
  rows.push(row(`tar, body at ${PACE_BYTES_PER_SECOND / MB} MB/s`, tar, PACED_RUNS, paced, "-"));

  // One pass over every file, like grep -r: coalesced range reads from the pack.
  const { bucket, counter } = countingGets(env.STORE);
  const snapshot = await loadWorkspace(bucket, "w_bench_tar_0_i");
  counter.gets = 0;
  let bytes = 0;
  const start = performance.now();
  for await (const file of snapshot.readMany(snapshot.index.files.map((f) => f.path))) bytes += file.bytes.byteLength;
  const readMs = performance.now() - start;
  expect(bytes).toBe(input.sourceBytes);

  const header = [
    "format",
    "archive",
    "with search index",
    "without",
    "with / without - 1",
    "index builder's computation: median, share of the ingest (range)",
    "index size (of source)",
    "baseline (same run, to disk)",
  ];
  const table = [header, ...rows].map((r) => `| ${r.join(" | ")} |`);
  table.splice(1, 0, `| ${header.map(() => "---").join(" | ")} |`);
  console.log(
    `\nworkspace ingest: ${input.files} files, ${(input.sourceBytes / MB).toFixed(1)} MB of source text\n${table.join("\n")}\n` +
      `readMany over all ${input.files} files: ${readMs.toFixed(0)} ms, ${counter.gets} R2 range reads, ` +
      `${(bytes / MB / (readMs / 1000)).toFixed(1)} MB/s\n`,
  );
});

it("workspace ingest of a 100 MB archive: time and workerd peak memory", async () => {
  const input: WorkspaceBenchInput = inject("workspaceBench");
  const { large } = input;
  const memory = async (step: "start" | "stop") => (await fetch(`${input.baseUrl}/memory/${step}`, { method: "POST" })).json();
  const rows: string[][] = [];
  const searchIndex = large.searchIndex;
  for (const archive of large.archives) {
    const workspaceId = `w_bench_large_${archive.format.replace(".", "_")}`;
    await memory("start");
    const start = performance.now();
    const response = await fetch(`${input.baseUrl}/${archive.path}`);
    const result = await ingestWorkspace(env.STORE, response.body!, {
      workspaceId,
      owner: null,
      contentType: archive.contentType,
      searchIndex,
    });
    const ms = performance.now() - start;
    const reading = (await memory("stop")) as MemoryReading;
    expect(result).toMatchObject({ files: large.files, bytes: large.sourceBytes, skipped: [] });
    await deleteWorkspace(env.STORE, workspaceId);
    rows.push([
      archive.format,
      `${archive.bytes.toLocaleString("en-US")} B (${(archive.bytes / MB).toFixed(1)} MB)`,
      `${ms.toFixed(0)} ms`,
      `${(large.sourceBytes / MB / (ms / 1000)).toFixed(1)} MB/s`,
      `${(reading.startRssBytes / MB).toFixed(0)} MB`,
      `+${((reading.peakRssBytes - reading.startRssBytes) / MB).toFixed(1)} MB`,
      `${reading.hwmReset ? "VmHWM reset" : "no VmHWM reset"}, ${reading.samples} samples, pids ${reading.pids.join(",")}`,
    ]);
  }
  const header = ["format", "archive", "ingest", "MB/s (source)", "workerd RSS before", "peak RSS growth", "probe"];
  const table = [header, ...rows].map((r) => `| ${r.join(" | ")} |`);
  table.splice(1, 0, `| ${header.map(() => "---").join(" | ")} |`);
  console.log(
    `\nworkspace ingest, large (search index ${searchIndex ? "on" : "off"}): ${large.files} files, ${large.sourceBytes.toLocaleString("en-US")} B of source text\n${table.join("\n")}\n`,
  );
});
