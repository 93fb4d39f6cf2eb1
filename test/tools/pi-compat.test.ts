import { describe, expect, it } from "vitest";
import { editTool } from "../../src/tools/edit";
import { findTool } from "../../src/tools/find";
import { grepTool } from "../../src/tools/grep";
import { lsTool } from "../../src/tools/ls";
import { readTool } from "../../src/tools/read";
import type { Tool } from "../../src/tools/tool";
import { MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

/** A call as the execution service makes it: the model's arguments through the tool's schema, then the tool. */
// biome-ignore lint/suspicious/noExplicitAny: each tool has its own parameter type
async function call(tool: Tool<any>, fs: MemoryWorkspaceFs, args: Record<string, unknown>) {
  const prepared = tool.prepareArguments ? tool.prepareArguments(args) : args;
  return tool.execute(tool.parameters.parse(prepared), toolContext(fs, { allowWrite: true }));
}

describe("the file tools take what pi's take (hunt 79: pi 0.73.1's own tools on the same files)", () => {
  it("offset 0 is the first line, match, result or entry, as pi reads it (it was refused)", async () => {
    const fs = new MemoryWorkspaceFs({ "f.txt": "one\ntwo\nthree\n", "d/a.txt": "one\n" });
    expect((await call(readTool, fs, { path: "f.txt", offset: 0 })).text).toBe("one\ntwo\nthree");
    expect((await call(grepTool, fs, { pattern: "one", offset: 0 })).text).toBe("d/a.txt:1: one\nf.txt:1: one");
    expect((await call(findTool, fs, { pattern: "*.txt", offset: 0 })).text).toBe("d/a.txt\nf.txt");
    expect((await call(lsTool, fs, { offset: 0 })).text).toBe("d/\nf.txt");
    expect(() => readTool.parameters.parse({ path: "f.txt", offset: -1 })).toThrow();
  });

  it("ls sorts as pi does: names lower-cased, compared as words (a directory before name.ext, é with e)", async () => {
    const fs = new MemoryWorkspaceFs({
      "dir.txt": "",
      "dir/x": "",
      "été.txt": "",
      "f.txt": "",
      "Z.txt": "",
      _x: "",
      ".x": "",
      "10.txt": "",
    });
    expect((await call(lsTool, fs, {})).text).toBe("_x\n.x\n10.txt\ndir/\ndir.txt\nété.txt\nf.txt\nZ.txt");
  });

  it("edit: a CR at the end of oldText in a CRLF file is its line break, as in pi (it matched nothing)", async () => {
    const fs = new MemoryWorkspaceFs({ "c.txt": "alpha\r\nbeta\r\ngamma\r\n" });
    const out = await call(editTool, fs, { path: "c.txt", edits: [{ oldText: "alpha\r\nbeta\r", newText: "ALPHA\r\nBETA\r" }] });
    expect(out.text.split("\n")[0]).toBe("Successfully replaced 1 block in c.txt.");
    expect(fs.text("c.txt")).toBe("ALPHA\r\nBETA\r\ngamma\r\n");
    // A file that has lone CRs of its own keeps them as text to match: exactly.
    const mac = new MemoryWorkspaceFs({ "m.txt": "a\rb\r\nc\n" });
    await call(editTool, mac, { path: "m.txt", edits: [{ oldText: "a\rb", newText: "a\rB" }] });
    expect(mac.text("m.txt")).toBe("a\rB\r\nc\n");
  });

  it("edit: an accent written as one character or as a letter and a combining mark matches either way (NFC), replacing only that span", async () => {
    const decomposed = "caf\u0065\u0301 = 1;\nna\u0131\u0308ve = 2;\n";
    const fs = new MemoryWorkspaceFs({ "n.txt": decomposed });
    const out = await call(editTool, fs, { path: "n.txt", edits: [{ oldText: "caf\u00e9 = 1;", newText: "caf\u00e9 = 3;" }] });
    expect(out.text.split("\n")[0]).toBe(
      "Successfully replaced 1 block in n.txt. oldText matched only after normalising Unicode composition; the rest of the file is unchanged.",
    );
    expect(fs.text("n.txt")).toBe("caf\u00e9 = 3;\nna\u0131\u0308ve = 2;\n");
    // Composed in the file, decomposed in oldText; Hangul jamo as macOS writes them.
    const hangul = new MemoryWorkspaceFs({ "k.txt": "const 한글 = 1;\n" });
    await call(editTool, hangul, { path: "k.txt", edits: [{ oldText: "\u1112\u1161\u11ab\u1100\u1173\u11af = 1", newText: "한글 = 2" }] });
    expect(hangul.text("k.txt")).toBe("const 한글 = 2;\n");
    // A match over several lines, each with marks of its own: the span starts and ends where it should.
    const lines = new MemoryWorkspaceFs({ "l.txt": "keep\nx a\u0301\nb\u0301 c\u0327a\u0300 y\nkeep\n" });
    await call(editTool, lines, { path: "l.txt", edits: [{ oldText: "\u00e1\nb\u0301 \u00e7\u00e0", newText: "Z" }] });
    expect(lines.text("l.txt")).toBe("keep\nx Z y\nkeep\n");
    // A mark NFC leaves apart (e + U+0301 + U+0331 composes to é + U+0331) is never cut off with the
    // character before it: a match ending between them is none (hunt 80), one taking both is taken.
    const marks = new MemoryWorkspaceFs({ "y.txt": "x e\u0301\u0331 y\n" });
    await expect(call(editTool, marks, { path: "y.txt", edits: [{ oldText: "x \u00e9", newText: "Z" }] })).rejects.toMatchObject({
      code: "no_match",
    });
    expect(marks.text("y.txt")).toBe("x e\u0301\u0331 y\n");
    await call(editTool, marks, { path: "y.txt", edits: [{ oldText: "x \u00e9\u0331", newText: "Z" }] });
    expect(marks.text("y.txt")).toBe("Z y\n");
    // One of several edits that changes nothing leaves the file's text as it is, also where it matched
    // only after normalising (it turned curly quotes into ASCII ones, hunt 80).
    const quotes = new MemoryWorkspaceFs({ "q.txt": "say \u201chi\u201d\nx = 1\n" });
    await call(editTool, quotes, {
      path: "q.txt",
      edits: [
        { oldText: 'say "hi"', newText: 'say "hi"' },
        { oldText: "x = 1", newText: "x = 2" },
      ],
    });
    expect(quotes.text("q.txt")).toBe("say \u201chi\u201d\nx = 2\n");
    // Still one place: the same text spelled two ways is two occurrences (oldText, spelled a third way, matches both).
    const twice = new MemoryWorkspaceFs({ "t.txt": "\u00e9 \u00e8\ne\u0301 e\u0300\n" });
    await expect(call(editTool, twice, { path: "t.txt", edits: [{ oldText: "\u00e9 e\u0300", newText: "x" }] })).rejects.toMatchObject({
      code: "ambiguous_match",
      message:
        "Found 2 occurrences of oldText in t.txt (at lines 1, 2), ignoring trailing whitespace, typographic quotes, Unicode dashes, Unicode spaces and Unicode composition; none matches exactly. It must occur exactly once: add surrounding lines to oldText to make it unique.",
    });
    await expect(call(editTool, twice, { path: "t.txt", edits: [{ oldText: "\u00e9 e\u0300!", newText: "x" }] })).rejects.toMatchObject({
      code: "no_match",
    });
  });
});
