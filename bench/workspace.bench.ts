import { env } from "cloudflare:workers";
import { expect, inject, it } from "vitest";
import { ingestWorkspace } from "../src/workspace/ingest";
import { deleteWorkspace, loadWorkspace } from "../src/workspace/snapshot";
import type { MemoryReading } from "./setup/probes/workerd-memory";
import type { WorkspaceBenchInput } from "./setup/workspace";

/**
 * Workspace ingest: MB/s of source text stored as pack + index in (local) R2, for tar, tar.gz and
 * zip bodies fetched from the setup's HTTP server, next to native extraction of the same archive
 * to disk in the same run. Plus one full readMany pass (what grep does) and its subrequests, and
 * the peak resident memory of workerd while it ingests archives of 100 MB of source text.
 */
const RUNS = 3;
const MB = 1e6;

function median(samples: number[]): number {
  return [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
}

function countingGets(bucket: R2Bucket) {
  const counter = { gets: 0 };
  const proxy = new Proxy(bucket, {
    get(target, property) {
      if (property === "get") {
        return (key: string, options?: R2GetOptions) => {
          counter.gets++;
          return target.get(key, options);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { bucket: proxy as R2Bucket, counter };
}

it("workspace ingest throughput vs native extraction", async () => {
  const input: WorkspaceBenchInput = inject("workspaceBench");
  const rows: string[][] = [];
  for (const archive of input.archives) {
    const samples: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const workspaceId = `w_bench_${archive.format.replace(".", "_")}_${run}`;
      const start = performance.now();
      const response = await fetch(`${input.baseUrl}/${archive.path}`);
      const result = await ingestWorkspace(env.STORE, response.body!, {
        workspaceId,
        owner: null,
        contentType: archive.contentType,
      });
      samples.push(performance.now() - start);
      expect(result).toMatchObject({ files: input.files, bytes: input.sourceBytes, skipped: [] });
      if (run > 0) await deleteWorkspace(env.STORE, workspaceId);
    }
    const ms = median(samples);
    rows.push([
      archive.format,
      `${(archive.bytes / MB).toFixed(1)} MB`,
      `${ms.toFixed(0)} ms`,
      `${(input.sourceBytes / MB / (ms / 1000)).toFixed(1)} MB/s`,
      `${archive.baseline}: ${archive.baselineMs.toFixed(0)} ms = ${(input.sourceBytes / MB / (archive.baselineMs / 1000)).toFixed(1)} MB/s`,
    ]);
  }

  // One pass over every file, like grep -r: coalesced range reads from the pack.
  const { bucket, counter } = countingGets(env.STORE);
  const snapshot = await loadWorkspace(bucket, "w_bench_tar_0");
  counter.gets = 0;
  let bytes = 0;
  const start = performance.now();
  for await (const file of snapshot.readMany(snapshot.index.files.map((f) => f.path))) bytes += file.bytes.byteLength;
  const readMs = performance.now() - start;
  expect(bytes).toBe(input.sourceBytes);

  const header = ["format", "archive", "ingest (median of 3)", "ingest MB/s", "baseline (same run, to disk)"];
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
  for (const archive of large.archives) {
    const workspaceId = `w_bench_large_${archive.format.replace(".", "_")}`;
    await memory("start");
    const start = performance.now();
    const response = await fetch(`${input.baseUrl}/${archive.path}`);
    const result = await ingestWorkspace(env.STORE, response.body!, { workspaceId, owner: null, contentType: archive.contentType });
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
    `\nworkspace ingest, large: ${large.files} files, ${large.sourceBytes.toLocaleString("en-US")} B of source text\n${table.join("\n")}\n`,
  );
});
