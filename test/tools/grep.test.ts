import { describe, expect, it } from "vitest";
import { fitToolResult } from "../../src/runtime/result-budget";
import { GREP_MAX_FILE_BYTES, grepTool } from "../../src/tools/grep";
import { readTool } from "../../src/tools/read";
import { fixtureFs, MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

type Args = {
  pattern: string;
  path?: string;
  glob?: string;
  ignoreCase?: boolean;
  literal?: boolean;
  context?: number;
  offset?: number;
  limit?: number;
};
const grep = (fs: MemoryWorkspaceFs, args: Args, signal?: AbortSignal) =>
  grepTool.execute(grepTool.parameters.parse(args), toolContext(fs, { signal }));

const TODO_LINES = [
  "README.md:4: TODO: write docs",
  "docs/notes/deep/nested.md:1: deep TODO",
  "keep.log:1: TODO kept log",
  "src/lib/greet.ts:2:   // TODO: localise",
  `src/long-line.txt:2: ${"x".repeat(500)}... [truncated]`,
  "src/windows.txt:2: second TODO line",
];

describe("grep", () => {
  it("prints path:line: text sorted by path, skipping .git/, ignored and binary files", async () => {
    // Not found: .git/HEAD, node_modules/, build/, debug.log, src/lib/generated.ts (nested rule),
    // assets/logo.bin (binary, though its bytes contain "TODO").
    expect(await grep(fixtureFs(), { pattern: "TODO" })).toEqual({
      error: false,
      text: `${TODO_LINES.join("\n")}\n\n[Some lines truncated to 500 chars. Use read tool to see lines of up to 50.0KB in full]`,
    });
  });

  it("matches case-insensitively when asked", async () => {
    const out = await grep(fixtureFs(), { pattern: "todo", ignoreCase: true, path: "src" });
    expect(out.text.split("\n").slice(0, 1)).toEqual(["src/lib/greet.ts:2:   // TODO: localise"]);
    expect((await grep(fixtureFs(), { pattern: "todo", path: "src" })).text).toBe("No matches found");
  });

  it("treats the pattern as text with literal=true", async () => {
    expect((await grep(fixtureFs(), { pattern: "a + b", literal: true })).text).toBe(
      "src/lib/math.ts:1: export const add = (a: number, b: number) => a + b;",
    );
    expect((await grep(fixtureFs(), { pattern: "a + b" })).text).toBe("No matches found");
  });

  it("reports an invalid regex as a tool error that suggests literal=true", async () => {
    await expect(grep(fixtureFs(), { pattern: "(unclosed" })).rejects.toMatchObject({
      code: "invalid_regex",
      message: expect.stringMatching(
        /^invalid regular expression "\(unclosed": .*Unterminated group\. Fix the pattern, or pass literal=true/,
      ),
    });
  });

  it("filters files by glob, relative to the search path", async () => {
    expect((await grep(fixtureFs(), { pattern: "TODO", glob: "*.ts" })).text).toBe("src/lib/greet.ts:2:   // TODO: localise");
    expect((await grep(fixtureFs(), { pattern: "TODO", glob: "notes/**", path: "docs" })).text).toBe(
      "docs/notes/deep/nested.md:1: deep TODO",
    );
  });

  it("searches a single file, and an explicitly given ignored directory", async () => {
    expect((await grep(fixtureFs(), { pattern: "TODO", path: "src/windows.txt" })).text).toBe("src/windows.txt:2: second TODO line");
    expect((await grep(fixtureFs(), { pattern: "TODO", path: "node_modules" })).text).toBe(
      "node_modules/pkg/index.js:1: module.exports = 'TODO in dependency';",
    );
  });

  it("prints context lines as path-line- text", async () => {
    expect((await grep(fixtureFs(), { pattern: "sub", context: 1 })).text).toBe(
      [
        "src/lib/math.ts-1- export const add = (a: number, b: number) => a + b;",
        "src/lib/math.ts:2: export const sub = (a: number, b: number) => a - b;",
        "src/lib/math.ts-3- export const mul = (a: number, b: number) => a * b;",
      ].join("\n"),
    );
  });

  it("merges overlapping context and separates groups with --", async () => {
    expect((await grep(fixtureFs(), { pattern: "^line (10|12|20)$", context: 1 })).text).toBe(
      [
        "docs/big.txt-9- line 9",
        "docs/big.txt:10: line 10",
        "docs/big.txt-11- line 11",
        "docs/big.txt:12: line 12",
        "docs/big.txt-13- line 13",
        "--",
        "docs/big.txt-19- line 19",
        "docs/big.txt:20: line 20",
        "docs/big.txt-21- line 21",
      ].join("\n"),
    );
  });

  it("stops at the match limit and says how many there are", async () => {
    expect((await grep(fixtureFs(), { pattern: "^line", limit: 3 })).text).toBe(
      "docs/big.txt:1: line 1\ndocs/big.txt:2: line 2\ndocs/big.txt:3: line 3\n\n" +
        "[Showing matches 1-3 of 3000 (limit=3). Use offset=4 to continue, limit=6 for more, or narrow pattern, path or glob]",
    );
  });

  it("defaults to 100 matches", async () => {
    const out = await grep(fixtureFs(), { pattern: "^line" });
    expect(out.text.split("\n\n")[0]?.split("\n")).toHaveLength(100);
    expect(
      out.text.endsWith(
        "docs/big.txt:100: line 100\n\n[Showing matches 1-100 of 3000 (limit=100). Use offset=101 to continue, limit=200 for more, or narrow pattern, path or glob]",
      ),
    ).toBe(true);
  });

  it("stops at 50 KB of output", async () => {
    const fs = new MemoryWorkspaceFs({ "w.txt": `${"w".repeat(400)}\n`.repeat(200) });
    const out = await grep(fs, { pattern: "w", limit: 200 });
    const body = out.text.split("\n\n")[0] ?? "";
    expect(new TextEncoder().encode(body).byteLength).toBeLessThanOrEqual(51_200);
    expect(body.split("\n")).toHaveLength(124); // "w.txt:N: " + 400 chars: lines of 409-411 bytes
    expect(
      out.text.endsWith("\n\n[Showing matches 1-124 of 200 (50.0KB limit). Use offset=125 to continue, or narrow pattern, path or glob]"),
    ).toBe(true);
  });

  it("stops at 2,000 lines of output, context lines included (hunt 54: context passed the tool output's lines)", async () => {
    // Every third line matches; with context 1 the groups join into one run of 2,100 lines.
    const fs = new MemoryWorkspaceFs({ "c.txt": "x\nm\ny\n".repeat(700) });
    const out = await grep(fs, { pattern: "m", context: 1, limit: 700 });
    const body = out.text.split("\n\n")[0]!;
    expect(body.split("\n")).toHaveLength(2000);
    expect(body.endsWith("c.txt-1998- y\nc.txt-1999- x\nc.txt:2000: m")).toBe(true);
    expect(
      out.text.endsWith(
        "\n\n[Showing matches 1-667 of 700 (2000 lines limit). Use offset=668 to continue, or narrow pattern, path or glob]",
      ),
    ).toBe(true);
  });

  it("says how long a line read shows in full, by the run's budget: a line cut here is read whole within it", async () => {
    const line = "x".repeat(24_000);
    const fs = new MemoryWorkspaceFs({ "a.txt": `head\n${line}\n` });
    const args = grepTool.parameters.parse({ pattern: "x" });
    const out = await grepTool.execute(args, { ...toolContext(fs), maxOutputBytes: 25_600 });
    expect(out.text.split("\n\n").at(-1)).toBe("[Some lines truncated to 500 chars. Use read tool to see lines of up to 24.0KB in full]");
    const read = await readTool.execute(readTool.parameters.parse({ path: "a.txt", offset: 2 }), {
      ...toolContext(fs),
      maxOutputBytes: 25_600,
    });
    expect(read.text).toBe(line);
  });

  it("leaves room in the run's result budget for its notices: the last guard never cuts them off", async () => {
    const fs = new MemoryWorkspaceFs({ "m.txt": `${"match this line with some more text to make it long enough, ok\n".repeat(3000)}` });
    for (const budget of [51_200, 25_600]) {
      const args = grepTool.parameters.parse({ pattern: "match", limit: 1000 });
      const out = await grepTool.execute(args, { ...toolContext(fs), maxOutputBytes: budget });
      expect(fitToolResult(out.text, budget / 4)).toBe(out.text);
      expect(out.text).toMatch(
        /\n\n\[Showing matches 1-\d+ of 3000 \(\d+\.\dKB limit\)\. Use offset=\d+ to continue, or narrow pattern, path or glob\]$/,
      );
    }
  });

  it("takes a glob with '/' relative to the search path or to the workspace root (fd's and rg's readings)", async () => {
    const fs = new MemoryWorkspaceFs({
      "src/server.ts": "app.listen(3000);\n",
      "src/lib/util.ts": "export function listen() {}\n",
      "test/listen.ts": "listen\n",
    });
    const both = "src/lib/util.ts:1: export function listen() {}\nsrc/server.ts:1: app.listen(3000);";
    expect((await grep(fs, { pattern: "listen", path: "src", glob: "src/**/*.ts" })).text).toBe(both);
    expect((await grep(fs, { pattern: "listen", path: "src", glob: "**/*.ts" })).text).toBe(both);
    expect((await grep(fs, { pattern: "listen", glob: "src/**/*.ts" })).text).toBe(both);
    expect((await grep(fs, { pattern: "listen", path: "src", glob: "lib/*.ts" })).text).toBe(
      "src/lib/util.ts:1: export function listen() {}",
    );
    expect((await grep(fs, { pattern: "listen", path: "src", glob: "test/*.ts" })).text).toBe("No matches found");
    expect((await grep(fs, { pattern: "listen", path: "src/server.ts", glob: "src/*.ts" })).text).toBe(
      "src/server.ts:1: app.listen(3000);",
    );
    // A negated glob leaves out what it names either way.
    expect((await grep(fs, { pattern: "listen", path: "src", glob: "!src/lib/**" })).text).toBe("src/server.ts:1: app.listen(3000);");
    expect((await grep(fs, { pattern: "listen", path: "src", glob: "!lib/**" })).text).toBe("src/server.ts:1: app.listen(3000);");
  });

  it("takes the grep and rg habits models bring: POSIX classes in brackets and a leading (?i)", async () => {
    const fs = new MemoryWorkspaceFs({ "src/a.c": "int main(void) {\n\treturn 0;\n}\n" });
    expect((await grep(fs, { pattern: "^[[:space:]]+return" })).text).toBe("src/a.c:2: \treturn 0;");
    expect((await grep(fs, { pattern: "(?i)RETURN" })).text).toBe("src/a.c:2: \treturn 0;");
    await expect(grep(fs, { pattern: "(?m)^return" })).rejects.toMatchObject({
      code: "invalid_regex",
      message: expect.stringContaining("Inline flags such as (?m) are not supported, only a leading (?i), which means ignoreCase=true"),
    });
  });

  it("suggests a larger limit only when it would show more: below the maximum, and room left under the byte cap", async () => {
    const fs = new MemoryWorkspaceFs({ "many.txt": `${Array.from({ length: 1500 }, (_, i) => `hit ${i}`).join("\n")}\n` });
    const notice = async (args: Args, maxOutputBytes?: number) => {
      const ctx = maxOutputBytes === undefined ? toolContext(fs) : { ...toolContext(fs), maxOutputBytes };
      const { text } = await grepTool.execute(grepTool.parameters.parse(args), ctx);
      return text.slice(text.lastIndexOf("\n\n") + 2);
    };
    expect(await notice({ pattern: "hit", limit: 1000 })).toBe(
      "[Showing matches 1-1000 of 1500 (limit=1000). Use offset=1001 to continue, or narrow pattern, path or glob]",
    );
    expect(await notice({ pattern: "hit", limit: 600 })).toBe(
      "[Showing matches 1-600 of 1500 (limit=600). Use offset=601 to continue, limit=1000 for more, or narrow pattern, path or glob]",
    );
    // "many.txt:N: hit M" lines: 100 take 1,981 bytes of the 2,048 the budget leaves, 103 take 2,047.
    expect(await notice({ pattern: "hit", limit: 100 }, 3072)).toBe(
      "[Showing matches 1-100 of 1500 (limit=100). Use offset=101 to continue, limit=200 for more, or narrow pattern, path or glob]",
    );
    expect(await notice({ pattern: "hit", limit: 103 }, 3072)).toBe(
      "[Showing matches 1-103 of 1500 (limit=103). Use offset=104 to continue, or narrow pattern, path or glob]",
    );
    expect(await notice({ pattern: "hit", limit: 1000 }, 3072)).toBe(
      "[Showing matches 1-103 of 1500 (2.0KB limit). Use offset=104 to continue, or narrow pattern, path or glob]",
    );
    await expect(grep(fs, { pattern: "hit", offset: 1501 })).rejects.toMatchObject({
      code: "offset_out_of_range",
      message: "Offset 1501 is beyond the last of the 1500 matches",
    });
  });

  it("pages through every match with offset, no gap and no overlap, whether the limit or the byte cap ends a page", async () => {
    const fs = fixtureFs();
    const pattern = "TODO|export|^line 2[0-9]$|^line 1[0-9]{2}$";
    const matchLines = (text: string) =>
      text
        .split("\n\n[")[0]!
        .split("\n")
        .filter((line) => /^[^\n]+?:\d+: /.test(line));
    const all = matchLines((await grep(fs, { pattern, limit: 1000 })).text);
    expect(all).toHaveLength(121);
    for (const [limit, maxOutputBytes, context] of [
      [7, undefined, 0],
      [1000, 2048, 0],
      [13, 2048, 2],
      [40, 3072, 1],
    ] as const) {
      const pages: string[][] = [];
      let offset: number | undefined = 1;
      while (offset !== undefined) {
        const args = grepTool.parameters.parse({ pattern, limit, context, offset });
        const ctx = maxOutputBytes === undefined ? toolContext(fs) : { ...toolContext(fs), maxOutputBytes };
        const { text } = await grepTool.execute(args, ctx);
        pages.push(matchLines(text));
        const next = /Use offset=(\d+) to continue/.exec(text)?.[1];
        expect(next === undefined || Number(next) === offset + pages.at(-1)!.length, text).toBe(true);
        offset = next === undefined ? undefined : Number(next);
      }
      expect(pages.length, `limit ${limit}`).toBeGreaterThan(2);
      expect(pages.flat(), `limit ${limit}, budget ${maxOutputBytes}, context ${context}`).toEqual(all);
    }
  });

  it("skips files over the size limit and says which", async () => {
    const huge = new Uint8Array(GREP_MAX_FILE_BYTES + 1).fill(0x61);
    const fs = new MemoryWorkspaceFs({ "huge.txt": huge, "small.txt": "a\n" });
    expect((await grep(fs, { pattern: "a" })).text).toBe("small.txt:1: a\n\n[Skipped 1 file(s) larger than 8.0MB: huge.txt]");
  });

  it("matches CRLF lines without the \\r", async () => {
    expect((await grep(fixtureFs(), { pattern: "line$", path: "src/windows.txt" })).text).toBe(
      "src/windows.txt:1: first line\nsrc/windows.txt:2: second TODO line\nsrc/windows.txt:3: third line",
    );
  });

  it("handles lookarounds, which skip the whole-file pre-check", async () => {
    expect((await grep(fixtureFs(), { pattern: "(?<=// )TODO", path: "src" })).text).toBe("src/lib/greet.ts:2:   // TODO: localise");
  });

  it("refuses a missing path and stops when aborted", async () => {
    await expect(grep(fixtureFs(), { pattern: "x", path: "missing" })).rejects.toMatchObject({ code: "not_found" });
    const controller = new AbortController();
    controller.abort();
    await expect(grep(fixtureFs(), { pattern: "x" }, controller.signal)).rejects.toMatchObject({ code: "aborted" });
  });
  it("a long line is cut before an emoji that would straddle its 500th unit, never inside it (hunt 118)", async () => {
    const fs = new MemoryWorkspaceFs({ "e.txt": `${"a".repeat(499)}😀 tail hit\n` });
    const out = await grepTool.execute(grepTool.parameters.parse({ pattern: "hit" }), toolContext(fs));
    expect(out.text).toBe(
      `e.txt:1: ${"a".repeat(499)}... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see lines of up to 50.0KB in full]`,
    );
  });
  it("a match line longer than the whole budget is shown cut, and the page still moves on", async () => {
    const fs = new MemoryWorkspaceFs({ "a.txt": `x\n${"漢".repeat(400)}hit\nhit two\n` });
    const first = await grepTool.execute(grepTool.parameters.parse({ pattern: "hit", limit: 1 }), {
      ...toolContext(fs),
      maxOutputBytes: 2048,
    });
    const [body, notice] = first.text.split("\n\n[");
    expect([body!.endsWith("... [truncated]"), new TextEncoder().encode(body).byteLength <= 1024, body!.startsWith("a.txt:2: 漢")]).toEqual(
      [true, true, true],
    );
    expect(notice).toMatch(/^Showing matches 1-1 of 2 .*Use offset=2 to continue/);
    const second = await grepTool.execute(grepTool.parameters.parse({ pattern: "hit", offset: 2 }), {
      ...toolContext(fs),
      maxOutputBytes: 2048,
    });
    expect(second.text).toBe("a.txt:3: hit two");
  });
});
