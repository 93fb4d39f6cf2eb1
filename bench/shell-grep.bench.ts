import { env } from "cloudflare:workers";
import { expect, inject, it } from "vitest";
import { bashTool } from "../src/tools/bash";
import { warmGrep } from "../src/tools/grep";
import { ingestWorkspace } from "../src/workspace/ingest";
import { openWorkspace } from "../src/workspace/snapshot-workspace-fs";
import { toolContext } from "../test/helpers/memory-fs";
import { tarOf } from "../test/workspace/archives";
import { countingGets } from "./counting-bucket";
import { EmptyOverlay } from "./empty-overlay";
import { freshIsolate } from "./fresh-isolate";
import { ingestGrepTree } from "./grep-tree";
import { median } from "./median";
import type { GrepBenchInput } from "./setup/grep";

/**
 * The shell's `grep -rn` over a snapshot (the grep bench's tree: >= 30 MB of .js/.ts from
 * node_modules), as a model runs it through the bash tool: just-bash's grep reads the files through
 * the snapshot, 50 at a time, as text (served from the isolate's text cache when grep or a warm-up
 * filled it). Cold = a fresh object in an isolate that has never read the snapshot (its caches
 * emptied); warm = the same command again in the same object (the first call left the files' text
 * in the cache, as far as it has room: 40 MiB); after warm-up = a fresh object's first call after
 * the warm-up a run does while its model answers. R2 reads counted. Median of RUNS; the same search with GNU grep -rn on
 * local disk (timed by bench/setup/grep.ts) beside it.
 */
const RUNS = 5;

it("the shell's grep -rn over a snapshot: time and R2 reads, cold and warm", async () => {
  const input: GrepBenchInput = inject("grepBench");
  await ingestGrepTree(input, "w_shell_grep");
  const c = input.cases.find((x) => x.args.pattern === "deprecated")!;
  const command = "grep -rn deprecated . | wc -l";
  const cold: number[] = [];
  const warm: number[] = [];
  const warmedUp: number[] = [];
  let coldGets = 0;
  let warmGets = 0;
  let warmedUpGets = 0;
  for (let i = 0; i < RUNS; i++) {
    // A fresh object's first call after the warm-up a run does while its model answers (it fills
    // the isolate's text cache, which the shell's reads are served from).
    await freshIsolate("w_shell_grep");
    const warming = countingGets(env.STORE);
    const warmFs = await openWorkspace(warming.bucket, "w_shell_grep", new EmptyOverlay());
    await warmGrep(warmFs, new AbortController().signal);
    const before = warming.counter.gets;
    const start = performance.now();
    const result = await bashTool.execute({ command }, toolContext(warmFs));
    warmedUp.push(performance.now() - start);
    expect(result.text.trim()).toBe(String(c.gnuMatches));
    warmedUpGets = warming.counter.gets - before;
  }
  for (let i = 0; i < RUNS; i++) {
    await freshIsolate("w_shell_grep");
    const { bucket, counter } = countingGets(env.STORE);
    const fs = await openWorkspace(bucket, "w_shell_grep", new EmptyOverlay());
    for (const samples of [cold, warm]) {
      const before = counter.gets;
      const start = performance.now();
      const result = await bashTool.execute({ command }, toolContext(fs));
      samples.push(performance.now() - start);
      expect(result.text.trim()).toBe(String(c.gnuMatches));
      if (samples === cold) coldGets = counter.gets - before;
      else warmGets = counter.gets - before;
    }
  }
  console.log(
    `\nShell grep bench: \`${command}\` over ${input.files} files (${(input.sourceBytes / 1e6).toFixed(1)} MB), median of ${RUNS}\n` +
      `| run | time | R2 reads | GNU grep -rn -F on local disk |\n| --- | --- | --- | --- |\n` +
      `| cold: fresh object, 1st call | ${median(cold).toFixed(0)} ms | ${coldGets} | ${c.gnuMs.toFixed(0)} ms |\n` +
      `| warm: 2nd call | ${median(warm).toFixed(0)} ms | ${warmGets} | |\n` +
      `| fresh object, 1st call after the run's warm-up | ${median(warmedUp).toFixed(0)} ms | ${warmedUpGets} | |`,
  );
});

it("the shell's grep -r over large files: time and R2 reads, cold", async () => {
  // 42 text files of 1-2 MB, five small files next to each (59.5 MB of tar), as hunt 88 built it.
  const files: Record<string, string> = {};
  const line = "const value = compute(alpha, beta); // some text here\n";
  for (let d = 0; d < 6; d++)
    for (let i = 0; i < 7; i++) {
      const big = line.repeat(Math.floor((1_000_000 + ((i * 137_000) % 1_000_000)) / line.length));
      files[`c${d}/big${i}.js`] = i === 3 ? `${big}needle\n` : big;
      for (let j = 0; j < 5; j++) files[`c${d}/small${i}_${j}.js`] = `needle ${j}\n`;
    }
  const tar = await tarOf(files);
  await ingestWorkspace(env.STORE, new Response(tar).body!, {
    workspaceId: "w_shell_grep_big",
    owner: null,
    contentType: "application/x-tar",
  });
  const command = "grep -rc needle c0 c1 c2 | grep -v ':0$' | wc -l";
  const samples: number[] = [];
  let gets = 0;
  // One run first, not counted: the first call in the isolate took over 2 s (compiling, collecting).
  for (let i = 0; i <= RUNS; i++) {
    await freshIsolate("w_shell_grep_big");
    const { bucket, counter } = countingGets(env.STORE);
    const fs = await openWorkspace(bucket, "w_shell_grep_big", new EmptyOverlay());
    const start = performance.now();
    const result = await bashTool.execute({ command }, toolContext(fs));
    if (i > 0) samples.push(performance.now() - start);
    gets = counter.gets;
    expect(result.text.trim()).toBe("108");
  }
  console.log(
    `\nShell grep bench, large files: \`${command}\` over half of ${(tar.byteLength / 1e6).toFixed(1)} MB, cold, median of ${RUNS}: ` +
      `${median(samples).toFixed(0)} ms, ${gets} R2 reads`,
  );
});
