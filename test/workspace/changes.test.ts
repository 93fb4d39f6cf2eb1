import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { unzlibSync } from "fflate";
import { describe, expect, it } from "vitest";
import { MAX_DIFF_EDIT_LINES } from "../../src/domain/limits";
import { type FileChange, renderChanges, renderUnifiedDiff } from "../../src/workspace/changes";
import { SqliteOverlay } from "../../src/workspace/overlay";
import { openWorkspace } from "../../src/workspace/snapshot-workspace-fs";
import { text } from "./archives";
import { seedWorkspace } from "./helpers";

const v = (s: string, mode = 0o644) => ({ bytes: text(s), mode });

describe("renderUnifiedDiff", () => {
  it("renders modified, added, deleted, no-newline, empty, CRLF, mode and binary changes git-style, sorted by path", async () => {
    // This fixture was written out with the original tree and checked with `git apply --check -v`
    // and `git apply`; the binary blocks are what `git diff --binary` (git 2.39) prints for them.
    const changes: FileChange[] = [
      { path: "src/app.ts", before: v("l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n"), after: v("l1\nl2\nL3\nl4\nl5\nl6\nl7\nl8\nl9\n") },
      { path: "added.txt", before: null, after: v("new\nfile\n") },
      { path: "deleted.txt", before: v("old\n"), after: null },
      { path: "no-eol.txt", before: v("a\nb"), after: v("a\nc") },
      { path: "empty-new.txt", before: null, after: v("") },
      { path: "crlf.txt", before: v("one\r\ntwo\r\n"), after: v("one\r\n2\r\n") },
      { path: "run.sh", before: v("echo\n"), after: v("echo\n", 0o755) },
      { path: "dir/ü.txt", before: v("u\n"), after: v("v\n") },
      { path: "img.bin", before: { bytes: new Uint8Array([0, 1]), mode: 0o644 }, after: { bytes: new Uint8Array([0, 2]), mode: 0o644 } },
      { path: "new.bin", before: null, after: { bytes: new Uint8Array([0xff, 0xfe, 0]), mode: 0o644 } },
    ];
    expect(await renderUnifiedDiff(changes)).toBe(
      [
        "diff --git a/added.txt b/added.txt",
        "new file mode 100644",
        "--- /dev/null",
        "+++ b/added.txt",
        "@@ -0,0 +1,2 @@",
        "+new",
        "+file",
        "diff --git a/crlf.txt b/crlf.txt",
        "--- a/crlf.txt",
        "+++ b/crlf.txt",
        "@@ -1,2 +1,2 @@",
        " one\r",
        "-two\r",
        "+2\r",
        "diff --git a/deleted.txt b/deleted.txt",
        "deleted file mode 100644",
        "--- a/deleted.txt",
        "+++ /dev/null",
        "@@ -1,1 +0,0 @@",
        "-old",
        'diff --git "a/dir/\\303\\274.txt" "b/dir/\\303\\274.txt"',
        '--- "a/dir/\\303\\274.txt"',
        '+++ "b/dir/\\303\\274.txt"',
        "@@ -1,1 +1,1 @@",
        "-u",
        "+v",
        "diff --git a/empty-new.txt b/empty-new.txt",
        "new file mode 100644",
        "diff --git a/img.bin b/img.bin",
        "index bdc955b7b2e610ad5a72302b139a2e6cb325519a..8835708590a9afa236e1bbad18df9d23de82ccd3 100644",
        "GIT binary patch",
        "literal 2",
        "JcmZQz0ssI600RI3",
        "",
        "literal 2",
        "JcmZQz1ONa700IC2",
        "",
        "diff --git a/new.bin b/new.bin",
        "new file mode 100644",
        "index 0000000000000000000000000000000000000000..6e00d25c6cd705d172279b791d49c6e378416d86",
        "GIT binary patch",
        "literal 3",
        "KcmezWj{yJ#`~m&|",
        "",
        "literal 0",
        "HcmV?d00001",
        "",
        "diff --git a/no-eol.txt b/no-eol.txt",
        "--- a/no-eol.txt",
        "+++ b/no-eol.txt",
        "@@ -1,2 +1,2 @@",
        " a",
        "-b",
        "\\ No newline at end of file",
        "+c",
        "\\ No newline at end of file",
        "diff --git a/run.sh b/run.sh",
        "old mode 100644",
        "new mode 100755",
        "diff --git a/src/app.ts b/src/app.ts",
        "--- a/src/app.ts",
        "+++ b/src/app.ts",
        "@@ -1,8 +1,9 @@",
        " l1",
        " l2",
        "-l3",
        "+L3",
        " l4",
        " l5",
        " l6",
        " l7",
        " l8",
        "+l9",
        "",
      ].join("\n"),
    );
  });

  it("writes deleted, mode-only and mode-and-content binary changes as `git diff --binary` does", async () => {
    const bin = (bytes: number[], mode = 0o644) => ({ bytes: new Uint8Array(bytes), mode });
    const changes: FileChange[] = [
      { path: "old.bin", before: bin([0x67, 0x6f, 0x6e, 0x65, 0, 0xff]), after: null },
      { path: "tool.bin", before: bin([0, 1, 2]), after: bin([0, 1, 2], 0o755) },
      { path: "exec.bin", before: bin([0, 1, 2]), after: bin([0, 1, 2, 3], 0o755) },
    ];
    // Pasted from `git diff --cached --binary` (git 2.39) over the same files on disk.
    expect(await renderUnifiedDiff(changes)).toBe(
      [
        "diff --git a/exec.bin b/exec.bin",
        "old mode 100644",
        "new mode 100755",
        "index 8352675d67aed6625ece79af41c27fdb4ee2e867..eaf36c1daccfdf325514461cd1a2ffbc139b5464",
        "GIT binary patch",
        "literal 4",
        "LcmZQzWMT#Y01f~L",
        "",
        "literal 3",
        "KcmZQzWC8#H2LJ>B",
        "",
        "diff --git a/old.bin b/old.bin",
        "deleted file mode 100644",
        "index cbc8645549033fddbf816c7169c19e8688db4b3f..0000000000000000000000000000000000000000",
        "GIT binary patch",
        "literal 0",
        "HcmV?d00001",
        "",
        "literal 6",
        "NcmYe#&r4<a4*&>(0;vE1",
        "",
        "diff --git a/tool.bin b/tool.bin",
        "old mode 100644",
        "new mode 100755",
        "",
      ].join("\n"),
    );
  });

  it("splits longer binary data into base85 lines of at most 52 deflated bytes that git's decoding restores", async () => {
    // Git deflated this pair into stored blocks; fflate's deflate differs, so the bytes are compared
    // after decoding. The decoder is checked against git's own lines first.
    const before = new Uint8Array(60).map((_, i) => (i * 37 + 11) & 255);
    before[5] = 0;
    const after = before.map((b, i) => (i % 3 === 0 ? b ^ 0x5a : b));
    const gitForward = ["zcmV-C0K@-LFjXL*0J9D=0)3*L>=A5Rfd9(xPB~uLsLiMsJUfP~iuD?0WQp|C_(wu#", "S*0I*1AVn~bw1fU55^a)36&(Wr"];
    expect(decodeLiteral(gitForward)).toEqual(after);

    const patch = await renderUnifiedDiff([
      { path: "multi.bin", before: { bytes: before, mode: 0o644 }, after: { bytes: after, mode: 0o644 } },
    ]);
    const [forward, reverse, rest] = patch.split("\n\n");
    const forwardLines = forward!.split("\n");
    expect(forwardLines.slice(0, 4)).toEqual([
      "diff --git a/multi.bin b/multi.bin",
      "index ef86f7fd7cde3a002a0de679621bf25137a55518..5477a1f2d16970695835d9e5011147576638aa86 100644",
      "GIT binary patch",
      "literal 60",
    ]);
    // More than 52 deflated bytes: a full 'z' line (52 bytes, 65 characters) and a shorter one.
    expect(forwardLines.slice(4).map((line) => [line[0], line.length])).toEqual([
      ["z", 66],
      [expect.stringMatching(/^[A-Z]$/), expect.any(Number)],
    ]);
    expect(decodeLiteral(forwardLines.slice(4))).toEqual(after);
    const reverseLines = reverse!.split("\n");
    expect(reverseLines[0]).toBe("literal 60");
    expect(decodeLiteral(reverseLines.slice(1))).toEqual(before);
    expect(rest).toBe("");
  });

  it(`gives a file whose diff passes ${MAX_DIFF_EDIT_LINES} edited lines as one whole replacement, no-newline marks in place`, async () => {
    const before = Array.from({ length: 600 }, (_, i) => `a${i}`).join("\n");
    const after = `${Array.from({ length: 600 }, (_, i) => `b${i}`).join("\n")}\n`;
    const diff = await renderUnifiedDiff([{ path: "big.txt", before: v(before), after: v(after) }]);
    const removed = Array.from({ length: 600 }, (_, i) => `-a${i}`);
    const added = Array.from({ length: 600 }, (_, i) => `+b${i}`);
    expect(diff).toBe(
      [
        "diff --git a/big.txt b/big.txt",
        "--- a/big.txt",
        "+++ b/big.txt",
        "@@ -1,600 +1,600 @@",
        ...removed,
        "\\ No newline at end of file",
        ...added,
        "",
      ].join("\n"),
    );
    // Under the bound, the same file with one line changed is a normal 3-line-context hunk.
    const small = await renderUnifiedDiff([{ path: "big.txt", before: v(before), after: v(before.replace("a300", "x300")) }]);
    expect(small.split("\n").slice(3, 12)).toEqual([
      "@@ -298,7 +298,7 @@",
      " a297",
      " a298",
      " a299",
      "-a300",
      "+x300",
      " a301",
      " a302",
      " a303",
    ]);
  });

  it(`gives a created, deleted, emptied or filled file of more than ${MAX_DIFF_EDIT_LINES} lines the hunk header git writes`, async () => {
    const text = `${Array.from({ length: 1200 }, (_, i) => `line ${i}`).join("\n")}\n`;
    const lines = text.slice(0, -1).split("\n");
    const diff = await renderUnifiedDiff([
      { path: "created.txt", before: null, after: v(text) },
      { path: "deleted.txt", before: v(text), after: null },
      { path: "emptied.txt", before: v(text), after: v("") },
      { path: "filled.txt", before: v(""), after: v(text) },
    ]);
    expect(diff).toBe(
      [
        "diff --git a/created.txt b/created.txt",
        "new file mode 100644",
        "--- /dev/null",
        "+++ b/created.txt",
        "@@ -0,0 +1,1200 @@",
        ...lines.map((l) => `+${l}`),
        "diff --git a/deleted.txt b/deleted.txt",
        "deleted file mode 100644",
        "--- a/deleted.txt",
        "+++ /dev/null",
        "@@ -1,1200 +0,0 @@",
        ...lines.map((l) => `-${l}`),
        "diff --git a/emptied.txt b/emptied.txt",
        "--- a/emptied.txt",
        "+++ b/emptied.txt",
        "@@ -1,1200 +0,0 @@",
        ...lines.map((l) => `-${l}`),
        "diff --git a/filled.txt b/filled.txt",
        "--- a/filled.txt",
        "+++ b/filled.txt",
        "@@ -0,0 +1,1200 @@",
        ...lines.map((l) => `+${l}`),
        "",
      ].join("\n"),
    );
  });

  it("renders nothing for no changes", async () => {
    expect(await renderUnifiedDiff([])).toBe("");
  });
});

describe("renderChanges", () => {
  it("diffs a file changed while its snapshot side is read as it is afterwards, not half old, half new", async () => {
    await runInDurableObject(env.SESSIONS.getByName("changes-midway"), async (_i, state) => {
      const overlay = new SqliteOverlay(state.storage.sql);
      overlay.put("a.sh", text("new\n"), 0o644);
      // The snapshot's read of a.sh is where a run's write lands: it deletes the file meanwhile.
      const base = {
        stat: (path: string) => (path === "a.sh" ? { type: "file" as const, size: 4, mode: 0o644 } : null),
        readFile: async () => {
          await new Promise((r) => setTimeout(r, 5));
          overlay.whiteout("a.sh");
          return text("old\n");
        },
      };
      expect(await renderChanges(base, overlay)).toBe(
        ["diff --git a/a.sh b/a.sh", "deleted file mode 100644", "--- a/a.sh", "+++ /dev/null", "@@ -1,1 +0,0 @@", "-old", ""].join("\n"),
      );
    });
  });

  it("diffs the overlay against the snapshot, dropping no-op writes and deletions of files that never existed", async () => {
    await seedWorkspace("w_changes1", { "keep.txt": "same\n", "edit.txt": "one\ntwo\n", "gone.txt": "bye\n" });
    const diff = await runInDurableObject(env.SESSIONS.getByName("changes-1"), async (_i, state) => {
      const overlay = new SqliteOverlay(state.storage.sql);
      const fs = await openWorkspace(env.STORE, "w_changes1", overlay);
      await fs.writeFile("keep.txt", text("same\n"));
      await fs.writeFile("edit.txt", text("one\n2\n"));
      await fs.deleteFile("gone.txt");
      await fs.writeFile("tmp.txt", text("temp"));
      await fs.deleteFile("tmp.txt");
      await fs.writeFile("added.md", text("hi"));
      return renderChanges(fs.snapshot, overlay);
    });
    expect(diff).toBe(
      [
        "diff --git a/added.md b/added.md",
        "new file mode 100644",
        "--- /dev/null",
        "+++ b/added.md",
        "@@ -0,0 +1,1 @@",
        "+hi",
        "\\ No newline at end of file",
        "diff --git a/edit.txt b/edit.txt",
        "--- a/edit.txt",
        "+++ b/edit.txt",
        "@@ -1,2 +1,2 @@",
        " one",
        "-two",
        "+2",
        "diff --git a/gone.txt b/gone.txt",
        "deleted file mode 100644",
        "--- a/gone.txt",
        "+++ /dev/null",
        "@@ -1,1 +0,0 @@",
        "-bye",
        "",
      ].join("\n"),
    );
  });
});

describe("renderChanges and git modes", () => {
  it("drops a file re-created with the same bytes whose mode differs only in bits git does not record (0664 vs 0644)", async () => {
    await seedWorkspace("w_changes_mode", { "a.txt": "alpha\n", "b.txt": "beta\n" });
    const diff = await runInDurableObject(env.SESSIONS.getByName("changes-mode"), async (_i, state) => {
      const overlay = new SqliteOverlay(state.storage.sql);
      const fs = await openWorkspace(env.STORE, "w_changes_mode", overlay);
      overlay.put("a.txt", text("alpha\n"), 0o664);
      overlay.put("b.txt", text("beta\n"), 0o775);
      return renderChanges(fs.snapshot, overlay);
    });
    expect(diff).toBe(["diff --git a/b.txt b/b.txt", "old mode 100644", "new mode 100755", ""].join("\n"));
  });
});

/** Git's base85 literal lines back to bytes (a length char, then 5 chars per 4 bytes), inflated. */
function decodeLiteral(lines: string[]): Uint8Array {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
  const bytes: number[] = [];
  for (const line of lines) {
    const code = line.charCodeAt(0);
    const length = code <= 90 ? code - 64 : code - 96 + 26;
    const decoded: number[] = [];
    for (let at = 1; at < line.length; at += 5) {
      let group = 0;
      for (const char of line.slice(at, at + 5)) group = group * 85 + alphabet.indexOf(char);
      decoded.push(group >>> 24, (group >>> 16) & 255, (group >>> 8) & 255, group & 255);
    }
    bytes.push(...decoded.slice(0, length));
  }
  return unzlibSync(new Uint8Array(bytes));
}
