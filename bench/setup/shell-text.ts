import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { LISTING_LINES, listingText, SHELL_TEXT_COMMANDS } from "../fixtures/text-lines";
import { median } from "../median";

/**
 * Global setup for bench/shell-text.bench.ts, run in Node: times each of its commands with GNU
 * coreutils, sed and awk (`sh -c`) on the same files on local disk: the baseline of the shell's
 * figures. Median of RUNS.
 */
const RUNS = 5;

export interface ShellTextBenchInput {
  /** Per command (SHELL_TEXT_COMMANDS order): GNU's median ms, or null when it failed here. */
  gnuMs: (number | null)[];
}

declare module "vitest" {
  export interface ProvidedContext {
    shellTextBench: ShellTextBenchInput;
  }
}

export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "shell-text-"));
  writeFileSync(join(dir, "a.txt"), listingText(LISTING_LINES));
  writeFileSync(join(dir, "u.txt"), listingText(LISTING_LINES, "värde"));
  const gnuMs = SHELL_TEXT_COMMANDS.map(({ command }) => {
    const samples: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      const run = spawnSync("sh", ["-c", command], { cwd: dir, stdio: ["ignore", "ignore", "ignore"] });
      if (run.status !== 0) return null;
      samples.push(performance.now() - start);
    }
    return median(samples);
  });
  project.provide("shellTextBench", { gnuMs });
  return () => rmSync(dir, { recursive: true, force: true });
}
