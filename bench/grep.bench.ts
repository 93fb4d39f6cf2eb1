import { env } from "cloudflare:workers";
import { expect, inject, it } from "vitest";
import { findTool } from "../src/tools/find";
import { grepTool } from "../src/tools/grep";
import { ingestWorkspace } from "../src/workspace/ingest";
import type { OverlayEntry, OverlayStore } from "../src/workspace/overlay";
import { openWorkspace } from "../src/workspace/snapshot-workspace-fs";
import type { WorkspaceFs } from "../src/workspace/workspace-fs";
import { MemoryWorkspaceFs, toolContext } from "../test/helpers/memory-fs";
import type { GrepBenchInput } from "./setup/grep";

/**
 * The grep and find tools over >= 20 MB of real source text, next to GNU `grep -rn` / `find` on
 * the same tree unpacked on disk (timed by bench/setup/grep.ts in the same run). Two workspace
 * views: a real snapshot (tar ingested into local R2, read through SnapshotWorkspaceFs) and an
 * in-memory WorkspaceFs holding the same files (the search cost alone).
 */
const RUNS = 5;
const MB = 1024 * 1024;

/** An overlay with no changes: the bench only reads. */
class EmptyOverlay implements OverlayStore {
  list(): OverlayEntry[] {
    return [];
  }
  entry(): OverlayEntry | null {
    return null;
  }
  get(): Uint8Array | null {
    return null;
  }
  put(): void {
    throw new Error("read-only bench overlay");
  }
  whiteout(): void {
    throw new Error("read-only bench overlay");
  }
}

function median(samples: number[]): number {
  return [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const samples: number[] = [];
  let result!: T;
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    result = await fn();
    samples.push(performance.now() - start);
  }
  return { ms: median(samples), result };
}

/** Matching lines the grep tool found: from its "(N in total)" notice, or the lines it printed. */
function totalMatches(text: string): number {
  const notice = /\((\d+) in total\)/.exec(text);
  if (notice) return Number(notice[1]);
  if (text.startsWith("No matches found")) return 0;
  return (text.split("\n\n[")[0] ?? "").split("\n").length;
}

it("grep and find tools vs GNU grep -rn / find on the same tree", async () => {
  const input: GrepBenchInput = inject("grepBench");
  const response = await fetch(`${input.baseUrl}/tree.tar`);
  expect(response.ok).toBe(true);
  const ingest = await ingestWorkspace(env.STORE, response.body!, {
    workspaceId: "w_grep_bench",
    owner: null,
    contentType: "application/x-tar",
  });
  expect(ingest).toMatchObject({ files: input.files, bytes: input.sourceBytes, skipped: [] });
  const snapshot = await openWorkspace(env.STORE, "w_grep_bench", new EmptyOverlay());
  const memory = new MemoryWorkspaceFs();
  for await (const { path, bytes } of snapshot.readFiles(snapshot.files())) memory.put(path, bytes);

  const views: [string, WorkspaceFs][] = [
    ["snapshot (R2)", snapshot],
    ["in-memory", memory],
  ];
  const rows: string[][] = [];
  for (const c of input.cases) {
    for (const [view, fs] of views) {
      const { ms, result } = await timed(() => grepTool.execute(grepTool.parameters.parse(c.args), toolContext(fs)));
      expect(totalMatches(result.text)).toBe(c.gnuMatches);
      rows.push([
        `grep ${c.label}: \`${c.args.pattern}\``,
        view,
        String(c.gnuMatches),
        `${ms.toFixed(0)} ms`,
        `${c.gnuMs.toFixed(0)} ms`,
        `${(ms / c.gnuMs).toFixed(1)}x`,
      ]);
    }
  }
  for (const [view, fs] of views) {
    const { ms, result } = await timed(() =>
      findTool.execute(findTool.parameters.parse({ pattern: input.find.pattern, limit: 20_000 }), toolContext(fs)),
    );
    expect(result.text.split("\n").length).toBe(input.find.gnuResults);
    rows.push([
      `find \`${input.find.pattern}\``,
      view,
      String(input.find.gnuResults),
      `${ms.toFixed(0)} ms`,
      `${input.find.gnuMs.toFixed(0)} ms`,
      `${(ms / input.find.gnuMs).toFixed(1)}x`,
    ]);
  }

  const header = ["search", "workspace view", "matches", "tool (workerd)", "GNU on disk", "ratio"];
  const table = [header, header.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
  console.log(
    `\nGrep/find bench: ${input.files} files, ${(input.sourceBytes / MB).toFixed(1)} MiB of .js/.ts from node_modules; ` +
      `median of ${RUNS} runs each; GNU commands: ${input.cases.map((c) => c.gnuCommand).join("; ")}; ${input.find.gnuCommand} (LC_ALL=C)\n\n${table}\n`,
  );
});
