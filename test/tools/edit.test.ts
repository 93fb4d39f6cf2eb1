import { describe, expect, it } from "vitest";
import { EditParams, editTool } from "../../src/tools/edit";
import { fixtureFs, MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

const edit = (fs: MemoryWorkspaceFs, path: string, oldText: string, newText: string) =>
  editTool.execute({ path, edits: [{ oldText, newText }] }, toolContext(fs, { allowWrite: true }));
const editAll = (fs: MemoryWorkspaceFs, path: string, edits: { oldText: string; newText: string }[]) =>
  editTool.execute({ path, edits }, toolContext(fs, { allowWrite: true }));

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

  it("counts overlapping occurrences as several, and names lines once, the first ten occurrences and up to 1,000 counted", async () => {
    const fs = new MemoryWorkspaceFs({ "a.txt": "xxx\n", "b.txt": "}\n}\n}\n", "big.txt": "e e e e e e\n".repeat(50_000) });
    await expect(edit(fs, "a.txt", "xx", "y")).rejects.toMatchObject({
      code: "ambiguous_match",
      message:
        "Found 2 occurrences of oldText in a.txt (at line 1). It must occur exactly once: add surrounding lines to oldText to make it unique.",
    });
    await expect(edit(fs, "b.txt", "}\n}", "}")).rejects.toMatchObject({
      message:
        "Found 2 occurrences of oldText in b.txt (at lines 1, 2). It must occur exactly once: add surrounding lines to oldText to make it unique.",
    });
    // 300,000 occurrences: the message names the lines of the first ten (a one-letter oldText once
    // listed every one, a 900 KB answer after 14 s).
    await expect(edit(fs, "big.txt", "e", "f")).rejects.toMatchObject({
      message:
        "Found more than 1000 occurrences of oldText in big.txt (at lines 1, 2, ...). It must occur exactly once: add surrounding lines to oldText to make it unique.",
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

  it("falls back to a match that ignores trailing whitespace and typographic quotes, and says so", async () => {
    const fs = new MemoryWorkspaceFs({ "app.py": "def greet():\n    msg = \u201chello\u201d   \n    return msg\n" });
    const out = await edit(fs, "app.py", '    msg = "hello"\n    return msg', '    msg = "hi"\n    return msg');
    expect(out).toEqual({
      error: false,
      text: [
        "Successfully replaced 1 block in app.py. oldText matched only after normalising trailing whitespace and typographic quotes; the rest of the file is unchanged.",
        "",
        "--- a/app.py",
        "+++ b/app.py",
        "@@ -1,3 +1,3 @@",
        " def greet():",
        "-    msg = \u201chello\u201d   ",
        '+    msg = "hi"',
        "     return msg",
      ].join("\n"),
    });
    expect(fs.text("app.py")).toBe('def greet():\n    msg = "hi"\n    return msg\n');
  });

  it("replaces only the matched span: lookalikes elsewhere, blanks after the match and CRLF stay as they were", async () => {
    const fs = new MemoryWorkspaceFs({ "w.txt": "title = \u2018A\u2019\r\nx = a \u2013 b  \r\ny\u00a0= \u201cz\u201d\r\n" });
    const out = await edit(fs, "w.txt", "x = a - b", "x = a + b");
    expect(out.text.split("\n")[0]).toBe(
      "Successfully replaced 1 block in w.txt. oldText matched only after normalising Unicode dashes; the rest of the file is unchanged.",
    );
    expect(fs.text("w.txt")).toBe("title = \u2018A\u2019\r\nx = a + b  \r\ny\u00a0= \u201cz\u201d\r\n");
    await edit(fs, "w.txt", 'x = a + b\ny = "z"', 'x = 1\ny = "2"');
    expect(fs.text("w.txt")).toBe('title = \u2018A\u2019\r\nx = 1\r\ny = "2"\r\n');
  });

  it("refuses a normalised match that occurs more than once, naming its lines", async () => {
    const fs = new MemoryWorkspaceFs({ "s.js": "say(\u201chi\u201d);\nwait();\nsay(\u201chi\u201d);  \n" });
    await expect(edit(fs, "s.js", 'say("hi");', 'say("bye");')).rejects.toMatchObject({
      code: "ambiguous_match",
      message:
        "Found 2 occurrences of oldText in s.js (at lines 1, 3), ignoring trailing whitespace, typographic quotes, Unicode dashes and Unicode spaces; " +
        "none matches exactly. It must occur exactly once: add surrounding lines to oldText to make it unique.",
    });
    expect(fs.mutations).toEqual([]);
  });

  it("refuses a normalised match whose newText is what the file already has", async () => {
    const fs = new MemoryWorkspaceFs({ "q.txt": "a = \u201cx\u201d\n" });
    await expect(edit(fs, "q.txt", 'a = "x"', "a = \u201cx\u201d")).rejects.toMatchObject({
      code: "no_change",
      message: "newText is the text already there; nothing to change in q.txt",
    });
    await expect(edit(fs, "q.txt", 'a = "x"', 'a = "x"')).rejects.toMatchObject({ code: "no_change" });
    expect(fs.mutations).toEqual([]);
  });

  it("names the nearest line and what differs when nothing matches", async () => {
    const fs = new MemoryWorkspaceFs({ "f.py": "def f():\n\tx = 1\n\treturn x\n\ndef g():\n    return   1\n" });
    const noMatch =
      "Could not find oldText in f.py. It must match the file exactly, including whitespace and indentation; read the file and copy the text to replace.";
    await expect(edit(fs, "f.py", "def f():\n    x = 1", "")).rejects.toMatchObject({
      code: "no_match",
      message: `${noMatch} Nearest: line 2 of the file is "\\tx = 1"; oldText has "    x = 1" (they differ in indentation).`,
    });
    await expect(edit(fs, "f.py", "def g():\n    return 1", "")).rejects.toMatchObject({
      message: `${noMatch} Nearest: line 6 of the file is "    return   1"; oldText has "    return 1" (they differ in spaces inside the line).`,
    });
    await expect(edit(fs, "f.py", "\tx = 1\n\tretrun x", "")).rejects.toMatchObject({
      message: `${noMatch} Nearest: line 3 of the file is "\\treturn x"; oldText has "\\tretrun x".`,
    });
    await expect(edit(fs, "f.py", "\u00a0return\u00a0x", "")).rejects.toMatchObject({
      message: `${noMatch} Nearest: line 3 of the file is "\\treturn x"; oldText has "\\u00a0return\\u00a0x" (they differ in indentation and Unicode spaces).`,
    });
    await expect(edit(fs, "f.py", "class Unrelated:", "")).rejects.toMatchObject({ message: noMatch });
    expect(fs.mutations).toEqual([]);
  });

  it("follows a candidate's agreement for at most 64 Ki characters of oldText: candidates that agree that far tie, the first wins (hunt 70)", async () => {
    // Two candidates for "head": the first agrees for 35,000 lines, the second for all 40,000; both
    // pass the bound, so the first is taken (following each through a 2 MB oldText held the isolate 18 s).
    const block = (n: number, end: string) => `head\n${"x\n".repeat(n)}${end}\n`;
    const fs = new MemoryWorkspaceFs({ "big.txt": `${block(35_000, "y")}${block(40_000, "R")}` });
    await expect(edit(fs, "big.txt", `head\n${"x\n".repeat(40_000)}Q`, "")).rejects.toMatchObject({
      code: "no_match",
      message: expect.stringMatching(/ Nearest: line 35002 of the file is "y"; oldText has "x"\.$/),
    });
  });

  it("follows the nearest candidate whose next lines agree with oldText longest", async () => {
    const fs = new MemoryWorkspaceFs({ "c.ts": "if (a) {\n  run();\n}\nif (b) {\n  stop();\n  done = true;\n}\n" });
    await expect(edit(fs, "c.ts", "}\nif (b) {\n  stop();\n  done = 1;", "")).rejects.toMatchObject({
      message: expect.stringMatching(/ Nearest: line 6 of the file is " {2}done = true;"; oldText has " {2}done = 1;"\.$/),
    });
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

  it("applies several edits in one call, each matched against the file as it was, in file order whatever their order", async () => {
    const fs = new MemoryWorkspaceFs({ "m.ts": "const a = 1;\r\nconst b = 2;\r\nconst c = 3;\r\n" });
    const out = await editAll(fs, "m.ts", [
      { oldText: "const c = 3;", newText: "const c = 30;" },
      { oldText: "const a = 1;", newText: "const a = 10;\nconst a2 = 11;" },
      // Matched against the original: "const a = 1;" is still what this one names, not the new text.
      { oldText: "b = 2", newText: "b = 20" },
    ]);
    expect(fs.text("m.ts")).toBe("const a = 10;\r\nconst a2 = 11;\r\nconst b = 20;\r\nconst c = 30;\r\n");
    expect(out.text).toBe(
      [
        "Successfully replaced 3 blocks in m.ts.",
        "",
        "--- a/m.ts",
        "+++ b/m.ts",
        "@@ -1,3 +1,4 @@",
        "-const a = 1;",
        "-const b = 2;",
        "-const c = 3;",
        "+const a = 10;",
        "+const a2 = 11;",
        "+const b = 20;",
        "+const c = 30;",
      ].join("\n"),
    );
  });

  it("refuses overlapping edits and names them; refusals of one of several edits name it; nothing is written", async () => {
    const fs = new MemoryWorkspaceFs({ "o.txt": "alpha beta gamma\nalpha\n" });
    await expect(
      editAll(fs, "o.txt", [
        { oldText: "gamma", newText: "G" },
        { oldText: "alpha beta", newText: "AB" },
        { oldText: "beta gamma", newText: "BG" },
      ]),
    ).rejects.toMatchObject({
      code: "overlapping_edits",
      message: "edits[1] and edits[2] overlap in o.txt: each edit must replace its own text; merge them into one edit",
    });
    await expect(
      editAll(fs, "o.txt", [
        { oldText: "gamma", newText: "G" },
        { oldText: "alpha", newText: "A" },
      ]),
    ).rejects.toMatchObject({
      code: "ambiguous_match",
      message:
        "edits[1]: Found 2 occurrences of oldText in o.txt (at lines 1, 2). It must occur exactly once: add surrounding lines to oldText to make it unique.",
    });
    // Edits that all change nothing are refused; one among others that do is applied with them, as pi does (hunt 79).
    await expect(
      editAll(fs, "o.txt", [
        { oldText: "gamma", newText: "gamma" },
        { oldText: "beta", newText: "beta" },
      ]),
    ).rejects.toMatchObject({ code: "no_change", message: "the edits leave the text as it is; nothing to change in o.txt" });
    await expect(editAll(fs, "o.txt", [{ oldText: "gamma", newText: "gamma" }])).rejects.toMatchObject({
      code: "no_change",
      message: "oldText and newText are identical; nothing to change in o.txt",
    });
    await expect(editAll(fs, "o.txt", [{ oldText: "delta", newText: "D" }])).rejects.toMatchObject({
      code: "no_match",
      message: expect.stringMatching(/^Could not find oldText in o\.txt\./),
    });
    // Adjacent is not overlapping.
    await editAll(fs, "o.txt", [
      { oldText: "alpha ", newText: "a " },
      { oldText: "beta gamma", newText: "b g" },
    ]);
    expect(fs.text("o.txt")).toBe("a b g\nalpha\n");
    const out = await editAll(fs, "o.txt", [
      { oldText: "b g", newText: "b g" },
      { oldText: "a ", newText: "A " },
    ]);
    expect(out.text.split("\n")[0]).toBe("Successfully replaced 2 blocks in o.txt.");
    expect(fs.text("o.txt")).toBe("A b g\nalpha\n");
  });

  it("says which of several edits matched only after normalising", async () => {
    const fs = new MemoryWorkspaceFs({ "q.py": "x = \u201chi\u201d\ny = 1\n" });
    const out = await editAll(fs, "q.py", [
      { oldText: "y = 1", newText: "y = 2" },
      { oldText: 'x = "hi"', newText: 'x = "bye"' },
    ]);
    expect(out.text.split("\n")[0]).toBe(
      "Successfully replaced 2 blocks in q.py. the oldText of edits[1] matched only after normalising typographic quotes; the rest of the file is unchanged.",
    );
    expect(fs.text("q.py")).toBe('x = "bye"\ny = 2\n');
  });

  it("takes pi's older single oldText/newText form and an edits array sent as a JSON string", () => {
    const prepare = (args: Record<string, unknown>) => EditParams.safeParse(editTool.prepareArguments!(args));
    expect(prepare({ path: "a", oldText: "x", newText: "y" }).data).toEqual({ path: "a", edits: [{ oldText: "x", newText: "y" }] });
    expect(prepare({ path: "a", edits: '[{"oldText":"x","newText":"y"}]' }).data).toEqual({
      path: "a",
      edits: [{ oldText: "x", newText: "y" }],
    });
    // Both forms at once: the single one is one more edit, as pi takes it (hunt 79), also beside an array sent as a string.
    expect(prepare({ path: "a", oldText: "x", newText: "y", edits: [{ oldText: "v", newText: "w" }] }).data).toEqual({
      path: "a",
      edits: [
        { oldText: "v", newText: "w" },
        { oldText: "x", newText: "y" },
      ],
    });
    expect(prepare({ path: "a", oldText: "x", newText: "y", edits: '[{"oldText":"v","newText":"w"}]' }).data).toEqual({
      path: "a",
      edits: [
        { oldText: "v", newText: "w" },
        { oldText: "x", newText: "y" },
      ],
    });
    // A string that is not JSON, or edits that are not an array: the schema refuses them as they are.
    expect(prepare({ path: "a", oldText: "x", newText: "y", edits: { oldText: "v" } }).success).toBe(false);
    expect(prepare({ path: "a", edits: "[{" }).success).toBe(false);
    expect(prepare({ path: "a", edits: [] }).success).toBe(false);
    expect(prepare({ path: "a", edits: Array.from({ length: 101 }, (_, i) => ({ oldText: `${i}`, newText: "" })) }).success).toBe(false);
  });

  it("places 100 edits that match only after normalising, each on its own line of a long file, exactly where they are", async () => {
    // Lines with trailing blanks, curly quotes, dashes and decomposed accents, so that a line's offset
    // in the file, in the normalised text and in the composed text all differ from each other.
    const line = (i: number) =>
      i % 3 === 0
        ? `  v${i} = \u2018caf\u0065\u0301 ${i}\u2019; \t `
        : i % 3 === 1
          ? `  w${i} = ${i} \u2014 1;  `
          : `  x${i} = "na\u0131\u0308ve ${i}";`;
    const count = 3000;
    const lines = Array.from({ length: count }, (_, i) => line(i));
    const fs = new MemoryWorkspaceFs({ "long.txt": `${lines.join("\n")}\n` });
    const chosen = Array.from({ length: 100 }, (_, k) => k * 29 + 5);
    // oldText as a model types it: ASCII quotes and dashes, composed accents, no trailing blanks.
    const typed = (i: number) =>
      i % 3 === 0 ? `v${i} = 'caf\u00e9 ${i}';` : i % 3 === 1 ? `w${i} = ${i} - 1;` : `x${i} = "na\u0131\u0308ve ${i}";`;
    const out = await editAll(
      fs,
      "long.txt",
      chosen.map((i) => ({ oldText: typed(i), newText: `EDITED ${i}` })),
    );
    expect(out.text.split("\n")[0]).toBe(
      `Successfully replaced 100 blocks in long.txt. the oldText of ${chosen
        .map((_, k) => k)
        .filter((k) => chosen[k]! % 3 !== 2)
        .map((k) => `edits[${k}]`)
        .join(
          ", ",
        )} matched only after normalising Unicode dashes, typographic quotes and Unicode composition; the rest of the file is unchanged.`,
    );
    // (Kinds in the order the edits first needed them; no match covers a line's trailing blanks.) Each
    // chosen line keeps its indentation and its trailing blanks, which the match did not cover.
    const expected = lines.map((text, i) => {
      if (!chosen.includes(i)) return text;
      if (i % 3 === 2) return `  EDITED ${i}`;
      return i % 3 === 0 ? `  EDITED ${i} \t ` : `  EDITED ${i}  `;
    });
    expect(fs.text("long.txt")).toBe(`${expected.join("\n")}\n`);
  });
});
