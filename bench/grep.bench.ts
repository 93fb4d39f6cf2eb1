import { env } from "cloudflare:workers";
import { expect, inject, it } from "vitest";
import { FIND_MAX_LIMIT, findTool } from "../src/tools/find";
import { grepTool, warmGrep } from "../src/tools/grep";
import { searchTextCache } from "../src/workspace/search/text-cache";
import { openWorkspace } from "../src/workspace/snapshot-workspace-fs";
import type { WorkspaceFs } from "../src/workspace/workspace-fs";
import { MemoryWorkspaceFs, toolContext } from "../test/helpers/memory-fs";
import { countingGets } from "./counting-bucket";
import { EmptyOverlay } from "./empty-overlay";
import { freshIsolate } from "./fresh-isolate";
import { ingestGrepTree, totalMatches } from "./grep-tree";
import { median } from "./median";
import type { GrepBenchCase, GrepBenchInput } from "./setup/grep";

/**
 * The grep and find tools over >= 30 MB of real source text, next to ripgrep `rg -n` and GNU
 * `grep -rn` / `find` on the same tree unpacked on local disk (timed by bench/setup/grep.ts in the
 * same run). grep runs over a real snapshot (tar ingested into local R2, read through
 * SnapshotWorkspaceFs): cold = what a fresh object's first call does in an isolate that has never
 * read the snapshot (open it, read the search index's directory, its posting lists and the candidate
 * pieces from R2; see `freshIsolate`), warm = the
 * next call in the same object (the pack is read as ingested: 8 MiB chunk objects), after warm-up = a
 * fresh object's first call after the warm-up a run does while its model answers. Also: the same snapshot
 * stored without a search index (as older snapshots are), and an in-memory WorkspaceFs (the search
 * alone, decoding every file on every call).
 */
const RUNS = 5;
const MB = 1e6;

const grep = (fs: WorkspaceFs, c: GrepBenchCase) => grepTool.execute(grepTool.parameters.parse(c.args), toolContext(fs));

/** Cold: a fresh object's first call in an isolate that has never read the snapshot. Median of RUNS. */
async function cold(workspaceId: string, c: GrepBenchCase): Promise<{ ms: number; gets: number }> {
  const samples: number[] = [];
  let gets = 0;
  for (let i = 0; i < RUNS; i++) {
    await freshIsolate(workspaceId);
    const { bucket, counter } = countingGets(env.STORE);
    const start = performance.now();
    const fs = await openWorkspace(bucket, workspaceId, new EmptyOverlay());
    const result = await grep(fs, c);
    samples.push(performance.now() - start);
    expect(totalMatches(result.text)).toBe(c.gnuMatches);
    gets = counter.gets;
  }
  return { ms: median(samples), gets };
}

/**
 * A fresh object's first call after a run's warm-up (what the run does while the model answers its
 * first request): the warm-up timed alone (how long the model's answer must take to hide it), then
 * the first grep. Medians of RUNS.
 */
async function afterWarmUp(workspaceId: string, c: GrepBenchCase): Promise<{ warmUpMs: number; ms: number }> {
  const warmUps: number[] = [];
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    await freshIsolate(workspaceId);
    const start = performance.now();
    const fs = await openWorkspace(env.STORE, workspaceId, new EmptyOverlay());
    await warmGrep(fs, new AbortController().signal);
    warmUps.push(performance.now() - start);
    const first = performance.now();
    const result = await grep(fs, c);
    samples.push(performance.now() - first);
    expect(totalMatches(result.text)).toBe(c.gnuMatches);
  }
  return { warmUpMs: median(warmUps), ms: median(samples) };
}

/** Warm: calls after the first in the same object. Median of RUNS. */
async function warm(fs: WorkspaceFs, c: GrepBenchCase): Promise<number> {
  await grep(fs, c);
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    const result = await grep(fs, c);
    samples.push(performance.now() - start);
    expect(totalMatches(result.text)).toBe(c.gnuMatches);
  }
  return median(samples);
}

it("grep over a snapshot with a search index, cold and warm, vs rg -n and GNU grep -rn on local disk", async () => {
  const input: GrepBenchInput = inject("grepBench");
  await ingestGrepTree(input, "w_grep_bench");
  await ingestGrepTree(input, "w_grep_bench_plain", false);
  const plain = await openWorkspace(env.STORE, "w_grep_bench_plain", new EmptyOverlay());
  const memory = new MemoryWorkspaceFs();
  for await (const { path, bytes } of plain.readFiles(plain.files())) memory.put(path, bytes);

  const ms = (n: number) => `${n.toFixed(0)} ms`;
  const ratio = (a: number, b: number | undefined) => (b === undefined ? "-" : `${(a / b).toFixed(2)}x`);
  const runs = new Map<
    GrepBenchCase,
    { stored: { ms: number; gets: number }; warm: number; warmed: { warmUpMs: number; ms: number }; plain: string; memory: number }
  >();
  // One cold call first, not counted: the two ingests above leave garbage that the first calls
  // would otherwise collect, which made whichever search came first 1.5-2.5x slower in every run.
  await cold("w_grep_bench", input.cases[0]!);
  for (const c of input.cases) {
    if (c.rg) expect(c.rg.matches).toBe(c.gnuMatches);
    const stored = await cold("w_grep_bench", c);
    searchTextCache.clear();
    const indexed = await openWorkspace(env.STORE, "w_grep_bench", new EmptyOverlay());
    const warmMs = await warm(indexed, c);
    const warmed = await afterWarmUp("w_grep_bench", c);
    const plainCold = await cold("w_grep_bench_plain", c);
    searchTextCache.clear();
    const plainWarm = await warm(await openWorkspace(env.STORE, "w_grep_bench_plain", new EmptyOverlay()), c);
    runs.set(c, { stored, warm: warmMs, warmed, plain: `${ms(plainCold.ms)} / ${ms(plainWarm)}`, memory: await warm(memory, c) });
  }
  const rows: string[][] = [];
  for (const c of input.cases) {
    const run = runs.get(c)!;
    rows.push([
      `${c.label}: \`${c.args.pattern}\`${c.args.ignoreCase ? " (-i)" : ""}`,
      String(c.gnuMatches),
      `${ms(run.stored.ms)} (${run.stored.gets} R2 reads)`,
      ms(run.warm),
      `${ms(run.warmed.ms)} (warm-up ${ms(run.warmed.warmUpMs)})`,
      c.rg ? ms(c.rg.ms) : "-",
      ms(c.gnuMs),
      ratio(run.stored.ms, c.rg?.ms),
      ratio(run.warm, c.rg?.ms),
      ratio(run.warmed.ms, c.rg?.ms),
      run.plain,
      ms(run.memory),
    ]);
  }
  searchTextCache.clear();

  const findRows: string[][] = [];
  for (const [view, fs] of [
    ["snapshot", plain],
    ["in-memory", memory],
  ] as const) {
    const samples: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      // find lists at most FIND_MAX_LIMIT paths (2,000); this tree has 417 for the pattern.
      expect(input.find.gnuResults).toBeLessThanOrEqual(FIND_MAX_LIMIT);
      const result = await findTool.execute(
        findTool.parameters.parse({ pattern: input.find.pattern, limit: FIND_MAX_LIMIT }),
        toolContext(fs),
      );
      samples.push(performance.now() - start);
      expect(result.text.split("\n").length).toBe(input.find.gnuResults);
    }
    findRows.push([`find \`${input.find.pattern}\``, view, String(input.find.gnuResults), ms(median(samples)), ms(input.find.gnuMs)]);
  }

  const table = (header: string[], body: string[][]) =>
    [header, header.map(() => "---"), ...body].map((r) => `| ${r.join(" | ")} |`).join("\n");
  if (!input.rgVersion.startsWith("ripgrep")) console.log(`\nNotice: no rg column (${input.rgVersion}).`);
  console.log(
    `\nGrep bench: ${input.files} files, ${(input.sourceBytes / MB).toFixed(1)} MB of .js/.ts from node_modules; median of ${RUNS} runs each, after one cold call not counted.\n` +
      `${input.rgVersion}; ${input.grepVersion} (LC_ALL=C). Commands: ${input.cases.map((c) => `${c.rg?.command ?? "(no rg)"}; ${c.gnuCommand}`).join("; ")}\n\n` +
      table(
        [
          "search",
          "matches",
          "cold: fresh object, 1st call",
          "warm: 2nd call",
          "fresh object, 1st call after the run's warm-up",
          "rg -n",
          "GNU grep -rn",
          "cold / rg",
          "warm / rg",
          "after warm-up / rg",
          "no index: cold / warm",
          "in-memory fs",
        ],
        rows,
      ) +
      `\n\n${table(["search", "view", "results", "tool", "GNU find"], findRows)}\n`,
  );
});
