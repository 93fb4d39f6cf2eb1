import { describe, expect, it } from "vitest";
import { lsTool } from "../../src/tools/ls";
import { fixtureFs, MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

const ls = (fs: MemoryWorkspaceFs, args: { path?: string; limit?: number } = {}) =>
  lsTool.execute(lsTool.parameters.parse(args), toolContext(fs));

describe("ls", () => {
  it("lists the root case-insensitively, dirs with '/', dotfiles and ignored entries included", async () => {
    expect(await ls(fixtureFs())).toEqual({
      error: false,
      text: [
        ".env.example",
        ".git/",
        ".gitignore",
        "assets/",
        "build/",
        "debug.log",
        "docs/",
        "keep.log",
        "node_modules/",
        "README.md",
        "src/",
      ].join("\n"),
    });
  });

  it("lists a subdirectory", async () => {
    expect((await ls(fixtureFs(), { path: "src" })).text).toBe("index.ts\nlib/\nlong-line.txt\nwindows.txt");
  });

  it("stops at the entry limit with a notice", async () => {
    expect((await ls(fixtureFs(), { limit: 2 })).text).toBe(".env.example\n.git/\n\n[2 entries limit reached. Use limit=4 for more]");
  });

  it("defaults to 500 entries", async () => {
    const files = Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`f${String(i).padStart(3, "0")}`, ""]));
    const out = await ls(new MemoryWorkspaceFs(files));
    expect(out.text.split("\n\n")[0]?.split("\n")).toHaveLength(500);
    expect(out.text.endsWith("f499\n\n[500 entries limit reached. Use limit=1000 for more]")).toBe(true);
  });

  it("stops at 50 KB of output", async () => {
    const files = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`${String(i).padStart(4, "0")}${"n".repeat(96)}`, ""]));
    const out = await ls(new MemoryWorkspaceFs(files), { limit: 1000 });
    expect(out.text.split("\n\n")[0]?.split("\n")).toHaveLength(506); // 506 * 101 - 1 bytes fit in 51200, 507 would not
    expect(out.text.endsWith("\n\n[50.0KB limit reached]")).toBe(true);
  });

  it("reports an empty directory", async () => {
    expect(await ls(new MemoryWorkspaceFs())).toEqual({ text: "(empty directory)", error: false });
  });

  it("passes on not_a_directory and not_found", async () => {
    await expect(ls(fixtureFs(), { path: "README.md" })).rejects.toMatchObject({ code: "not_a_directory" });
    await expect(ls(fixtureFs(), { path: "missing" })).rejects.toMatchObject({ code: "not_found" });
  });
});
