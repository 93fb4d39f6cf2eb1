import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { WorkspaceError } from "../../src/workspace/errors";
import { coalesce, loadWorkspace, readWorkspaceMeta } from "../../src/workspace/snapshot";
import { decode } from "./archives";
import { recordingBucket, seedWorkspace } from "./helpers";

const FILE_BYTES = 40_000;
const bigFiles = Object.fromEntries(
  Array.from({ length: 300 }, (_, i) => [`f/${String(i).padStart(3, "0")}.txt`, new Uint8Array(FILE_BYTES).fill(97 + (i % 26))]),
);

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkspaceError);
  return (error as WorkspaceError).code;
}

describe("Snapshot", () => {
  it("reads one file with exactly one range read, then from the cache", async () => {
    await seedWorkspace("w_snap1", { "a.txt": "alpha", "b/c.txt": "gamma!" });
    const { bucket, gets } = recordingBucket();
    const snapshot = await loadWorkspace(bucket, "w_snap1");
    gets.length = 0;
    expect(decode(await snapshot.readFile("b/c.txt"))).toBe("gamma!");
    expect(decode(await snapshot.readFile("b/c.txt"))).toBe("gamma!");
    expect(gets).toEqual([{ key: "workspaces/w_snap1/pack", range: { offset: 5, length: 6 } }]);
    expect(snapshot.stat("b")).toEqual({ type: "dir", size: 0, mode: 0o755 });
    expect(snapshot.stat("a.txt")).toEqual({ type: "file", size: 5, mode: 0o644 });
    expect(snapshot.stat("nope")).toBeNull();
    expect(await codeOf(snapshot.readFile("b"))).toBe("is_directory");
    expect(await codeOf(snapshot.readFile("nope"))).toBe("not_found");
  });

  it("reads many files in pack order with a few coalesced range reads", async () => {
    await seedWorkspace("w_snap2", bigFiles);
    const { bucket, gets } = recordingBucket();
    const snapshot = await loadWorkspace(bucket, "w_snap2");
    gets.length = 0;
    const seen: string[] = [];
    const wanted = Object.keys(bigFiles).reverse();
    for await (const { path, bytes } of snapshot.readMany([...wanted, "missing.txt"])) {
      seen.push(path);
      const index = Number(path.slice(2, 5));
      expect(bytes.byteLength).toBe(FILE_BYTES);
      expect(bytes[0]).toBe(97 + (index % 26));
      expect(bytes[FILE_BYTES - 1]).toBe(97 + (index % 26));
    }
    expect(seen).toEqual(Object.keys(bigFiles));
    // 209 files of 40,000 bytes fit in 8 MiB; the other 91 come in a second read.
    expect(gets).toEqual([
      { key: "workspaces/w_snap2/pack", range: { offset: 0, length: 209 * FILE_BYTES } },
      { key: "workspaces/w_snap2/pack", range: { offset: 209 * FILE_BYTES, length: 91 * FILE_BYTES } },
    ]);
  });

  it("splits reads at gaps larger than 64 KiB and reads small gaps through", () => {
    const at = (path: string, offset: number, size: number) => ({ path, offset, size, mode: 0o644 });
    const groups = coalesce([at("a", 0, 10), at("b", 10_000, 10), at("c", 200_000, 5), at("d", 200_005, 5)]);
    expect(groups).toEqual([
      { start: 0, end: 10_010, entries: [at("a", 0, 10), at("b", 10_000, 10)] },
      { start: 200_000, end: 200_010, entries: [at("c", 200_000, 5), at("d", 200_005, 5)] },
    ]);
  });

  it("hides a workspace from other tenants and reports missing ones as workspace_not_found", async () => {
    await seedWorkspace("w_snap3", { "a.txt": "x" }, "alice");
    expect((await readWorkspaceMeta(env.STORE, "w_snap3", "alice")).files).toBe(1);
    expect((await loadWorkspace(env.STORE, "w_snap3")).stat("a.txt")).toEqual({ type: "file", size: 1, mode: 0o644 });
    expect(await codeOf(loadWorkspace(env.STORE, "w_snap3", "mallory"))).toBe("workspace_not_found");
    expect(await codeOf(loadWorkspace(env.STORE, "w_snap3", null))).toBe("workspace_not_found");
    expect(await codeOf(loadWorkspace(env.STORE, "w_nothing"))).toBe("workspace_not_found");
  });

  it("streams one file for downloads", async () => {
    await seedWorkspace("w_snap4", { "a.txt": "first", "b.txt": "second" });
    const snapshot = await loadWorkspace(env.STORE, "w_snap4");
    const { entry, body } = await snapshot.fileStream("b.txt");
    expect(entry).toEqual({ path: "b.txt", offset: 5, size: 6, mode: 0o644 });
    expect(await new Response(body).text()).toBe("second");
  });
});
