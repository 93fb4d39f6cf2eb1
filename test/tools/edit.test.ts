import { describe, expect, it } from "vitest";
import { editTool } from "../../src/tools/edit";
import { fixtureFs, MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

const edit = (fs: MemoryWorkspaceFs, path: string, oldText: string, newText: string) =>
  editTool.execute({ path, oldText, newText }, toolContext(fs, { allowWrite: true }));

describe("edit", () => {
  it("replaces the one occurrence and returns a unified diff", async () => {
    const fs = fixtureFs();
    const out = await edit(fs, "src/lib/math.ts", "a - b", "b - a");
    expect(out).toEqual({
      error: false,
      text: [
        "Successfully replaced 1 block in src/lib/math.ts.",
        "",
        "--- a/src/lib/math.ts",
        "+++ b/src/lib/math.ts",
        "@@ -1,3 +1,3 @@",
        " export const add = (a: number, b: number) => a + b;",
        "-export const sub = (a: number, b: number) => a - b;",
        "+export const sub = (a: number, b: number) => b - a;",
        " export const mul = (a: number, b: number) => a * b;",
      ].join("\n"),
    });
    expect(fs.text("src/lib/math.ts")).toContain("=> b - a;");
  });

  it("fails on zero matches, saying how to fix it", async () => {
    const fs = fixtureFs();
    await expect(edit(fs, "src/lib/math.ts", "a % b", "x")).rejects.toMatchObject({
      code: "no_match",
      message:
        "Could not find oldText in src/lib/math.ts. It must match the file exactly, including whitespace and indentation; read the file and copy the text to replace.",
    });
    expect(fs.mutations).toEqual([]);
  });

  it("fails on several matches, naming their lines", async () => {
    const fs = fixtureFs();
    await expect(edit(fs, "src/lib/math.ts", "export const", "const")).rejects.toMatchObject({
      code: "ambiguous_match",
      message:
        "Found 3 occurrences of oldText in src/lib/math.ts (at lines 1, 2, 3). It must occur exactly once: add surrounding lines to oldText to make it unique.",
    });
    expect(fs.mutations).toEqual([]);
  });

  it("refuses a no-op edit", async () => {
    await expect(edit(fixtureFs(), "src/lib/math.ts", "a - b", "a - b")).rejects.toMatchObject({ code: "no_change" });
  });

  it("keeps CRLF line endings and the BOM, matching oldText written with LF", async () => {
    const fs = fixtureFs();
    const out = await edit(fs, "src/windows.txt", "second TODO line\nthird", "second line\nthird");
    const bytes = await fs.readFile("src/windows.txt");
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(new TextDecoder().decode(bytes)).toBe("first line\r\nsecond line\r\nthird line\r\n");
    expect(out.text).toContain("-second TODO line\n+second line");
  });

  it("keeps LF files LF and files without a BOM without one", async () => {
    const fs = new MemoryWorkspaceFs({ "a.txt": "one\ntwo\n" });
    await edit(fs, "a.txt", "two", "2");
    expect([...(await fs.readFile("a.txt"))]).toEqual([...new TextEncoder().encode("one\n2\n")]);
  });

  it("changes only the replaced text: in a file of mixed line endings every other line keeps its own", async () => {
    const fs = new MemoryWorkspaceFs({ "mixed.txt": "line1\r\nline2\nline3\r\nversion = 1\nend" });
    await edit(fs, "mixed.txt", "version = 1", "version = 2\nrelease = 3");
    // The edited line ended in LF: so do the new lines. A replaced CRLF pair keeps CRLF.
    expect(new TextDecoder().decode(await fs.readFile("mixed.txt"))).toBe("line1\r\nline2\nline3\r\nversion = 2\nrelease = 3\nend");
    await edit(fs, "mixed.txt", "line1\nline2", "first\nsecond");
    expect(new TextDecoder().decode(await fs.readFile("mixed.txt"))).toBe("first\r\nsecond\nline3\r\nversion = 2\nrelease = 3\nend");
    await edit(fs, "mixed.txt", "end", "end\nmore");
    expect(new TextDecoder().decode(await fs.readFile("mixed.txt"))).toBe("first\r\nsecond\nline3\r\nversion = 2\nrelease = 3\nend\nmore");
  });

  it("refuses a file that is not UTF-8 (a Latin-1 file): written back, its other bytes would change", async () => {
    const latin1 = new Uint8Array([...new TextEncoder().encode("# caf"), 0xe9, ...new TextEncoder().encode("\nversion = 1\n")]);
    const fs = new MemoryWorkspaceFs({ "latin1.txt": latin1 });
    await expect(edit(fs, "latin1.txt", "version = 1", "version = 2")).rejects.toMatchObject({
      code: "binary_file",
      message: "latin1.txt is not UTF-8 text; edit changes UTF-8 text files only",
    });
    expect([...(await fs.readFile("latin1.txt"))]).toEqual([...latin1]);
  });

  it("refuses binary files and passes on not_found", async () => {
    await expect(edit(fixtureFs(), "assets/logo.bin", "PNG", "JPG")).rejects.toMatchObject({ code: "binary_file" });
    await expect(edit(fixtureFs(), "missing.ts", "a", "b")).rejects.toMatchObject({ code: "not_found" });
  });
});
