import ignore from "ignore";
import { expect, it } from "vitest";
import { IgnoreRules, walkWorkspace } from "../src/tools/workspace-walk";
import { MemoryWorkspaceFs } from "../test/helpers/memory-fs";
import { NODE_GITIGNORE } from "./fixtures/node-gitignore";

/**
 * The walk every grep and find starts with (`IgnoreRules.load` + `walkWorkspace`) over 100,000
 * paths shaped like a large repository's, with a Node project's `.gitignore` at the root; next to
 * the same walk with no `.gitignore` (the floor) and, as the baseline, the `ignore` library's own
 * `ignores()` on every path (each rule tested per path, as the walk did before `RuleDispatch`), in
 * the same run. The files kept must agree.
 */
const PATHS = 100_000;
const ROUNDS = 7;
const EXTENSIONS = [".ts", ".test.ts", ".js", ".json", ".md", ".tsx", ".log", ".js.map"];
const DIRS = ["lib", "util", "components", "server", "dist", "coverage", "node_modules/x", "generated"];

const paths = Array.from(
  { length: PATHS },
  (_, i) =>
    `packages/pkg${i % 60}/${DIRS[i % DIRS.length]}/d${i % 700}/file_${i}${EXTENSIONS[Math.floor(i / DIRS.length) % EXTENSIONS.length]}`,
);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Median of ROUNDS runs of `walk`, and the files it kept. */
async function time(walk: () => Promise<number>): Promise<{ ms: number; kept: number }> {
  const samples: number[] = [];
  let kept = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    kept = await walk();
    samples.push(performance.now() - start);
  }
  return { ms: median(samples), kept };
}

/** A view of `fs` whose listings are computed once (the snapshot's are; the fake sorts per call). */
function listedOnce(fs: MemoryWorkspaceFs): MemoryWorkspaceFs {
  const files = fs.files();
  const dirs = fs.dirs();
  return Object.assign(Object.create(fs) as MemoryWorkspaceFs, { files: () => files, dirs: () => dirs });
}

it("the walk of a grep or find: .gitignore rules dispatched by name vs the library testing every rule", async () => {
  const withRules = new MemoryWorkspaceFs({ ".gitignore": NODE_GITIGNORE });
  const without = new MemoryWorkspaceFs();
  for (const path of paths) {
    withRules.put(path, "");
    without.put(path, "");
  }
  const ruled = listedOnce(withRules);
  const bare = listedOnce(without);
  const walk = (fs: MemoryWorkspaceFs) => async () => walkWorkspace(fs, "", await IgnoreRules.load(fs)).files.length;
  // The library first: the pass timed first pays for warming up.
  const library = await time(async () => {
    const matcher = ignore({ ignorecase: false }).add(NODE_GITIGNORE);
    return ruled.files().filter((path) => !matcher.ignores(path)).length;
  });
  const ours = await time(walk(ruled));
  const floor = await time(walk(bare));
  expect(ours.kept).toBe(library.kept);
  expect(floor.kept).toBe(PATHS);
  // Half the paths are in ignored directories, about an eighth of the rest are logs; the .gitignore is kept.
  expect(ours.kept).toBe(43_753);
  const rules = NODE_GITIGNORE.trim().split("\n").length;
  console.log(
    `\nwalk of ${PATHS.toLocaleString("en-US")} paths, median of ${ROUNDS}\n` +
      `| walk | files kept | time | per path |\n| --- | --- | --- | --- |\n` +
      `| \`ignore\` library's \`ignores()\` on every path, ${rules} rules (baseline) | ${library.kept.toLocaleString("en-US")} | ${library.ms.toFixed(0)} ms | ${((library.ms * 1000) / PATHS).toFixed(2)} us |\n` +
      `| IgnoreRules + walkWorkspace, ${rules} rules | ${ours.kept.toLocaleString("en-US")} | ${ours.ms.toFixed(0)} ms | ${((ours.ms * 1000) / PATHS).toFixed(2)} us |\n` +
      `| IgnoreRules + walkWorkspace, no .gitignore | ${floor.kept.toLocaleString("en-US")} | ${floor.ms.toFixed(0)} ms | ${((floor.ms * 1000) / PATHS).toFixed(2)} us |\n` +
      `speed-up over the library: ${(library.ms / ours.ms).toFixed(1)}x\n`,
  );
});
