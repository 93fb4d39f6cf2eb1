import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentRunOptions } from "../../src/domain/run";
import { ToolExecutionService } from "../../src/tools/execution-service";
import { DENIAL_REASONS } from "../../src/tools/policy";
import { BUILTIN_TOOLS } from "../../src/tools/registry";
import type { AnyTool } from "../../src/tools/tool";
import { fixtureFs, type MemoryWorkspaceFs } from "../helpers/memory-fs";

const signal = new AbortController().signal;
let nextId = 0;
const call = (name: string, args: Record<string, unknown> = {}) => ({ id: `tc_${++nextId}`, name, arguments: args });

function service(
  options: Partial<AgentRunOptions> = {},
  fs: MemoryWorkspaceFs | null = fixtureFs(),
  tools: readonly AnyTool[] = BUILTIN_TOOLS,
) {
  return new ToolExecutionService({ tools, fs, options: AgentRunOptions.parse(options) });
}

describe("ToolExecutionService: definitions", () => {
  it("offers only the read-only tools by default", () => {
    expect(
      service()
        .definitions()
        .map((d) => d.name),
    ).toEqual(["read", "ls", "grep", "find"]);
  });

  it("adds write/edit with allowWrite and bash with allowBash", () => {
    expect(
      service({ allowWrite: true })
        .definitions()
        .map((d) => d.name),
    ).toEqual(["read", "ls", "grep", "find", "write", "edit"]);
    expect(
      service({ allowBash: true })
        .definitions()
        .map((d) => d.name),
    ).toEqual(["read", "ls", "grep", "find", "bash"]);
  });

  it("describes the tools with the run's byte limit, which their results are cut at", async () => {
    const fs = fixtureFs();
    const run = new ToolExecutionService({ tools: BUILTIN_TOOLS, fs, options: AgentRunOptions.parse({}), maxOutputBytes: 25_600 });
    const read = run.definitions().find((d) => d.name === "read")!;
    expect(read.description).toContain("Output is truncated to 2000 lines or 24.0KB (whichever is hit first)");
    await fs.writeFile("data.csv", new TextEncoder().encode(`${"v".repeat(49)}\n`.repeat(1000)));
    const result = await run.execute(call("read", { path: "data.csv", limit: 1000 }), signal);
    expect(result.text.endsWith("\n\n[Showing lines 1-491 of 1000 (24.0KB limit). Use offset=492 to continue.]")).toBe(true);
    expect(
      service()
        .definitions()
        .find((d) => d.name === "read")!.description,
    ).toContain("2000 lines or 50.0KB");
  });

  it("offers nothing without a workspace", () => {
    expect(service({ allowWrite: true, allowBash: true }, null).definitions()).toEqual([]);
  });
});

describe("ToolExecutionService: denials", () => {
  it("knows exactly these reason codes", () => {
    expect(DENIAL_REASONS).toEqual([
      "path_escape",
      "path_too_long",
      "write_not_allowed",
      "bash_not_allowed",
      "tool_budget_exhausted",
      "unknown_tool",
      "invalid_arguments",
    ]);
  });

  it("denies an unknown tool and lists the available ones", async () => {
    expect(await service().execute(call("delete_everything"), signal)).toEqual({
      outcome: "denied",
      reason: "unknown_tool",
      text: 'unknown_tool: there is no tool named "delete_everything"; available tools: read, ls, grep, find',
    });
  });

  it("denies every call when the session has no workspace", async () => {
    expect(await service({}, null).execute(call("read", { path: "README.md" }), signal)).toEqual({
      outcome: "denied",
      reason: "unknown_tool",
      text: 'unknown_tool: there is no tool named "read"; this session has no workspace, so no tools are available',
    });
  });

  it("denies write and edit without allowWrite and never runs them", async () => {
    const fs = fixtureFs();
    const s = service({}, fs);
    expect(await s.execute(call("write", { path: "x.txt", content: "x" }), signal)).toEqual({
      outcome: "denied",
      reason: "write_not_allowed",
      text: "write_not_allowed: write changes files, and this run is read-only (allowWrite=false); describe the change instead",
    });
    expect(await s.execute(call("edit", { path: "README.md", oldText: "TODO", newText: "DONE" }), signal)).toMatchObject({
      outcome: "denied",
      reason: "write_not_allowed",
    });
    expect(fs.mutations).toEqual([]);
  });

  it("denies bash without allowBash", async () => {
    expect(await service({ allowWrite: true }).execute(call("bash", { command: "ls" }), signal)).toEqual({
      outcome: "denied",
      reason: "bash_not_allowed",
      text: "bash_not_allowed: bash is not allowed in this run (allowBash=false); use read, ls, grep and find instead",
    });
  });

  it("denies the (maxToolCalls+1)th call, counting denied calls too", async () => {
    const s = service({ maxToolCalls: 2 });
    expect((await s.execute(call("nope"), signal)).outcome).toBe("denied");
    expect((await s.execute(call("read", { path: "README.md" }), signal)).outcome).toBe("finished");
    expect(await s.execute(call("read", { path: "README.md" }), signal)).toEqual({
      outcome: "denied",
      reason: "tool_budget_exhausted",
      text: "tool_budget_exhausted: this run allows 2 tool calls and all were used; answer with what you have",
    });
    expect(s.callCount).toBe(3);
  });

  it("checks the budget first, then the tool, then permission, then arguments", async () => {
    expect(await service({ maxToolCalls: 0 }).execute(call("nope"), signal)).toMatchObject({ reason: "tool_budget_exhausted" });
    expect(await service().execute(call("write", { path: 1 }), signal)).toMatchObject({ reason: "write_not_allowed" });
    expect(await service().execute(call("read", { path: "../x" }), signal)).toMatchObject({ reason: "path_escape" });
  });

  it("denies invalid arguments with the field name", async () => {
    const s = service();
    expect(await s.execute(call("read", { path: 5 }), signal)).toEqual({
      outcome: "denied",
      reason: "invalid_arguments",
      text: "invalid_arguments: invalid arguments for read: path: Invalid input: expected string, received number",
    });
    expect((await s.execute(call("read", {}), signal)).text).toBe(
      "invalid_arguments: invalid arguments for read: path: Invalid input: expected string, received undefined",
    );
    expect((await s.execute(call("grep", { pattern: "x", limit: 0 }), signal)).text).toBe(
      "invalid_arguments: invalid arguments for grep: limit: Too small: expected number to be >=1",
    );
    expect((await s.execute(call("read", { path: "a", timeout: 3 }), signal)).text).toBe(
      'invalid_arguments: invalid arguments for read: Unrecognized key: "timeout"',
    );
  });

  it("prepares a tool's older argument shape before validating: edit's top-level oldText/newText", async () => {
    const s = service({ allowWrite: true });
    const legacy = await s.execute(call("edit", { path: "README.md", oldText: "TODO", newText: "DONE" }), signal);
    expect(legacy).toMatchObject({ outcome: "finished", error: false });
    // Both shapes at once: the single one is one more edit, as pi takes it (hunt 79); here it overlaps the other.
    const both = await s.execute(
      call("edit", { path: "README.md", oldText: "DONE", newText: "x", edits: [{ oldText: "DONE", newText: "y" }] }),
      signal,
    );
    expect(both.text).toBe(
      "overlapping_edits: edits[0] and edits[1] overlap in README.md: each edit must replace its own text; merge them into one edit",
    );
    expect((await s.execute(call("edit", { path: "README.md", oldText: "DONE" }), signal)).text).toBe(
      "invalid_arguments: invalid arguments for edit: edits.0.newText: Invalid input: expected string, received undefined",
    );
  });

  it.each([
    ["read", { path: "../outside.txt" }, 'path_escape: path "../outside.txt" leaves the workspace root'],
    ["ls", { path: "/etc" }, 'path_escape: path "/etc" is absolute and not under /workspace; use a path relative to the workspace root'],
    ["grep", { pattern: "x", path: "src/../../.." }, 'path_escape: path "src/../../.." leaves the workspace root'],
    ["find", { pattern: "*", path: "a\0b" }, 'path_escape: path "a\\\\0b" contains a NUL byte'],
    ["write", { path: "C:/x", content: "" }, 'path_escape: path "C:/x" has a drive letter; use a path relative to the workspace root'],
    ["edit", { path: "../x", oldText: "a", newText: "b" }, 'path_escape: path "../x" leaves the workspace root'],
    ["read", { path: "/workspace/../x" }, 'path_escape: path "/workspace/../x" leaves the workspace root'],
    [
      "read",
      { path: "/workspaces/x" },
      'path_escape: path "/workspaces/x" is absolute and not under /workspace; use a path relative to the workspace root',
    ],
  ])("denies a path escape in %s before running it", async (name, args, text) => {
    const fs = fixtureFs();
    expect(await service({ allowWrite: true }, fs).execute(call(name, args), signal)).toEqual({
      outcome: "denied",
      reason: "path_escape",
      text,
    });
    expect(fs.mutations).toEqual([]);
  });

  it.each([
    ["read", { path: "a".repeat(5000) }],
    ["write", { path: `src/${"b".repeat(4996)}`, content: "x" }],
  ])("denies a path over 4096 characters in %s as path_too_long, not as an escape", async (name, args) => {
    const fs = fixtureFs();
    const path = (args as { path: string }).path;
    expect(path).toHaveLength(5000);
    expect(await service({ allowWrite: true }, fs).execute(call(name, args), signal)).toEqual({
      outcome: "denied",
      reason: "path_too_long",
      text: `path_too_long: path "${path.slice(0, 200)}" is 5000 characters long; the limit is 4096`,
    });
    expect(fs.mutations).toEqual([]);
  });
});

describe("ToolExecutionService: execution", () => {
  it("takes /workspace paths (bash's cwd) as paths from the workspace root in every file tool", async () => {
    const fs = fixtureFs();
    const s = service({ allowWrite: true, maxToolCalls: 50 }, fs);
    const text = async (name: string, args: Record<string, unknown>) => (await s.execute(call(name, args), signal)).text;
    expect(await text("read", { path: "/workspace/src/lib/math.ts", limit: 1 })).toBe(
      "export const add = (a: number, b: number) => a + b;\n\n[2 more lines in file. Use offset=2 to continue.]",
    );
    expect(await text("ls", { path: "/workspace" })).toBe(await text("ls", { path: "." }));
    expect(await text("ls", { path: "/workspace/src/" })).toBe(await text("ls", { path: "src" }));
    expect(await text("grep", { pattern: "TODO", path: "/workspace/src/lib" })).toBe(
      await text("grep", { pattern: "TODO", path: "src/lib" }),
    );
    expect(await text("find", { pattern: "*.ts", path: "/workspace/src" })).toBe(await text("find", { pattern: "*.ts", path: "src" }));
    expect(await text("edit", { path: "/workspace/src/lib/math.ts", oldText: "a - b;", newText: "b - a;" })).toContain(
      "Successfully replaced 1 block in src/lib/math.ts.",
    );
    expect(await text("write", { path: "/workspace/out/new.txt", content: "x" })).toContain("out/new.txt");
    expect(fs.text("out/new.txt")).toBe("x");
    expect(await text("read", { path: "/workspace" })).toBe(
      'is_directory: "." names a directory; read takes a file path; use ls to list it',
    );
    expect(await text("write", { path: "/workspace/src/", content: "x" })).toBe(
      'is_directory: "./src/" names a directory; write takes a file path',
    );
    expect(s.plannedPaths(call("read", { path: "/workspace/src/x.ts" }))).toEqual({ reads: ["src/x.ts"], writes: [] });
  });

  it("runs an allowed call", async () => {
    expect(await service().execute(call("read", { path: "src/lib/math.ts", limit: 1 }), signal)).toEqual({
      outcome: "finished",
      error: false,
      text: "export const add = (a: number, b: number) => a + b;\n\n[2 more lines in file. Use offset=2 to continue.]",
      code: null,
      exitCode: null,
      touched: { reads: ["src/lib/math.ts"], writes: [] },
    });
  });

  it("turns workspace and tool errors into '<code>: <message>' results", async () => {
    const s = service();
    expect(await s.execute(call("read", { path: "missing.txt" }), signal)).toEqual({
      outcome: "finished",
      error: true,
      text: "not_found: 'missing.txt' does not exist",
      code: "not_found",
      exitCode: null,
      touched: { reads: ["missing.txt"], writes: [] },
    });
    expect(await s.execute(call("grep", { pattern: "[" }), signal)).toMatchObject({
      outcome: "finished",
      error: true,
      text: expect.stringMatching(/^invalid_regex: invalid regular expression "\[": /),
    });
  });

  it("turns an unexpected exception into tool_failed", async () => {
    const broken: AnyTool = {
      name: "broken",
      description: "always throws",
      parameters: z.strictObject({}),
      mutates: false,
      execute: async () => {
        throw new TypeError("boom");
      },
    };
    expect(await service({}, fixtureFs(), [broken]).execute(call("broken"), signal)).toEqual({
      outcome: "finished",
      error: true,
      text: "tool_failed: boom",
      code: "tool_failed",
      exitCode: null,
      touched: { reads: [], writes: [] },
    });
  });

  it("records the paths a call read and wrote, and plans them from its arguments", async () => {
    const fs = fixtureFs();
    const s = service({ allowWrite: true, allowBash: true }, fs);
    const edited = await s.execute(call("edit", { path: "src/lib/math.ts", oldText: "a - b;", newText: "b - a;" }), signal);
    expect(edited).toMatchObject({
      outcome: "finished",
      error: false,
      touched: { reads: ["src/lib/math.ts"], writes: ["src/lib/math.ts"] },
    });
    const grepped = await s.execute(call("grep", { pattern: "TODO", path: "src/lib" }), signal);
    expect(grepped).toMatchObject({
      touched: { reads: [".gitignore", "src/lib/.gitignore", "src/lib/greet.ts", "src/lib/math.ts"], writes: [] },
    });
    const moved = await s.execute(call("bash", { command: "mv debug.log logs.txt && cat README.md > /dev/null" }), signal);
    expect(moved).toMatchObject({ touched: { reads: ["README.md", "debug.log"], writes: ["debug.log", "logs.txt"] } });
    expect(s.plannedPaths(call("write", { path: "./a/../b.txt", content: "" }))).toEqual({ reads: [], writes: ["b.txt"] });
    expect(s.plannedPaths(call("read", { path: "src//x.ts" }))).toEqual({ reads: ["src/x.ts"], writes: [] });
    expect(s.plannedPaths(call("read", { path: "../escape" }))).toEqual({ reads: [], writes: [] });
    expect(s.plannedPaths(call("bash", { command: "ls" }))).toEqual({ reads: [], writes: [] });
  });

  it("runs file-changing calls one at a time in call order", async () => {
    const fs = fixtureFs();
    const s = service({ allowWrite: true }, fs);
    const [first, second] = await Promise.all([
      s.execute(call("edit", { path: "src/lib/math.ts", oldText: "a - b;", newText: "a - b - 0;" }), signal),
      s.execute(call("edit", { path: "src/lib/math.ts", oldText: "a - b - 0;", newText: "0;" }), signal),
    ]);
    expect(first).toMatchObject({ outcome: "finished", error: false });
    expect(second).toMatchObject({ outcome: "finished", error: false });
    expect(fs.text("src/lib/math.ts")).toContain("export const sub = (a: number, b: number) => 0;");
  });

  it("runs bash with the run's write permission", async () => {
    const fs = fixtureFs();
    const readOnly = await service({ allowBash: true }, fs).execute(call("bash", { command: "echo x > y.txt" }), signal);
    expect(readOnly).toMatchObject({ outcome: "finished", error: true, text: expect.stringContaining("EROFS") });
    const writable = await service({ allowBash: true, allowWrite: true }, fs).execute(call("bash", { command: "echo x > y.txt" }), signal);
    expect(writable).toEqual({
      outcome: "finished",
      error: false,
      text: "(no output)",
      code: null,
      exitCode: 0,
      touched: { reads: [], writes: ["y.txt"] },
    });
    expect(fs.text("y.txt")).toBe("x\n");
  });
});
