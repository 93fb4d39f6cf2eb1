import { describe, expect, it } from "vitest";
import { MAX_FILE_BYTES } from "../../src/domain/limits";
import { editTool } from "../../src/tools/edit";
import { readTool } from "../../src/tools/read";
import { writeTool } from "../../src/tools/write";
import { fixtureFs, toolContext } from "../helpers/memory-fs";

const write = (fs = fixtureFs(), path: string, content: string) =>
  writeTool.execute({ path, content }, toolContext(fs, { allowWrite: true }));

describe("write", () => {
  it("creates a file (parents implied) and reports its size in bytes", async () => {
    const fs = fixtureFs();
    expect(await write(fs, "new/dir/file.txt", "héllo\n")).toEqual({
      text: "Successfully wrote 7 bytes to new/dir/file.txt",
      error: false,
    });
    expect(fs.text("new/dir/file.txt")).toBe("héllo\n");
    expect(fs.mutations).toEqual([{ op: "write", path: "new/dir/file.txt" }]);
  });

  it("overwrites an existing file, writing the canonical path", async () => {
    const fs = fixtureFs();
    await write(fs, "./src/../README.md", "replaced");
    expect(fs.text("README.md")).toBe("replaced");
  });

  it("refuses to write over a directory or below a file", async () => {
    await expect(write(fixtureFs(), "src", "x")).rejects.toMatchObject({ code: "is_directory" });
    await expect(write(fixtureFs(), "README.md/child", "x")).rejects.toMatchObject({ code: "not_a_directory" });
  });

  it("a path ending in '/' names a directory: write, read and edit refuse it and change nothing", async () => {
    const fs = fixtureFs();
    const before = fs.files();
    await expect(write(fs, "out/", "x")).rejects.toMatchObject({
      code: "is_directory",
      message: '"out/" names a directory; write takes a file path',
    });
    await expect(readTool.execute({ path: "README.md/" }, toolContext(fs))).rejects.toMatchObject({ code: "is_directory" });
    await expect(
      editTool.execute({ path: "README.md/.", edits: [{ oldText: "a", newText: "b" }] }, toolContext(fs, { allowWrite: true })),
    ).rejects.toMatchObject({ code: "is_directory" });
    expect(fs.files()).toEqual(before);
    expect((await readTool.execute({ path: "./README.md" }, toolContext(fs))).error).toBe(false);
  });

  it("refuses content over the size limit", async () => {
    const fs = fixtureFs();
    await expect(write(fs, "big.txt", "x".repeat(MAX_FILE_BYTES + 1))).rejects.toMatchObject({
      code: "content_too_large",
      message: "big.txt would be 16.0MB; the limit is 16.0MB per file",
    });
    expect(fs.mutations).toEqual([]);
  });
});
