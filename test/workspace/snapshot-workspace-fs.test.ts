import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bashTool } from "../../src/tools/bash";
import { WorkspaceError } from "../../src/workspace/errors";
import { ingestWorkspace } from "../../src/workspace/ingest";
import { SqliteOverlay } from "../../src/workspace/overlay";
import { ALL } from "../../src/workspace/search/query";
import { searchTextCache } from "../../src/workspace/search/text-cache";
import { loadWorkspace } from "../../src/workspace/snapshot";
import { openWorkspace, type SnapshotWorkspaceFs } from "../../src/workspace/snapshot-workspace-fs";
import { decodeText } from "../../src/workspace/text";
import { toolContext } from "../helpers/memory-fs";
import { decode, entry, fileEntry, streamOf, tarOf, text } from "./archives";
import { recordingBucket, seedWorkspace } from "./helpers";

const FILES = { "README.md": "# readme\n", "src/a.ts": "a\n", "src/b.ts": "b\n", "src/deep/c.ts": "c\n", "bin/run.sh": "run\n" };

/** Opens the workspace over a real SqliteOverlay inside a Durable Object. */
async function withFs<T>(
  name: string,
  wid: string,
  fn: (fs: SnapshotWorkspaceFs, overlay: SqliteOverlay) => Promise<T>,
  bucket = env.STORE,
) {
  return runInDurableObject(env.SESSIONS.getByName(name), async (_i, state) => {
    const overlay = new SqliteOverlay(state.storage.sql);
    return fn(await openWorkspace(bucket, wid, overlay), overlay);
  });
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(WorkspaceError);
    return (e as WorkspaceError).code;
  }
  throw new Error("expected a WorkspaceError");
}

async function asyncCodeOf(promise: Promise<unknown>): Promise<string> {
  const e = await promise.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(WorkspaceError);
  return (e as WorkspaceError).code;
}

describe("SnapshotWorkspaceFs", () => {
  it("lists the snapshot: files, dirs, stat, readdir", async () => {
    await seedWorkspace("w_fs1", FILES);
    await withFs("fs-1", "w_fs1", async (fs) => {
      expect(fs.files()).toEqual(["README.md", "bin/run.sh", "src/a.ts", "src/b.ts", "src/deep/c.ts"]);
      expect(fs.dirs()).toEqual(["bin", "src", "src/deep"]);
      expect(fs.readdir("")).toEqual([
        { name: "README.md", type: "file" },
        { name: "bin", type: "dir" },
        { name: "src", type: "dir" },
      ]);
      expect(fs.readdir("./src/")).toEqual([
        { name: "a.ts", type: "file" },
        { name: "b.ts", type: "file" },
        { name: "deep", type: "dir" },
      ]);
      expect(fs.stat("")).toEqual({ type: "dir", size: 0, mode: 0o755 });
      expect(fs.stat("src/a.ts")).toEqual({ type: "file", size: 2, mode: 0o644 });
      expect(fs.stat("nope")).toBeNull();
      expect(codeOf(() => fs.readdir("src/a.ts"))).toBe("not_a_directory");
      expect(codeOf(() => fs.readdir("nope"))).toBe("not_found");
      expect(codeOf(() => fs.stat("../x"))).toBe("path_escape");
      expect(codeOf(() => fs.stat("x".repeat(5000)))).toBe("path_too_long");
      expect(decode(await fs.readFile("src/deep/c.ts"))).toBe("c\n");
      expect(await asyncCodeOf(fs.readFile("src"))).toBe("is_directory");
      expect(await asyncCodeOf(fs.readFile("/etc/passwd"))).toBe("path_escape");
    });
  });

  it("reads text as decodeText does: from grep's text cache when it holds the whole file (no R2 read), else read, decoded and cached; the overlay first", async () => {
    const lines = Array.from({ length: 2_000 }, (_, i) => `line ${i} of a file cut into pieces\n`).join("");
    const files: Record<string, string | Uint8Array> = {
      "bom.txt": "\uFEFFafter a BOM\n",
      "bad.txt": new Uint8Array([0x61, 0xff, 0x0a, 0xe2, 0x82, 0x0a, 0x62]),
      "big.txt": lines,
      "bin.dat": new Uint8Array([0x00, 0x61, 0xc3, 0xa9]),
      "plain.txt": "plain\n",
    };
    await seedWorkspace("w_fs_text", files);
    await seedWorkspace("w_fs_text2", files);
    const bytes = (path: string) =>
      typeof files[path] === "string" ? new TextEncoder().encode(files[path] as string) : (files[path] as Uint8Array);
    const paths = Object.keys(files);
    const { bucket, gets } = recordingBucket();
    await withFs(
      "fs-text",
      "w_fs_text",
      async (fs, overlay) => {
        // Not cached: read (one range read per file) and decoded; the text files cached for grep.
        searchTextCache.clear();
        gets.length = 0;
        for (const path of paths) expect([path, await fs.readText(path)]).toEqual([path, decodeText(bytes(path))]);
        expect(gets.filter((g) => g.key.includes("/pack/")).length).toBe(paths.length);
        // One byte a character, two for bad.txt's U+FFFD (V8's two-byte strings); bin.dat left out.
        expect(searchTextCache.bytes).toBe(
          ["bom.txt", "big.txt", "plain.txt"].reduce((n, p) => n + decodeText(bytes(p)).length, 0) + 2 * 6,
        );
        // Cached whole by grep (which reads by range, not through the file cache: another snapshot
        // of the same files, none of them in the file cache): served with no read.
        const other = await openWorkspace(bucket, "w_fs_text2", overlay);
        const grepped: string[] = [];
        for await (const { path } of other.searchTexts(paths, ALL)) grepped.push(path);
        expect(grepped.sort()).toEqual(["bad.txt", "big.txt", "bom.txt", "plain.txt"]);
        gets.length = 0;
        for (const path of ["bad.txt", "big.txt", "bom.txt", "plain.txt"])
          expect([path, await other.readText(path)]).toEqual([path, decodeText(bytes(path))]);
        expect(gets).toEqual([]);
        expect(await other.readText("bin.dat")).toBe(decodeText(bytes("bin.dat")));
        expect(gets.length).toBe(1);
        // A file the session changed is read from the overlay, whatever the cache holds.
        await fs.writeFile("big.txt", new TextEncoder().encode("changed\n"));
        expect(await fs.readText("big.txt")).toBe("changed\n");
        expect(await asyncCodeOf(fs.readText("nope"))).toBe("not_found");
      },
      bucket,
    );
  });

  it("decodes a file the text cache cannot keep at once, not in grep's pieces (hunt 92)", async () => {
    const line = "some text of a line in a big file, for the shell to read\n";
    const big = new TextEncoder().encode(line.repeat(Math.ceil((10 * 1024 * 1024) / line.length)));
    await seedWorkspace("w_fs_text_big", { "big.txt": big });
    await withFs("fs-text-big", "w_fs_text_big", async (fs) => {
      searchTextCache.clear();
      const original = TextDecoder.prototype.decode;
      let calls = 0;
      TextDecoder.prototype.decode = function (this: TextDecoder, ...args: Parameters<TextDecoder["decode"]>) {
        calls++;
        return original.apply(this, args);
      };
      let text: string;
      try {
        text = await fs.readText("big.txt");
      } finally {
        TextDecoder.prototype.decode = original;
      }
      expect([text === decodeText(big), searchTextCache.bytes, calls]).toEqual([true, 0, 1]);
    });
  });

  it("sends writes and deletions to the overlay and reads them first; the snapshot never changes", async () => {
    await seedWorkspace("w_fs2", FILES);
    await withFs("fs-2", "w_fs2", async (fs, overlay) => {
      await fs.writeFile("src/a.ts", text("A!\n"));
      await fs.writeFile("new/dir/n.ts", text("n\n"));
      await fs.deleteFile("README.md");
      expect(fs.files()).toEqual(["bin/run.sh", "new/dir/n.ts", "src/a.ts", "src/b.ts", "src/deep/c.ts"]);
      expect(fs.dirs()).toEqual(["bin", "new", "new/dir", "src", "src/deep"]);
      expect(decode(await fs.readFile("src/a.ts"))).toBe("A!\n");
      expect(fs.stat("src/a.ts")).toEqual({ type: "file", size: 3, mode: 0o644 });
      expect(fs.stat("README.md")).toBeNull();
      expect(await asyncCodeOf(fs.readFile("README.md"))).toBe("not_found");
      expect(await asyncCodeOf(fs.deleteFile("README.md"))).toBe("not_found");
      expect(overlay.list()).toEqual([
        { path: "README.md", deleted: true, size: 0, mode: 0 },
        { path: "new/dir/n.ts", deleted: false, size: 2, mode: 0o644 },
        { path: "src/a.ts", deleted: false, size: 3, mode: 0o644 },
      ]);
      expect(decode(await fs.snapshot.readFile("src/a.ts"))).toBe("a\n");
      expect(decode(await fs.snapshot.readFile("README.md"))).toBe("# readme\n");
      // A deleted file can come back, and its path can become a directory.
      await fs.writeFile("README.md/inside.txt", text("i"));
      expect(fs.stat("README.md")).toEqual({ type: "dir", size: 0, mode: 0o755 });
    });
    // A later fs over the same overlay (e.g. the next run) sees the same view.
    await withFs("fs-2", "w_fs2", async (fs) => {
      expect(fs.files()).toEqual(["README.md/inside.txt", "bin/run.sh", "new/dir/n.ts", "src/a.ts", "src/b.ts", "src/deep/c.ts"]);
    });
  });

  it("a directory whose files were all deleted is gone, with what is under it; an uploaded empty one stays", async () => {
    const tar = await tarOf({ "old/a": "a", "old/sub/b": "b", "keep/x": "x" }, [
      entry("old/empty", "directory"),
      entry("vacant", "directory"),
    ]);
    await ingestWorkspace(env.STORE, streamOf(tar), { workspaceId: "w_fs_rm", owner: "alice" });
    await withFs("fs-rm", "w_fs_rm", async (fs) => {
      expect(fs.dirs()).toEqual(["keep", "old", "old/empty", "old/sub", "vacant"]);
      await fs.deleteFile("old/sub/b");
      expect(fs.dirs()).toEqual(["keep", "old", "old/empty", "vacant"]);
      await fs.deleteFile("old/a");
      expect(fs.dirs()).toEqual(["keep", "vacant"]);
      expect([fs.stat("old"), fs.readdir("").map((d) => d.name)]).toEqual([null, ["keep", "vacant"]]);
      // So `cp x old` makes a file, as after `rm -r old` in a shell.
      await fs.writeFile("old", text("now a file"));
      expect(fs.stat("old")).toEqual({ type: "file", size: 10, mode: 0o644 });
    });
  });

  it("removes a directory that came empty in the upload, with empty ones under it; a file written there brings it back", async () => {
    const tar = await tarOf({ "keep/x": "x" }, [
      entry("empty", "directory"),
      entry("empty/inner", "directory"),
      entry("other", "directory"),
    ]);
    await ingestWorkspace(env.STORE, streamOf(tar), { workspaceId: "w_fs_rmdir", owner: "alice" });
    await withFs("fs-rmdir", "w_fs_rmdir", async (fs, overlay) => {
      expect(fs.dirs()).toEqual(["empty", "empty/inner", "keep", "other"]);
      expect(await asyncCodeOf(fs.removeDir("keep/x"))).toBe("not_a_directory");
      await fs.removeDir("empty");
      expect([fs.dirs(), fs.stat("empty"), fs.stat("empty/inner")]).toEqual([["keep", "other"], null, null]);
      await fs.removeDir("empty"); // gone already: nothing
      await fs.writeFile("empty/inner/new.txt", text("back"));
      expect(fs.dirs()).toEqual(["empty", "empty/inner", "keep", "other"]);
      // git keeps no directory: nothing of it in the overlay's diff but the file.
      expect(overlay.list().map((e) => [e.path, e.deleted])).toEqual([
        ["empty", true],
        ["empty/inner/new.txt", false],
      ]);
    });
  });

  it("refuses writes onto directories, under files and outside the root", async () => {
    await seedWorkspace("w_fs3", FILES);
    await withFs("fs-3", "w_fs3", async (fs) => {
      expect(await asyncCodeOf(fs.writeFile("src", text("x")))).toBe("is_directory");
      expect(await asyncCodeOf(fs.writeFile("src/a.ts/x", text("x")))).toBe("not_a_directory");
      expect(await asyncCodeOf(fs.writeFile("../x", text("x")))).toBe("path_escape");
      expect(await asyncCodeOf(fs.deleteFile("src"))).toBe("is_directory");
      expect(fs.files()).toHaveLength(5);
    });
  });

  it("keeps a file's mode when it is rewritten", async () => {
    await ingestWorkspace(env.STORE, streamOf(await tarOf({}, [fileEntry("run.sh", "echo\n", 0o755)])), {
      workspaceId: "w_fs4",
      owner: null,
    });
    await withFs("fs-4", "w_fs4", async (fs) => {
      await fs.writeFile("run.sh", text("echo hi\n"));
      expect(fs.stat("run.sh")).toEqual({ type: "file", size: 8, mode: 0o755 });
    });
  });

  it("sessions without changes share the snapshot's tree; the first change gives a session its own", async () => {
    await seedWorkspace("w_fs_shared_tree", FILES);
    // Held to the end, so the shared catalog cannot be collected between the objects' turns.
    const held = await loadWorkspace(env.STORE, "w_fs_shared_tree");
    const unchanged = ["README.md", "bin/run.sh", "src/a.ts", "src/b.ts", "src/deep/c.ts"];
    const a = await withFs("fs-shared-tree-a", "w_fs_shared_tree", async (fs) => fs.files());
    const b = await withFs("fs-shared-tree-b", "w_fs_shared_tree", async (fs) => fs.files());
    expect([a, b === a]).toEqual([unchanged, true]); // one tree, not two copies
    await withFs("fs-shared-tree-a", "w_fs_shared_tree", async (fs) => {
      await fs.writeFile("src/new.ts", text("new\n"));
      await fs.deleteFile("src/a.ts");
      expect(fs.files()).toEqual(["README.md", "bin/run.sh", "src/b.ts", "src/deep/c.ts", "src/new.ts"]);
      expect(fs.readdir("src").map((d) => d.name)).toEqual(["b.ts", "deep", "new.ts"]);
    });
    // The other session still sees the snapshot as it is, and shares it.
    await withFs("fs-shared-tree-b", "w_fs_shared_tree", async (fs) => {
      expect(fs.files()).toBe(a);
      expect(fs.readdir("src").map((d) => d.name)).toEqual(["a.ts", "b.ts", "deep"]);
      await fs.deleteFile("src/b.ts");
      expect([fs.stat("src/b.ts"), fs.stat("src/a.ts")?.type]).toEqual([null, "file"]);
    });
    expect(await withFs("fs-shared-tree-c", "w_fs_shared_tree", async (fs) => fs.files())).toBe(a);
    expect(a).toEqual(unchanged);
    // Opened again, a session with changes makes its tree from them.
    expect(await withFs("fs-shared-tree-a", "w_fs_shared_tree", async (fs) => fs.files())).toEqual([
      "README.md",
      "bin/run.sh",
      "src/b.ts",
      "src/deep/c.ts",
      "src/new.ts",
    ]);
    expect(held.unchangedTree().files()).toBe(a);
  });

  it("a shell command's redirects store one version of each file they write, however often it opens them", async () => {
    await seedWorkspace("w_fs_versions", FILES);
    await runInDurableObject(env.SESSIONS.getByName("fs-versions"), async (_i, state) => {
      let seq = 4;
      const overlay = new SqliteOverlay(state.storage.sql, { stamp: () => seq });
      const fs = await openWorkspace(env.STORE, "w_fs_versions", overlay);
      const run = (command: string) => bashTool.execute({ command }, toolContext(fs, { allowWrite: true }));
      // `>` opens a file empty and then writes it; `>>` opens it (rewriting it whole here) and then appends.
      expect(await run("echo hi > new.txt; for i in 1 2 3; do echo $i >> log.txt; done; echo more >> README.md")).toMatchObject({
        exitCode: 0,
      });
      expect([overlay.storedVersions(), decode(await fs.readFile("log.txt")), decode(await fs.readFile("README.md"))]).toEqual([
        3,
        "1\n2\n3\n",
        "# readme\nmore\n",
      ]);
      seq = 6; // a later step keeps what the earlier one wrote, for a fork at the message between them
      expect(await run("echo again > new.txt")).toMatchObject({ exitCode: 0 });
      expect(overlay.versionRefsUpTo(6).map((v) => [v.path, v.stamp, v.size])).toEqual([
        ["new.txt", 4, 3],
        ["README.md", 4, 14],
        ["log.txt", 4, 6],
        ["new.txt", 6, 6],
      ]);
    });
  });

  it("the shell's git compares the session's overlay with the snapshot, and restore puts a file back", async () => {
    await seedWorkspace("w_fs_git", FILES);
    await withFs("fs-git", "w_fs_git", async (fs, overlay) => {
      const run = async (command: string) => (await bashTool.execute({ command }, toolContext(fs, { allowWrite: true }))).text;
      await run("echo A >> src/a.ts; rm src/b.ts; echo n > src/deep/n.ts; echo same > t; cp t README.md; cp /dev/null t; rm t");
      expect(await run("git status -s; git diff --stat")).toBe(
        " M README.md\n M src/a.ts\n D src/b.ts\n?? src/deep/n.ts\n" +
          " README.md | 2 +-\n src/a.ts  | 1 +\n src/b.ts  | 1 -\n 3 files changed, 2 insertions(+), 2 deletions(-)",
      );
      expect(await run("git restore README.md src/b.ts && git status --porcelain && git show HEAD:src/a.ts")).toBe(
        " M src/a.ts\n?? src/deep/n.ts\na",
      );
      // The restored files are the snapshot's again: /changes leaves them out too.
      expect(overlay.list().map((e) => e.path)).toEqual(["README.md", "src/a.ts", "src/b.ts", "src/deep/n.ts", "t"]);
      expect(await run("git diff")).toBe(
        "diff --git a/src/a.ts b/src/a.ts\nindex 7898192..aa00f2f 100644\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1,2 @@\n a\n+A",
      );
    });
  });

  it("readFiles yields overlay files, then snapshot files in pack order, skipping missing and deleted", async () => {
    await seedWorkspace("w_fs5", FILES);
    const { bucket, gets } = recordingBucket();
    await withFs(
      "fs-5",
      "w_fs5",
      async (fs) => {
        await fs.writeFile("src/b.ts", text("B\n"));
        await fs.deleteFile("src/a.ts");
        gets.length = 0;
        const out: [string, string][] = [];
        for await (const { path, bytes } of fs.readFiles([
          "src/deep/c.ts",
          "README.md",
          "src/a.ts",
          "src/b.ts",
          "missing",
          "bin/run.sh",
          "src",
        ])) {
          out.push([path, decode(bytes)]);
        }
        expect(out).toEqual([
          ["src/b.ts", "B\n"],
          ["README.md", "# readme\n"],
          ["src/deep/c.ts", "c\n"],
          ["bin/run.sh", "run\n"],
        ]);
        expect(gets).toHaveLength(1);
      },
      bucket,
    );
  });
});
