import { env } from "cloudflare:workers";
import { expect, inject, it } from "vitest";
import { grepTool } from "../src/tools/grep";
import { LineMatcher } from "../src/tools/grep-matcher";
import { openWorkspace } from "../src/workspace/snapshot-workspace-fs";
import { toolContext } from "../test/helpers/memory-fs";
import { EmptyOverlay } from "./empty-overlay";
import { ingestGrepTree, totalMatches } from "./grep-tree";
import { median } from "./median";
import type { GrepBenchInput } from "./setup/grep";

/**
 * The grep tool, warm, over the grep bench's tree (>= 30 MB of .js/.ts) for 52 patterns of the
 * shapes coding agents write, next to `rg -n` on the same tree on local disk (timed by
 * bench/setup/grep.ts in the same run): the shapes a few hand-picked rows miss, such as a class
 * repeated first (`[a-z]+_[a-z]+`, 5x rg before stop 48). Every count must equal rg's.
 */
const RUNS = 5;

it("grep for the patterns agents write, warm, vs rg -n on local disk", async (context) => {
  const input: GrepBenchInput = inject("grepBench");
  if (input.commonPatterns.length === 0) {
    console.log(`grep-patterns: no rg column (${input.rgVersion}), skipped`);
    context.skip();
  }
  await ingestGrepTree(input, "w_grep_patterns");
  const fs = await openWorkspace(env.STORE, "w_grep_patterns", new EmptyOverlay());
  const grep = (pattern: string) => grepTool.execute(grepTool.parameters.parse({ pattern }), toolContext(fs));
  // Reads and decodes every file into the isolate's text cache: what follows is warm.
  await grep("a grep that reads every file");

  const rows: string[][] = [];
  const ratios: number[] = [];
  for (const { pattern, rgMs, rgMatches } of input.commonPatterns) {
    expect([pattern, totalMatches((await grep(pattern)).text)]).toEqual([pattern, rgMatches]);
    const samples: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      await grep(pattern);
      samples.push(performance.now() - start);
    }
    const ms = median(samples);
    ratios.push(ms / rgMs);
    rows.push([
      `\`${pattern.replaceAll("|", "\\|")}\``,
      new LineMatcher(pattern, {}).engine,
      String(rgMatches),
      `${ms.toFixed(0)} ms`,
      `${rgMs.toFixed(0)} ms`,
      `${(ms / rgMs).toFixed(2)}x`,
    ]);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  console.log(
    [
      `${input.files} files, ${(input.sourceBytes / 1e6).toFixed(1)} MB; ${input.rgVersion}; warm = median of ${RUNS} calls after one.`,
      "",
      "| pattern | engine | matches | warm | rg -n | warm / rg |",
      "| --- | --- | --- | --- | --- | --- |",
      ...rows.map((r) => `| ${r.join(" | ")} |`),
      "",
      `warm / rg over ${ratios.length} patterns: median ${median(ratios).toFixed(2)}x, worst ${sorted[sorted.length - 1]!.toFixed(2)}x, ${ratios.filter((r) => r > 1).length} slower than rg`,
    ].join("\n"),
  );
});
