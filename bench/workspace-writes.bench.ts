import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { bashTool } from "../src/tools/bash";
import { ingestWorkspace } from "../src/workspace/ingest";
import { SqliteOverlay } from "../src/workspace/overlay";
import { openWorkspace } from "../src/workspace/snapshot-workspace-fs";
import type { WorkspaceFs } from "../src/workspace/workspace-fs";
import { MemoryWorkspaceFs, toolContext } from "../test/helpers/memory-fs";
import { streamOf, tarOf } from "../test/workspace/archives";

/**
 * Shell commands that write, move and delete many files, over a snapshot of 20,000 files with a
 * session's SQLite overlay, next to the same commands over the same files held in memory
 * (`MemoryWorkspaceFs`, the shell's own cost) in the same run. Each step runs on the state the one
 * before left; medians of ROUNDS fresh sessions.
 */
const ROUNDS = 3;
const DIRS = 100;
const FILES_PER_DIR = 200;

const STEPS = [
  {
    what: "create 2,000 files (loop)",
    command: "mkdir -p new && for a in $(seq 1 20); do for b in $(seq 1 100); do : > new/a$a-$b; done; done",
  },
  { what: "create 2,000 more (loop)", command: "for a in $(seq 21 40); do for b in $(seq 1 100); do : > new/a$a-$b; done; done" },
  { what: "sed -i over 200 files", command: "sed -i s/line/LINE/ src/d1/*.txt" },
  { what: "mv a directory of 200 files", command: "mv src/d2 src/moved" },
  { what: "rm -r a directory of 200 files", command: "rm -r src/d3" },
  { what: "rm 4,000 files (glob)", command: "rm new/*" },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function runSteps(fs: WorkspaceFs): Promise<number[]> {
  const times: number[] = [];
  for (const step of STEPS) {
    const start = performance.now();
    const result = await bashTool.execute({ command: step.command, timeoutMs: 60_000 }, toolContext(fs, { allowWrite: true }));
    times.push(performance.now() - start);
    expect(result.error, `${step.what}: ${result.text}`).toBe(false);
  }
  return times;
}

it("bash writes over a 20,000-file snapshot vs in memory", async () => {
  const files: Record<string, string> = {};
  for (let d = 0; d < DIRS; d++) for (let f = 0; f < FILES_PER_DIR; f++) files[`src/d${d}/f${f}.txt`] = `line ${d} ${f}\n`;
  await ingestWorkspace(env.STORE, streamOf(await tarOf(files)), { workspaceId: "w_bench_writes", owner: null });
  const snapshot: number[][] = [];
  const memory: number[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    snapshot.push(
      await runInDurableObject(env.SESSIONS.getByName(`bench-writes-${round}`), async (_i, state) => {
        const fs = await openWorkspace(env.STORE, "w_bench_writes", new SqliteOverlay(state.storage.sql));
        const times = await runSteps(fs);
        expect([fs.files().length, fs.dirs().length]).toEqual([19_800, 100]);
        return times;
      }),
    );
    const bytes = Object.fromEntries(Object.entries(files).map(([path, text]) => [path, new TextEncoder().encode(text)]));
    memory.push(await runSteps(new MemoryWorkspaceFs(bytes)));
  }
  console.log("| step | snapshot + overlay | in memory | ratio |\n| --- | --- | --- | --- |");
  STEPS.forEach((step, i) => {
    const s = median(snapshot.map((r) => r[i]!));
    const m = median(memory.map((r) => r[i]!));
    console.log(`| ${step.what} | ${s.toFixed(0)} ms | ${m.toFixed(0)} ms | ${(s / m).toFixed(2)}x |`);
  });
});
