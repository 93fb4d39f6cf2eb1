import { describe, expect, it } from "vitest";
import { parseArguments } from "../../src/model/chunk-accumulator";
import { QUOTED_ARGS, summarizeArgs, toolSummary } from "../../src/runtime/run-tracer";
import { BUILTIN_TOOLS, toolDefinition } from "../../src/tools/registry";

const SECRET = "OPENAI_API_KEY=sk-live-SECRET123456";
const finished = (text: string, over: { error?: boolean; code?: string | null; exitCode?: number | null } = {}) => ({
  outcome: "finished" as const,
  text,
  error: over.error ?? false,
  code: over.code ?? null,
  exitCode: over.exitCode ?? null,
});

describe("what a trace keeps of a tool call", () => {
  it("an observation counts what a tool returned and never holds it", () => {
    expect(toolSummary("read", finished(`${SECRET}\nB=2`))).toBe("read: 2 lines, 39 bytes");
    expect(toolSummary("read", finished(`${SECRET}\n\n[1 more lines in file. Use offset=2 to continue.]`))).toBe("read: 1 line, 35 bytes");
    expect(toolSummary("read", finished("(empty file)"))).toBe("read: 0 lines, 0 bytes");
    expect(toolSummary("ls", finished("(empty directory)"))).toBe("ls: 0 lines, 0 bytes");
    expect(toolSummary("find", finished("src/a.ts\nsrc/b.ts"))).toBe("find: 2 lines, 17 bytes");
    expect(toolSummary("grep", finished(`.env:1: ${SECRET}\nsrc/a.ts:3: KEY\nsrc/a.ts:9: KEY`))).toBe("grep: 3 matches in 2 files");
    expect(toolSummary("grep", finished("src/a.ts-2- x\nsrc/a.ts:3: KEY\n--\nb.ts:1: KEY"))).toBe("grep: 2 matches in 2 files");
    expect(toolSummary("grep", finished("No matches found"))).toBe("grep: 0 matches in 0 files");
    expect(toolSummary("write", finished("Successfully wrote 35 bytes to .env"))).toBe("Successfully wrote 35 bytes to .env");
    expect(toolSummary("edit", finished(`Successfully replaced 1 block in .env.\n\n--- a/.env\n+++ b/.env\n-${SECRET}`))).toBe(
      "Successfully replaced 1 block in .env.",
    );
  });

  it("bash: its exit code and how many lines it printed, stderr included, never the lines", () => {
    const exited = (text: string, exitCode: number, code = "exit_status") => finished(text, { error: exitCode !== 0, code, exitCode });
    expect(toolSummary("bash", exited(`${SECRET}\n\n[Command exited with code 3]`, 3))).toBe("bash: exit 3, 1 line of output");
    expect(toolSummary("bash", exited(`cat: nope: No such file or directory ${SECRET}\n\n[Command exited with code 1]`, 1))).toBe(
      "bash: exit 1, 1 line of output",
    );
    expect(toolSummary("bash", finished(`a\n${SECRET}`, { exitCode: 0 }))).toBe("bash: exit 0, 2 lines of output");
    expect(toolSummary("bash", exited("(no output)\n\n[Command timed out after 50 ms]", 124, "bash_timeout"))).toBe(
      "bash: timed out, 0 lines of output",
    );
  });

  it("a failure or a denial: the first sentence of the harness's own message; an unexpected error only its code", () => {
    const failed = (text: string, code: string) => finished(text, { error: true, code });
    expect(toolSummary("read", failed("not_found: no file at 'src/nope.ts'", "not_found"))).toBe("not_found: no file at 'src/nope.ts'");
    expect(
      toolSummary(
        "edit",
        failed(
          `no_match: Could not find oldText in .env. It must match the file exactly. Nearest: line 1 of the file is "${SECRET}".`,
          "no_match",
        ),
      ),
    ).toBe("no_match: Could not find oldText in .env.");
    expect(toolSummary("read", failed(`tool_failed: Unexpected token 'O', "${SECRET}" is not valid JSON`, "tool_failed"))).toBe(
      "tool_failed",
    );
    expect(toolSummary("write", { outcome: "denied", reason: "write_not_allowed", text: "write_not_allowed: this run is read-only" })).toBe(
      "write_not_allowed: this run is read-only",
    );
  });

  it("an action's argument summary keeps a file's text out: only its length", () => {
    expect(summarizeArgs({ path: ".env", content: SECRET })).toBe('path=".env" content=<35 chars>');
    expect(summarizeArgs({ path: ".env", oldText: "A=1", newText: "A=2" })).toBe('path=".env" oldText=<3 chars> newText=<3 chars>');
    // edit's edits, as an array or as the JSON string some models send.
    const edits = [{ oldText: "A=1", newText: "A=2" }];
    expect(summarizeArgs({ path: ".env", edits })).toBe('path=".env" edits=<1 items>');
    expect(summarizeArgs({ path: ".env", edits: JSON.stringify(edits) })).toBe('path=".env" edits=<35 chars>');
    expect(summarizeArgs({ command: `cat <<EOF > .env\n${SECRET}\nEOF` })).toBe("command=<56 chars>");
    // A command is kept up to 180 characters: its words name the files a failing command is about.
    const long = `cat ${"src/a.ts ".repeat(19)}`.trim();
    expect(summarizeArgs({ command: long, timeoutMs: 500 })).toBe(`command=${JSON.stringify(long)} timeoutMs=500`);
    expect(summarizeArgs({ pattern: "x".repeat(81) })).toBe("pattern=<81 chars>");
  });

  it("keeps only the length of a string under another agent's name for a file's text (contents, file_text, new_string)", () => {
    expect(summarizeArgs({ path: ".env", contents: SECRET })).toBe('path=".env" contents=<35 chars>');
    expect(summarizeArgs({ path: ".env", file_text: SECRET })).toBe('path=".env" file_text=<35 chars>');
    expect(summarizeArgs({ file_path: ".env", old_string: "x", new_string: SECRET })).toBe(
      "file_path=<4 chars> old_string=<1 chars> new_string=<35 chars>",
    );
  });

  it("quotes exactly the built-in tools' string arguments that are not a file's text", () => {
    const strings = new Set<string>();
    for (const tool of BUILTIN_TOOLS) {
      const properties = (toolDefinition(tool).parameters as { properties: Record<string, { type?: string }> }).properties;
      for (const [key, schema] of Object.entries(properties)) if (schema.type === "string") strings.add(key);
    }
    for (const text of ["content", "oldText", "newText"]) strings.delete(text);
    expect([...strings].sort()).toEqual([...QUOTED_ARGS].sort());
  });

  it("an observation of arguments that are not JSON names the fault, never the arguments (a write cut off mid-call)", () => {
    const raw = `{"path":".env","content":"${SECRET}`;
    const invalid = parseArguments(raw).invalid!;
    const text = `invalid_arguments: ${invalid.message}`;
    expect(text).toContain(SECRET);
    expect(toolSummary("write", { outcome: "denied", reason: "invalid_arguments", text })).toBe(
      "invalid_arguments: tool call arguments are not valid JSON.",
    );
  });
});
