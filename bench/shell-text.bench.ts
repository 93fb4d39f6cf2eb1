import { expect, inject, it } from "vitest";
import { bashTool } from "../src/tools/bash";
import { MemoryWorkspaceFs, toolContext } from "../test/helpers/memory-fs";
import { LISTING_LINES, listingText, SHELL_TEXT_COMMANDS } from "./fixtures/text-lines";
import { median } from "./median";
import type { ShellTextBenchInput } from "./setup/shell-text";

/**
 * Text through the shell (the bash tool, in workerd): a file of 80,000 lines (3.4 MB) read, sorted
 * and piped as a model does, next to the same commands with GNU tools on local disk (timed by
 * bench/setup/shell-text.ts). just-bash hands text between commands, and reads files, as strings of
 * bytes; it built them a character at a time until a patch (`patches/`): 0.6-2.4 s for these
 * commands. Median of RUNS.
 */
const RUNS = 5;

it("the shell over a 3.4 MB listing: reads, sorts and pipes, next to GNU tools", async () => {
  const input: ShellTextBenchInput = inject("shellTextBench");
  const fs = new MemoryWorkspaceFs({ "a.txt": listingText(LISTING_LINES), "u.txt": listingText(LISTING_LINES, "värde") });
  const rows: string[] = [];
  for (const [i, { command, output }] of SHELL_TEXT_COMMANDS.entries()) {
    const samples: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const start = performance.now();
      const result = await bashTool.execute({ command, timeoutMs: 60_000 }, toolContext(fs));
      samples.push(performance.now() - start);
      expect([command, result.text]).toEqual([command, output]);
    }
    const ms = median(samples);
    const gnu = input.gnuMs[i] ?? null;
    rows.push(
      `| \`${command.replaceAll("|", "\\|")}\` | ${ms.toFixed(0)} ms | ${gnu === null ? "-" : `${gnu.toFixed(0)} ms`} | ${gnu === null ? "-" : `${(ms / gnu).toFixed(1)}x`} |`,
    );
  }
  console.log(
    [
      "",
      `Shell text (${LISTING_LINES} lines, median of ${RUNS})`,
      "| command | bash tool | GNU (sh -c) | ratio |",
      "| --- | --- | --- | --- |",
      ...rows,
    ].join("\n"),
  );
});
