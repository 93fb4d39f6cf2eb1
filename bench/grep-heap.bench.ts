import { env } from "cloudflare:workers";
import { expect, inject, it } from "vitest";
import { grepTool, warmGrep } from "../src/tools/grep";
import { SEARCH_TEXT_CACHE_BYTES, searchTextCache } from "../src/workspace/search/text-cache";
import { openWorkspace } from "../src/workspace/snapshot-workspace-fs";
import { toolContext } from "../test/helpers/memory-fs";
import { EmptyOverlay } from "./empty-overlay";
import { ingestGrepTree } from "./grep-tree";
import { HEAP_COLUMNS, heap, heapCells, liveReading, mb, measure } from "./heap-measure";
import type { GrepBenchInput } from "./setup/grep";
import type { HeapReading } from "./setup/probes/isolate-heap";

/**
 * In-isolate memory of grep over a snapshot, through a run's warm-up and the searches after it:
 * V8's heap and ArrayBuffer backing stores of this bench's isolate, read over the DevTools protocol
 * (see bench/workspace-heap.bench.ts). Run with `GREP_BENCH_MB=90` for a tree larger than the text
 * cache, where every search reads part of the tree from R2 again. Each R2 read waits for a sample,
 * so the readings fall where the reads' buffers are held. Only runs when vitest is started with
 * `--inspect=127.0.0.1:<port>`.
 */

/** A reading after a full GC every this many reads: what is live while reads are in flight (each costs a heap snapshot). */
const LIVE_EVERY_GETS = 4;
let gets = 0;

/** The bucket, each `get` followed by a heap sample once its body is read (the probe's timer gets no turn while JS runs). */
function sampledBucket(bucket: R2Bucket): R2Bucket {
  return new Proxy(bucket, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (property !== "get") return typeof value === "function" ? value.bind(target) : value;
      return async (key: string, options?: R2GetOptions) => {
        const object = await target.get(key, options);
        await (await fetch(`${heap!.url}/heap/sample`, { method: "POST" })).arrayBuffer();
        if (++gets % LIVE_EVERY_GETS === 0) await liveReading();
        return object;
      };
    },
  }) as R2Bucket;
}

it.skipIf(!heap)("grep over a snapshot: in-isolate V8 heap and ArrayBuffer backing stores", async () => {
  const input: GrepBenchInput = inject("grepBench");
  await ingestGrepTree(input, "w_grep_heap");
  searchTextCache.clear();
  const bucket = sampledBucket(env.STORE);
  const fs = await openWorkspace(bucket, "w_grep_heap", new EmptyOverlay());
  const other = await openWorkspace(bucket, "w_grep_heap", new EmptyOverlay());
  const grep = (pattern: string, on = fs) =>
    grepTool.execute(grepTool.parameters.parse({ pattern, literal: true }), toolContext(on)).then((r) => r.text.length);
  const rows: string[][] = [];
  const row = (label: string, ms: number, r: HeapReading) =>
    rows.push([...heapCells(label, ms, r), r.liveReadings > 0 ? mb(r.livePeak) : "-", `${mb(searchTextCache.bytes)}`, String(r.samples)]);
  const cases: [string, () => Promise<unknown>][] = [
    ["nothing (the isolate before any search)", async () => 1],
    ["the run's warm-up", () => warmGrep(fs, new AbortController().signal)],
    ["grep `return` (every file)", () => grep("return")],
    ["grep `return` again", () => grep("return")],
    ["grep `deprecated`", () => grep("deprecated")],
    ["grep `return` in two objects at once", () => Promise.all([grep("return"), grep("return", other)])],
  ];
  for (const [label, work] of cases) {
    const { reading, ms, value } = await measure(async () => {
      const value = await work();
      await liveReading();
      return value;
    });
    expect(value).toBeTruthy();
    row(label, ms, reading);
  }
  const header = [...HEAP_COLUMNS, "live after a full GC MB", "text cache after MB", "samples"];
  const table = [header, header.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`);
  console.log(
    `\ngrep, in-isolate memory: ${input.files} files, ${mb(input.sourceBytes)} MB of source text; text cache ${mb(SEARCH_TEXT_CACHE_BYTES)} MB\n${table.join("\n")}\n`,
  );
});
