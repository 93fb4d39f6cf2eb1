import { describe, expect, it } from "vitest";
import { fitToolResult } from "../../src/runtime/result-budget";
import { GREP_MAX_FILE_BYTES, grepTool } from "../../src/tools/grep";
import { fixtureFs, MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

type Args = { pattern: string; path?: string; glob?: string; ignoreCase?: boolean; literal?: boolean; context?: number; limit?: number };
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
      text: `${TODO_LINES.join("\n")}\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]`,
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
        "[3 matches limit reached (3000 in total). Use limit=6 for more, or refine pattern]",
    );
  });

  it("defaults to 100 matches", async () => {
    const out = await grep(fixtureFs(), { pattern: "^line" });
    expect(out.text.split("\n\n")[0]?.split("\n")).toHaveLength(100);
    expect(
      out.text.endsWith(
        "docs/big.txt:100: line 100\n\n[100 matches limit reached (3000 in total). Use limit=200 for more, or refine pattern]",
      ),
    ).toBe(true);
  });

  it("stops at 50 KB of output", async () => {
    const fs = new MemoryWorkspaceFs({ "w.txt": `${"w".repeat(400)}\n`.repeat(200) });
    const out = await grep(fs, { pattern: "w", limit: 200 });
    const body = out.text.split("\n\n")[0] ?? "";
    expect(new TextEncoder().encode(body).byteLength).toBeLessThanOrEqual(51_200);
    expect(body.split("\n")).toHaveLength(124); // "w.txt:N: " + 400 chars: lines of 409-411 bytes
    expect(out.text.endsWith("\n\n[50.0KB limit reached]")).toBe(true);
  });

  it("leaves room in the run's result budget for its notices: the last guard never cuts them off", async () => {
    const fs = new MemoryWorkspaceFs({ "m.txt": `${"match this line with some more text to make it long enough, ok\n".repeat(3000)}` });
    for (const budget of [51_200, 25_600]) {
      const args = grepTool.parameters.parse({ pattern: "match", limit: 1000 });
      const out = await grepTool.execute(args, { ...toolContext(fs), maxOutputBytes: budget });
      expect(fitToolResult(out.text, budget / 4)).toBe(out.text);
      expect(out.text).toMatch(
        /\n\n\[1000 matches limit reached \(3000 in total\)\. Use limit=1000 for more, or refine pattern\. \d+\.\dKB limit reached\]$/,
      );
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
});
