import { defineCommand } from "just-bash";
import { describe, expect, it } from "vitest";
import { lsCommand } from "../../src/tools/bash-guards";

describe("the ls guard (hunt 80)", () => {
  it("stops gathering directory listings at the shell's output limit (one directory named 1,200 times built a 580 MB string)", async () => {
    const listing = `${"x".repeat(1023)}\n`.repeat(1024); // 1 MiB per directory
    const calls: string[][] = [];
    const ls = lsCommand(defineCommand);
    const ctx = {
      cwd: "/w",
      limits: { maxOutputSize: 4 * 1024 * 1024 },
      fs: { resolvePath: (_: string, p: string) => `/w/${p}`, stat: async () => ({ isDirectory: true }) },
      origCommand: async (args: string[]) => {
        calls.push(args);
        return { stdout: listing, stderr: "", exitCode: 0 };
      },
    };
    // biome-ignore lint/suspicious/noExplicitAny: a command context with only what the guard reads
    const result = await ls.execute(Array(1200).fill("d"), ctx as any);
    expect(calls.length).toBe(4);
    expect([result.exitCode, result.stderr]).toEqual([
      2,
      "ls: output limit exceeded (more than 4194304 bytes): list fewer directories at a time\n",
    ]);
    expect(result.stdout.length).toBe(4 * (listing.length + "d:\n".length) + 3);
  });
});
