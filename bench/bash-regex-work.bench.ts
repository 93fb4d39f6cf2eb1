import { expect, it } from "vitest";
import { BASH_REGEX_STEPS_PER_MS } from "../src/domain/limits";
import { bashTool } from "../src/tools/bash";
import { MemoryWorkspaceFs, toolContext } from "../test/helpers/memory-fs";
import { median } from "./median";

/**
 * The regex work a bash call reports (NFA thread steps, DFA characters: the patched just-bash,
 * `bash-step-deadline.ts`) against the time it takes, in workerd: the rate that
 * BASH_REGEX_STEPS_PER_MS must stay above, so that locally the clock, not the count, stops a step.
 * Quadratic matches are what the bound is for; the ordinary commands show how far below it everyday
 * work stays. Median of RUNS; each command runs under the 60 s timeout, so nothing stops it.
 */
const RUNS = 3;

const a = (n: number) => `${"a".repeat(n)}\n`;
const CASES: { name: string; files: Record<string, string>; command: string; output: string }[] = [
  {
    name: "quadratic replace: `sed -E 's/a*b|a/x/g'`, 5,000 `a`",
    files: { "f.txt": a(5_000) },
    command: "sed -E 's/a*b|a/x/g' f.txt | wc -c",
    output: "5001",
  },
  {
    name: "one long match: `grep -c` of 8,192 `a` in 20,000 `a`",
    files: { "f.txt": a(20_000) },
    command: `grep -c '${"a".repeat(8_192)}' f.txt`,
    output: "1",
  },
  {
    name: "glob: `case` of 32 `*a` and a `b` over 200,000 `a`",
    files: { "f.txt": a(200_000) },
    command: `case "$(cat f.txt)" in ${"*a".repeat(32)}b) echo y;; *) echo n;; esac`,
    output: "n",
  },
  {
    name: "everyday: `sed 's/foo/bar/g'`, 100,000 short lines",
    files: { "f.txt": "hello foo world\n".repeat(100_000) },
    command: "sed 's/foo/bar/g' f.txt | wc -l",
    output: "100000",
  },
  {
    name: "everyday: `grep -o foo`, one 200 KB line (50,000 matches)",
    files: { "f.txt": `${"foo ".repeat(50_000)}\n` },
    command: "grep -o foo f.txt | wc -l",
    output: "50000",
  },
  {
    name: "everyday: `awk gsub`, 10,000 short lines",
    files: { "f.txt": "hello foo world\n".repeat(10_000) },
    command: `awk '{ n += gsub(/o+/, "0") } END { print n }' f.txt`,
    output: "30000",
  },
];

it("regex steps per millisecond, by the kind of work", async () => {
  const hooks = globalThis as { __piHarnessStepWork?: (units: number) => boolean };
  const reported = hooks.__piHarnessStepWork!;
  let steps = 0;
  hooks.__piHarnessStepWork = (units) => {
    steps += units;
    return reported(units);
  };
  const rows: string[] = [];
  try {
    for (const c of CASES) {
      const times: number[] = [];
      let counted = 0;
      for (let i = 0; i < RUNS; i++) {
        const fs = new MemoryWorkspaceFs(c.files);
        steps = 0;
        const start = performance.now();
        const out = await bashTool.execute({ command: c.command, timeoutMs: 60_000 }, toolContext(fs));
        times.push(performance.now() - start);
        expect([out.error, out.text.trim()], `${c.name}: ${out.text.slice(-300)}`).toEqual([false, c.output]);
        counted = steps;
      }
      const ms = median(times);
      rows.push(`| ${c.name} | ${ms.toFixed(0)} ms | ${(counted / 1e6).toFixed(1)} M | ${(counted / ms / 1000).toFixed(1)} M/s |`);
    }
  } finally {
    hooks.__piHarnessStepWork = reported;
  }
  console.log(
    `\nRegex work bench: steps a bash call reports against its time, median of ${RUNS} (bound: ${BASH_REGEX_STEPS_PER_MS / 1000} M steps per second of the timeout)\n` +
      `| command | time | steps | steps per second |\n| --- | --- | --- | --- |\n${rows.join("\n")}`,
  );
});
