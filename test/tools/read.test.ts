import { describe, expect, it } from "vitest";
import { bashTool } from "../../src/tools/bash";
import { readTool } from "../../src/tools/read";
import { ToolError } from "../../src/tools/tool";
import { WorkspaceError } from "../../src/workspace/errors";
import { fixtureFs, MemoryWorkspaceFs, numberedLines, toolContext } from "../helpers/memory-fs";

const read = (fs: MemoryWorkspaceFs, args: Parameters<typeof readTool.execute>[0]) => readTool.execute(args, toolContext(fs));
const readWith = (
  fs: MemoryWorkspaceFs,
  args: Parameters<typeof readTool.execute>[0],
  run: { maxOutputBytes?: number; allowBash?: boolean },
) => readTool.execute(args, { ...toolContext(fs), ...run });

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

  it("shows the start of a line longer than 50 KB, marked as cut, and how to get past it", async () => {
    const fs = new MemoryWorkspaceFs({ "min.js": `${"m".repeat(60 * 1024)}\nnext\n` });
    const out = await read(fs, { path: "min.js" });
    expect(out.text).toBe(
      `${"m".repeat(50 * 1024)}... [truncated]\n\n` +
        "[Line 1 is 60.0KB, over the 50.0KB limit: showing its first 50.0KB; read cannot show the rest of this line. Use offset=2 to continue.]",
    );
    expect((await read(fs, { path: "min.js", offset: 2 })).text).toBe("next");
  });

  it("names no next offset when the long line is the file's last", async () => {
    const fs = new MemoryWorkspaceFs({ "data.json": `{\n${"d".repeat(3000)}\n` });
    const out = await readWith(fs, { path: "data.json", offset: 2 }, { maxOutputBytes: 2048 });
    expect(out.text).toBe(
      `${"d".repeat(1024)}... [truncated]\n\n` +
        "[Line 2 is 2.9KB, over the 1.0KB limit: showing its first 1.0KB; read cannot show the rest of this line.]",
    );
  });

  it("cuts a long line on a character boundary, never inside a UTF-8 sequence", async () => {
    const fs = new MemoryWorkspaceFs({ "euro.txt": `${"€".repeat(1000)}\n` });
    const out = await readWith(fs, { path: "euro.txt" }, { maxOutputBytes: 2048 });
    // 1024 bytes hold 341 three-byte characters (1023 bytes); the 342nd would need 1026.
    expect(out.text.split("... [truncated]")[0]).toBe("€".repeat(341));
    expect(out.text).toContain("[Line 1 is 2.9KB, over the 1.0KB limit: showing its first 1023B;");
  });

  it("suggests a shell command for the rest of a long line only when the run offers bash, with the path quoted", async () => {
    const path = "dist/it's my app.min.js";
    const fs = new MemoryWorkspaceFs({ [path]: `// header\n${"é".repeat(600)}${"x".repeat(2000)}\n// after\n` });
    const withBash = await readWith(fs, { path, offset: 2 }, { maxOutputBytes: 2048, allowBash: true });
    expect(withBash.text.split("\n\n")[1]).toBe(
      "[Line 2 is 3.1KB, over the 1.0KB limit: showing its first 1.0KB; read cannot show the rest of this line, bash can: " +
        "sed -n '2p' 'dist/it'\\''s my app.min.js' | cut -c 513- | head -c 1024. Use offset=3 to continue.]",
    );
    const withoutBash = await readWith(fs, { path, offset: 2 }, { maxOutputBytes: 2048 });
    expect(withoutBash.text.split("\n\n")[1]).toBe(
      "[Line 2 is 3.1KB, over the 1.0KB limit: showing its first 1.0KB; read cannot show the rest of this line. Use offset=3 to continue.]",
    );
  });

  it("suggests a shell command that prints the line's next part", async () => {
    const path = "it's a.min.js";
    const line = `${"é".repeat(600)}${"0123456789".repeat(300)}`;
    const fs = new MemoryWorkspaceFs({ [path]: `${line}\n` });
    const out = await readWith(fs, { path }, { maxOutputBytes: 2048, allowBash: true });
    const command = /bash can: (.*)\.\]$/.exec(out.text)?.[1] ?? "";
    const shown = out.text.split("... [truncated]")[0] ?? "";
    const next = await bashTool.execute({ command }, { ...toolContext(fs), maxOutputBytes: 4096 });
    // 512 two-byte characters shown; the next 1024 bytes are the other 88 and 848 digits.
    expect(shown).toBe("é".repeat(512));
    expect(next.text).toBe(`${"é".repeat(88)}${"0123456789".repeat(300).slice(0, 848)}`);
  });

  it("says when a file is not valid UTF-8, counting only the bytes shown as U+FFFD", async () => {
    const latin1 = new Uint8Array([
      ...new TextEncoder().encode("title=Caf"),
      0xe9,
      ...new TextEncoder().encode(" cr"),
      0xe8,
      0x6d,
      0x65,
      0x0a,
    ]);
    const fs = new MemoryWorkspaceFs({ "messages_fr.properties": latin1 });
    expect((await read(fs, { path: "messages_fr.properties" })).text).toBe(
      "title=Caf\ufffd cr\ufffdme\n\n[messages_fr.properties is not valid UTF-8: 2 invalid byte sequences are shown as U+FFFD; " +
        "writing this text back would replace them, and edit refuses this file]",
    );
    // A U+FFFD the file really holds (EF BF BD) is text like any other: only the stray 0xFF is counted.
    const mixed = new MemoryWorkspaceFs({ "m.txt": new Uint8Array([0xef, 0xbf, 0xbd, 0x0a, 0xff, 0x0a, 0x61, 0x0a]) });
    expect((await read(mixed, { path: "m.txt", limit: 2 })).text).toBe(
      "\ufffd\n\ufffd\n\n[m.txt is not valid UTF-8: 1 invalid byte sequence is shown as U+FFFD; writing this text back would " +
        "replace them, and edit refuses this file. 1 more lines in file. Use offset=3 to continue.]",
    );
    expect((await read(new MemoryWorkspaceFs({ "u.txt": "caf\u00e9 \ufffd\n" }), { path: "u.txt" })).text).toBe("caf\u00e9 \ufffd");
  });

  it("names ls when given a directory", async () => {
    await expect(read(fixtureFs(), { path: "src" })).rejects.toEqual(
      new WorkspaceError("is_directory", "'src' is a directory; use ls to list it"),
    );
    await expect(read(fixtureFs(), { path: "src/" })).rejects.toEqual(
      new WorkspaceError("is_directory", '"src/" names a directory; read takes a file path; use ls to list it'),
    );
  });

  it("shows CRLF as LF and drops the BOM, and says so (writing the text back would drop them)", async () => {
    const out = await read(fixtureFs(), { path: "src/windows.txt" });
    expect(out.text).toBe(
      "first line\nsecond TODO line\nthird line\n\n[src/windows.txt has a UTF-8 BOM and CRLF line endings, shown here without the BOM and with LF endings: edit keeps them; write writes exactly the text it is given]",
    );
    const fs = new MemoryWorkspaceFs({ "mixed.txt": "a\r\nb\nc\r\n", "bom.txt": "\uFEFFx\n", "lf.txt": "x\ny\n" });
    expect((await read(fs, { path: "mixed.txt" })).text).toBe(
      "a\nb\nc\n\n[mixed.txt has CRLF line endings on 2 of 3 lines, shown here with LF endings: edit keeps them; write writes exactly the text it is given]",
    );
    expect((await read(fs, { path: "bom.txt" })).text).toBe(
      "x\n\n[bom.txt has a UTF-8 BOM, shown here without the BOM: edit keeps it; write writes exactly the text it is given]",
    );
    expect((await read(fs, { path: "lf.txt" })).text).toBe("x\ny");
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
