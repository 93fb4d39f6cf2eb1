import { describe, expect, it } from "vitest";
import { lsTool } from "../../src/tools/ls";
import { listPage } from "../../src/tools/paging";
import { fixtureFs, MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

const ls = (fs: MemoryWorkspaceFs, args: { path?: string; offset?: number; limit?: number } = {}, maxOutputBytes?: number) =>
  lsTool.execute(lsTool.parameters.parse(args), maxOutputBytes === undefined ? toolContext(fs) : { ...toolContext(fs), maxOutputBytes });

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
    expect((await ls(fixtureFs(), { limit: 2 })).text).toBe(
      ".env.example\n.git/\n\n[Showing entries 1-2 of 11 (limit=2). Use offset=3 to continue, or limit=4 for more]",
    );
  });

  it("defaults to 500 entries", async () => {
    const files = Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`f${String(i).padStart(3, "0")}`, ""]));
    const out = await ls(new MemoryWorkspaceFs(files));
    expect(out.text.split("\n\n")[0]?.split("\n")).toHaveLength(500);
    expect(
      out.text.endsWith("f499\n\n[Showing entries 1-500 of 501 (limit=500). Use offset=501 to continue, or limit=1000 for more]"),
    ).toBe(true);
  });

  it("stops at 50 KB of output", async () => {
    const files = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`${String(i).padStart(4, "0")}${"n".repeat(96)}`, ""]));
    const out = await ls(new MemoryWorkspaceFs(files), { limit: 1000 });
    expect(out.text.split("\n\n")[0]?.split("\n")).toHaveLength(506); // 506 * 101 - 1 bytes fit in 51200, 507 would not
    expect(out.text.endsWith("\n\n[Showing entries 1-506 of 600 (50.0KB limit). Use offset=507 to continue]")).toBe(true);
  });

  it("suggests a larger limit only when it would show more: not past the maximum, not when the byte cap cut the list", async () => {
    // The hunt's case: 5,100 entries and a limit near the maximum, where the old hint said twice the limit (over the maximum).
    const files = Object.fromEntries(Array.from({ length: 5100 }, (_, i) => [`d/file-${String(i).padStart(4, "0")}.tsx`, ""]));
    const out = await ls(new MemoryWorkspaceFs(files), { path: "d", limit: 1990 }, 25_600);
    expect(out.text.endsWith("file-1754.tsx\n\n[Showing entries 1-1755 of 5100 (24.0KB limit). Use offset=1756 to continue]")).toBe(true);
    const full = await ls(new MemoryWorkspaceFs(files), { path: "d", limit: 1990 }, 100_000);
    expect(
      full.text.endsWith(
        "file-1989.tsx\n\n[Showing entries 1-1990 of 5100 (limit=1990). Use offset=1991 to continue, or limit=2000 for more]",
      ),
    ).toBe(true);
    const items = ["a", "b", "c", "d", "e", "f"];
    expect(listPage(items, { limit: 2 }, { maxBytes: 100, maxLimit: 3, noun: "entries" })).toBe(
      "a\nb\n\n[Showing entries 1-2 of 6 (limit=2). Use offset=3 to continue, or limit=3 for more]",
    );
    expect(listPage(items, { limit: 3, offset: 2 }, { maxBytes: 100, maxLimit: 3, noun: "entries" })).toBe(
      "b\nc\nd\n\n[Showing entries 2-4 of 6 (limit=3). Use offset=5 to continue]",
    );
    // "a\nb\nc" is 5 bytes: a fourth entry would not fit in 6.
    expect(listPage(items, { limit: 3 }, { maxBytes: 6, maxLimit: 10, noun: "entries" })).toBe(
      "a\nb\nc\n\n[Showing entries 1-3 of 6 (limit=3). Use offset=4 to continue]",
    );
    expect(listPage(items, { limit: 3 }, { maxBytes: 7, maxLimit: 10, noun: "entries" })).toBe(
      "a\nb\nc\n\n[Showing entries 1-3 of 6 (limit=3). Use offset=4 to continue, or limit=6 for more]",
    );
    expect(listPage(items, { limit: 3, offset: 5 }, { maxBytes: 7, maxLimit: 10, noun: "entries" })).toBe("e\nf");
  });

  it("a page is at most 2,000 entries, the tool output's lines (hunt 54: limit=10000 listed 3,000 with no notice)", async () => {
    const files = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`d/${String(i).padStart(4, "0")}`, ""]));
    expect(lsTool.parameters.safeParse({ path: "d", limit: 2001 }).success).toBe(false);
    expect((await ls(new MemoryWorkspaceFs(files), { path: "d", limit: 2000 })).text.split("\n").length).toBe(2002);
    const items = Array.from({ length: 3000 }, (_, i) => String(i));
    const page = listPage(items, { limit: 2500 }, { maxBytes: 1_000_000, maxLimit: 5000, noun: "entries" });
    expect(page.split("\n").length).toBe(2002);
    expect(page.endsWith("1999\n\n[Showing entries 1-2000 of 3000 (2000 lines limit). Use offset=2001 to continue]")).toBe(true);
  });

  it("an entry longer than the whole budget is shown cut, and the page still moves on", async () => {
    const long = `${"d".repeat(1500)}.txt`;
    const fs = new MemoryWorkspaceFs({ a: "", [long]: "", z: "" });
    const { text } = await ls(fs, { offset: 2 }, 1024);
    // Half of a budget this small is kept for the notice.
    expect(text).toBe(`${"d".repeat(512 - 15)}... [truncated]\n\n[Showing entries 2-2 of 3 (512B limit). Use offset=3 to continue]`);
  });

  it("pages through every entry with offset, no gap and no overlap", async () => {
    const files = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`${String(i).padStart(3, "0")}${"n".repeat(i % 50)}`, ""]));
    const fs = new MemoryWorkspaceFs(files);
    const all = (await ls(fs, { limit: 1000 })).text;
    for (const [limit, maxOutputBytes] of [
      [7, undefined],
      [1000, 2048],
      [40, 2100],
    ] as const) {
      const pages: string[] = [];
      let offset: number | undefined = 1;
      while (offset !== undefined) {
        const { text } = await ls(fs, { limit, offset }, maxOutputBytes);
        pages.push(text.split("\n\n[")[0]!);
        const next = /Use offset=(\d+) to continue/.exec(text)?.[1];
        offset = next === undefined ? undefined : Number(next);
      }
      expect(pages.length).toBeGreaterThan(2);
      expect(pages.join("\n"), `limit ${limit}, budget ${maxOutputBytes}`).toBe(all);
    }
    await expect(ls(fs, { offset: 301 })).rejects.toMatchObject({
      code: "offset_out_of_range",
      message: "Offset 301 is beyond the last of the 300 entries",
    });
  });

  it("reports an empty directory", async () => {
    expect(await ls(new MemoryWorkspaceFs())).toEqual({ text: "(empty directory)", error: false });
  });

  it("passes on not_a_directory and not_found", async () => {
    await expect(ls(fixtureFs(), { path: "README.md" })).rejects.toMatchObject({ code: "not_a_directory" });
    await expect(ls(fixtureFs(), { path: "missing" })).rejects.toMatchObject({ code: "not_found" });
  });
});
