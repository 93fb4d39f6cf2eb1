import { expect, it } from "vitest";
import {
  BASH_MAX_TRAVERSAL_OPERATIONS,
  MAX_ARCHIVE_FILES,
  MAX_PATH_CHARS,
  MAX_PATH_DEPTH,
  MAX_SESSION_CHANGE_VERSIONS,
} from "../../src/domain/limits";
import { bashTool } from "../../src/tools/bash";
import { MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

it("walks a workspace at the upload limit: find, grep -r, ls -R and a glob over 50,000 files (the hardened profile stopped find and grep -r at 100,000 operations)", async () => {
  expect([MAX_ARCHIVE_FILES, BASH_MAX_TRAVERSAL_OPERATIONS]).toEqual([50_000, 4 * (50_000 + MAX_SESSION_CHANGE_VERSIONS)]);
  const files: Record<string, string> = {};
  for (let d = 0; d < 500; d++) for (let i = 0; i < 100; i++) files[`src/d${d}/f${i}.ts`] = i === 7 ? "needle\n" : "x\n";
  const fs = new MemoryWorkspaceFs(files);
  const run = (command: string) => bashTool.execute({ command, timeoutMs: 60_000 }, toolContext(fs, { allowWrite: false }));
  const ok = (text: string) => ({ text, error: false, exitCode: 0 });
  expect(await run("find . -type f | wc -l")).toEqual(ok("50000"));
  expect(await run("find . -name f7.ts | sort | head -2")).toEqual(ok("./src/d0/f7.ts\n./src/d1/f7.ts"));
  expect(await run("grep -rl needle . | wc -l")).toEqual(ok("500"));
  expect(await run("ls -R | wc -l")).toEqual(ok("51504"));
  expect(await run("echo src/*/f99.ts | wc -w")).toEqual(ok("500"));
}, 120_000);

it("finds the deepest path a workspace can hold: find reaches a file 2,047 directories down, its path at the 4,096-character limit (the hardened profile's 256 skipped it without a word, hunt 72); grep -r stops at 256, so find feeds grep", async () => {
  expect([MAX_PATH_CHARS, MAX_PATH_DEPTH]).toEqual([4096, 2048]);
  const deep = `${"d/".repeat(MAX_PATH_DEPTH - 1)}ff`;
  expect(deep.length).toBe(MAX_PATH_CHARS);
  const fs = new MemoryWorkspaceFs({ [deep]: "needle\n", "top.txt": "x\n" });
  const run = (command: string) => bashTool.execute({ command, timeoutMs: 60_000 }, toolContext(fs, { allowWrite: false }));
  const ok = (text: string) => ({ text, error: false, exitCode: 0 });
  expect(await run("find . -name ff")).toEqual(ok(`./${deep}`));
  expect(await run("find . -type f | xargs grep -l needle")).toEqual(ok(`./${deep}`));
  expect(await run("find . -type f -exec grep -l needle {} +")).toEqual(ok(`./${deep}`));
  // just-bash's grep -r has a depth of its own, fixed at 256 (README, bash row).
  expect(await run("grep -rl needle .")).toMatchObject({ exitCode: 1 });
}, 120_000);
