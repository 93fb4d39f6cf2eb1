import { describe, expect, it } from "vitest";
import { readTool } from "../../src/tools/read";
import { ToolError } from "../../src/tools/tool";
import { WorkspaceError } from "../../src/workspace/errors";
import { fixtureFs, MemoryWorkspaceFs, numberedLines, toolContext } from "../helpers/memory-fs";

const read = (fs: MemoryWorkspaceFs, args: Parameters<typeof readTool.execute>[0]) => readTool.execute(args, toolContext(fs));

describe("read", () => {
  it("returns a small file as raw text without line numbers", async () => {
    const out = await read(fixtureFs(), { path: "src/lib/greet.ts" });
    expect(out).toEqual({
      error: false,
      text: "export function greet(name: string): string {\n  // TODO: localise\n  return `Hello, ${name}!`;\n}",
    });
  });

  it("truncates a 3000-line file at 2000 lines and names the offset to continue from", async () => {
    const out = await read(fixtureFs(), { path: "docs/big.txt" });
    expect(out.text.startsWith("line 1\nline 2\n")).toBe(true);
    expect(out.text.endsWith("line 2000\n\n[Showing lines 1-2000 of 3000. Use offset=2001 to continue.]")).toBe(true);
  });

  it("continues from an offset to the end without a notice", async () => {
    const out = await read(fixtureFs(), { path: "docs/big.txt", offset: 2001 });
    expect(out.text.split("\n")).toHaveLength(1000);
    expect(out.text.startsWith("line 2001\n")).toBe(true);
    expect(out.text.endsWith("line 3000")).toBe(true);
  });

  it("says how many lines remain when the caller's limit stops early", async () => {
    const out = await read(fixtureFs(), { path: "docs/big.txt", offset: 10, limit: 3 });
    expect(out.text).toBe("line 10\nline 11\nline 12\n\n[2988 more lines in file. Use offset=13 to continue.]");
  });

  it("truncates at 50 KB with the byte limit in the notice", async () => {
    const fs = new MemoryWorkspaceFs({ "wide.txt": `${"w".repeat(99)}\n`.repeat(1000) });
    const out = await read(fs, { path: "wide.txt" });
    expect(out.text.split("\n\n")[0]?.split("\n")).toHaveLength(512);
    expect(out.text.endsWith("\n\n[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]")).toBe(true);
  });

  it("explains how to see a single line longer than 50 KB", async () => {
    const fs = new MemoryWorkspaceFs({ "min.js": `${"m".repeat(60 * 1024)}\nnext\n` });
    const out = await read(fs, { path: "min.js" });
    expect(out.text).toBe("[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' min.js | head -c 51200]");
  });

  it("shows CRLF as LF and drops the BOM", async () => {
    const out = await read(fixtureFs(), { path: "src/windows.txt" });
    expect(out.text).toBe("first line\nsecond TODO line\nthird line");
  });

  it("refuses an offset past the end of the file", async () => {
    await expect(read(fixtureFs(), { path: "src/index.ts", offset: 6 })).rejects.toEqual(
      new ToolError("offset_out_of_range", "Offset 6 is beyond end of file (5 lines total)"),
    );
  });

  it("refuses binary files", async () => {
    await expect(read(fixtureFs(), { path: "assets/logo.bin" })).rejects.toMatchObject({ code: "binary_file" });
  });

  it("reports an empty file", async () => {
    expect(await read(new MemoryWorkspaceFs({ "e.txt": "" }), { path: "e.txt" })).toEqual({ text: "(empty file)", error: false });
  });

  it("passes workspace errors on (missing file, directory)", async () => {
    await expect(read(fixtureFs(), { path: "nope.txt" })).rejects.toBeInstanceOf(WorkspaceError);
    await expect(read(fixtureFs(), { path: "src" })).rejects.toMatchObject({ code: "is_directory" });
  });

  it("resolves ./ and inner .. segments", async () => {
    const fs = new MemoryWorkspaceFs({ "a/b.txt": numberedLines(1) });
    expect((await read(fs, { path: "./a/../a/b.txt" })).text).toBe("line 1");
  });
});
