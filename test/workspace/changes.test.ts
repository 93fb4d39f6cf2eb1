import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type FileChange, renderChanges, renderUnifiedDiff } from "../../src/workspace/changes";
import { SqliteOverlay } from "../../src/workspace/overlay";
import { openWorkspace } from "../../src/workspace/workspace-fs";
import { text } from "./archives";
import { seedWorkspace } from "./helpers";

const v = (s: string, mode = 0o644) => ({ bytes: text(s), mode });

describe("renderUnifiedDiff", () => {
  it("renders modified, added, deleted, no-newline, empty, CRLF, mode and binary changes git-style, sorted by path", () => {
    // This fixture, minus the binary entries (git cannot apply those without --binary data), was
    // written out with the original tree and checked with `git apply --check -v` and `git apply`.
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
    expect(renderUnifiedDiff(changes)).toBe(
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
        "Binary files a/img.bin and b/img.bin differ",
        "diff --git a/new.bin b/new.bin",
        "new file mode 100644",
        "Binary files /dev/null and b/new.bin differ",
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

  it("renders nothing for no changes", () => {
    expect(renderUnifiedDiff([])).toBe("");
  });
});

describe("renderChanges", () => {
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
