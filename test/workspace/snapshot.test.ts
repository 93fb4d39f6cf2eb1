import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_CONCURRENT_INGESTS } from "../../src/domain/limits";
import { WorkspaceError } from "../../src/workspace/errors";
import { ingestWorkspace } from "../../src/workspace/ingest";
import { containsText } from "../../src/workspace/search/query";
import { ingestsRunning } from "../../src/workspace/shared-caches";
import { CACHE_BYTES, coalesce, deleteWorkspace, loadWorkspace, openWorkspace, readWorkspaceMeta } from "../../src/workspace/snapshot";
import { decode, keysUnder, streamOf, tarOf } from "./archives";
import { recordingBucket, seedWorkspace } from "./helpers";

const FILE_BYTES = 40_000;
const MiB_ = 1024 * 1024;
const bigFiles = Object.fromEntries(
  Array.from({ length: 300 }, (_, i) => [`f/${String(i).padStart(3, "0")}.txt`, new Uint8Array(FILE_BYTES).fill(97 + (i % 26))]),
);

/**
 * The range reads of all of `bigFiles` together: 209 files of 40,000 bytes fit in the first 8 MiB
 * chunk; the 210th crosses into the second and is read alone (two range reads), the other 90 come
 * in one read of the second chunk.
 */
function bigFilesReads(workspaceId: string) {
  const CHUNK = 8 * 1024 * 1024;
  const pack = `workspaces/${workspaceId}/pack`;
  return [
    { key: `${pack}/00000`, range: { offset: 0, length: 209 * FILE_BYTES } },
    { key: `${pack}/00000`, range: { offset: 209 * FILE_BYTES, length: CHUNK - 209 * FILE_BYTES } },
    { key: `${pack}/00001`, range: { offset: 0, length: 210 * FILE_BYTES - CHUNK } },
    { key: `${pack}/00001`, range: { offset: 210 * FILE_BYTES - CHUNK, length: 90 * FILE_BYTES } },
  ];
}

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
    expect(gets).toEqual([{ key: "workspaces/w_snap1/pack/00000", range: { offset: 5, length: 6 } }]);
    expect(snapshot.stat("b")).toEqual({ type: "dir", size: 0, mode: 0o755 });
    expect(snapshot.stat("a.txt")).toEqual({ type: "file", size: 5, mode: 0o644 });
    expect(snapshot.stat("nope")).toBeNull();
    expect(await codeOf(snapshot.readFile("b"))).toBe("is_directory");
    expect(await codeOf(snapshot.readFile("nope"))).toBe("not_found");
  });

  it("keeps one read cache for the isolate, shared by every snapshot in it, of CACHE_BYTES", async () => {
    // Twelve files of 1 MiB, each read through its own snapshot (as twelve session objects would).
    const MiB = 1024 * 1024;
    const files = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`m/${String(i).padStart(2, "0")}.bin`, new Uint8Array(MiB).fill(i)]),
    );
    await seedWorkspace("w_snap_shared", files);
    const paths = Object.keys(files);
    for (const path of paths) await (await loadWorkspace(env.STORE, "w_snap_shared")).readFile(path);
    // A fresh snapshot (newest first) reads the four oldest again; the newest eight (8 MiB) are the isolate's.
    const { bucket, gets } = recordingBucket();
    const fresh = await loadWorkspace(bucket, "w_snap_shared");
    gets.length = 0;
    for (const path of [...paths].reverse()) expect((await fresh.readFile(path))[0]).toBe(Number(path.slice(2, 4)));
    expect(CACHE_BYTES).toBe(8 * MiB);
    expect(gets.map((g) => (g.range as { offset: number }).offset / MiB)).toEqual([3, 2, 1, 0]);
  });

  it("shares one parsed index, and the search index once one opened it, among the objects that open a snapshot", async () => {
    await seedWorkspace("w_snap_catalog", { "a.txt": "alpha needle\n", "b/c.txt": "gamma\n" });
    const first = await loadWorkspace(env.STORE, "w_snap_catalog");
    const { bucket, gets } = recordingBucket();
    const second = await loadWorkspace(bucket, "w_snap_catalog");
    expect([second.index === first.index, second.stat("b/c.txt")]).toEqual([true, { type: "file", size: 6, mode: 0o644 }]);
    const search = async (snapshot: typeof first) => {
      const found: string[] = [];
      for await (const { path } of snapshot.searchTexts(["a.txt", "b/c.txt"], containsText("needle"))) found.push(path);
      return found;
    };
    expect(await search(first)).toEqual(["a.txt"]);
    gets.length = 0;
    expect(await search(second)).toEqual(["a.txt"]);
    expect(gets.filter((g) => g.key.includes("/search/"))).toEqual([]); // its directory was not read again
    // Another upload is another snapshot, with an index of its own.
    await seedWorkspace("w_snap_catalog_2", { "a.txt": "alpha needle\n" });
    expect((await loadWorkspace(env.STORE, "w_snap_catalog_2")).index === first.index).toBe(false);
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
    expect(gets).toEqual(bigFilesReads("w_snap2"));
  });

  it("reads the files asked for in one turn of the event loop together, as readMany does, each a copy of its own bytes", async () => {
    await seedWorkspace("w_snap_together", bigFiles);
    const { bucket, gets } = recordingBucket();
    const snapshot = await loadWorkspace(bucket, "w_snap_together");
    gets.length = 0;
    // As a shell's grep -r asks: many at once, in any order.
    const paths = Object.keys(bigFiles).reverse();
    const files = await Promise.all(paths.map((path) => snapshot.readFile(path)));
    paths.forEach((path, i) => {
      const bytes = files[i]!;
      expect(bytes.byteLength).toBe(FILE_BYTES);
      // Its own buffer: the cache holds this file, not the range it came in.
      expect(bytes.buffer.byteLength).toBe(FILE_BYTES);
      expect(bytes.every((b) => b === 97 + (Number(path.slice(2, 5)) % 26))).toBe(true);
    });
    expect(gets).toEqual(bigFilesReads("w_snap_together"));
    // One after the other, each is its own read (the caches emptied first: an ingest at the maximum takes their budget).
    ingestsRunning(MAX_CONCURRENT_INGESTS);
    ingestsRunning(0);
    gets.length = 0;
    expect((await snapshot.readFile("f/001.txt"))[0]).toBe(98);
    expect((await snapshot.readFile("f/000.txt"))[0]).toBe(97);
    expect(gets).toEqual([
      { key: "workspaces/w_snap_together/pack/00000", range: { offset: FILE_BYTES, length: FILE_BYTES } },
      { key: "workspaces/w_snap_together/pack/00000", range: { offset: 0, length: FILE_BYTES } },
    ]);
  });

  it("lets a caller of a read together stop at its abort, and fails only the files of a range that could not be read", async () => {
    await seedWorkspace("w_snap_together_fail", bigFiles);
    const lost = new Proxy(env.STORE, {
      get(target, property) {
        if (property === "get")
          return (key: string, options?: R2GetOptions) =>
            key.endsWith("/pack/00001") ? Promise.reject(new Error("chunk 1 is lost")) : target.get(key, options);
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const snapshot = await loadWorkspace(lost, "w_snap_together_fail");
    const abort = new AbortController();
    const reads = ["f/000.txt", "f/100.txt", "f/250.txt", "f/001.txt"].map((path, i) =>
      snapshot.readFile(path, i === 3 ? abort.signal : undefined).then(
        (bytes) => `${path}: ${bytes.byteLength} bytes of ${String.fromCharCode(bytes[0]!)}`,
        (error: unknown) => `${path}: ${(error as Error).message}`,
      ),
    );
    abort.abort(new Error("the caller gave up"));
    expect(await Promise.all(reads)).toEqual([
      "f/000.txt: 40000 bytes of a",
      "f/100.txt: 40000 bytes of w",
      "f/250.txt: chunk 1 is lost",
      "f/001.txt: the caller gave up",
    ]);
  });

  it("keeps files read together within the isolate's window, and gives its share back when every caller has aborted", async () => {
    // 2 MiB files, four to a pack chunk: every read is one whole 8 MiB chunk.
    const files = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`t/${String(i).padStart(2, "0")}.bin`, new Uint8Array(2 * MiB_).fill(97 + i)]),
    );
    await seedWorkspace("w_snap_together_window", files);
    const packGets: string[] = [];
    const stuck = new Proxy(env.STORE, {
      get(target, property) {
        if (property === "get")
          return (key: string, options?: R2GetOptions) => {
            if (!key.includes("/pack/")) return target.get(key, options);
            packGets.push(key.slice(-5));
            return new Promise(() => {});
          };
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const snapshot = await loadWorkspace(stuck, "w_snap_together_window");
    const aborts = [new AbortController(), new AbortController()];
    const reads = Object.keys(files).map((path, i) => snapshot.readFile(path, aborts[i % 2]!.signal).catch((e: Error) => e.message));
    await new Promise((resolve) => setTimeout(resolve, 10));
    // One chunk read and one ahead fill the 16 MiB window; the other chunk waits.
    expect(packGets).toEqual(["00000", "00001"]);
    aborts[0]!.abort(new Error("first caller gone"));
    aborts[1]!.abort(new Error("second caller gone"));
    expect(await Promise.all(reads)).toEqual(Object.keys(files).map((_, i) => (i % 2 === 0 ? "first caller gone" : "second caller gone")));
    // The window is the isolate's again: a reader now gets one read and two ahead.
    const { bucket, gets } = recordingBucket();
    const fresh = (await loadWorkspace(bucket, "w_snap_together_window")).readMany(Object.keys(files));
    gets.length = 0;
    expect((await fresh.next()).value?.path).toBe("t/00.bin");
    expect(gets.map((get) => get.key.slice(-5))).toEqual(["00000", "00001", "00002"]);
    await fresh.return(undefined);
  });

  it("answers a caller that comes after every earlier caller of its turn has aborted (hunt 88)", async () => {
    await seedWorkspace("w_snap_together_late", { "a.txt": "aaa", "b.txt": "bbb" });
    const snapshot = await loadWorkspace(env.STORE, "w_snap_together_late");
    const run = new AbortController();
    const first = snapshot.readFile("a.txt", run.signal).then(decode, (e: Error) => e.message);
    run.abort(new Error("run aborted"));
    // Same turn, no signal: a file of `/changes`, read while the run's grep was stopped.
    const second = snapshot.readFile("b.txt").then(decode);
    const late = new Promise((resolve) => setTimeout(() => resolve("no answer after 2 s"), 2000));
    expect(await first).toBe("run aborted");
    expect(await Promise.race([second, late])).toBe("bbb");
  });

  it("splits reads at gaps larger than 1 MiB and reads smaller gaps through", () => {
    const at = (path: string, offset: number, size: number) => ({ path, offset, size, mode: 0o644 });
    const groups = coalesce([at("a", 0, 10), at("b", 1_048_586, 10), at("c", 2_097_173, 5), at("d", 2_097_178, 5)]);
    expect(groups).toEqual([
      { start: 0, end: 1_048_596, entries: [at("a", 0, 10), at("b", 1_048_586, 10)] },
      { start: 2_097_173, end: 2_097_183, entries: [at("c", 2_097_173, 5), at("d", 2_097_178, 5)] },
    ]);
  });

  it("starts the reads of many files ahead of the consumer, up to 16 MiB", async () => {
    await seedWorkspace("w_snap7", bigFiles);
    const { bucket, gets } = recordingBucket();
    const snapshot = await loadWorkspace(bucket, "w_snap7");
    gets.length = 0;
    const files = snapshot.readMany(Object.keys(bigFiles));
    expect((await files.next()).value?.path).toBe("f/000.txt");
    // 12 MB in three ranges (four reads: the file across the chunk boundary needs two): all in flight.
    expect(gets.length).toBe(4);
    await files.return(undefined);
  });

  it("keeps the isolate's reads ahead within 16 MiB together: a second reader at once gets one read ahead, and a reader that stops or is aborted (its reads stuck) gives its share back", async () => {
    // 2 MiB files, four to a pack chunk: every read is one whole 8 MiB chunk.
    const files = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [`g/${String(i).padStart(2, "0")}.bin`, new Uint8Array(2 * MiB_).fill(97 + i)]),
    );
    await seedWorkspace("w_snap_window", files);
    const { bucket, gets } = recordingBucket();
    const snapshot = await loadWorkspace(bucket, "w_snap_window");
    const chunkReads = () => gets.filter((get) => get.key.includes("/pack/")).map((get) => get.key.slice(-5));
    gets.length = 0;
    const first = snapshot.readMany(Object.keys(files));
    expect((await first.next()).value?.path).toBe("g/00.bin");
    // Chunk 0 taken, chunks 1 and 2 ahead: the window (16 MiB) is full.
    expect(chunkReads()).toEqual(["00000", "00001", "00002"]);
    const second = snapshot.readMany(Object.keys(files));
    expect((await second.next()).value?.path).toBe("g/00.bin");
    // Chunk 0 taken and one read ahead of its own, no more while the first reader holds the window
    // (alone, it would have had two ahead, as the first has).
    expect(chunkReads()).toEqual(["00000", "00001", "00002", "00000", "00001"]);
    await first.return(undefined);
    await second.return(undefined);
    gets.length = 0;
    const third = snapshot.readMany(Object.keys(files));
    expect((await third.next()).value?.path).toBe("g/00.bin");
    expect(chunkReads()).toEqual(["00000", "00001", "00002"]);
    await third.return(undefined);

    // A reader whose reads never answer, aborted: its window is given back at the abort.
    const stuck = new Proxy(env.STORE, {
      get(target, property) {
        if (property === "get") return (key: string) => (key.includes("/pack/") ? new Promise(() => {}) : target.get(key));
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const abort = new AbortController();
    void (await loadWorkspace(stuck, "w_snap_window")).readMany(Object.keys(files), abort.signal).next();
    await new Promise((resolve) => setTimeout(resolve, 10));
    abort.abort();
    gets.length = 0;
    const fourth = snapshot.readMany(Object.keys(files));
    expect((await fourth.next()).value?.path).toBe("g/00.bin");
    expect(chunkReads()).toEqual(["00000", "00001", "00002"]);
    await fourth.return(undefined);
  });

  it("streams a file across a chunk boundary byte for byte, and breaks the stream off when a later chunk is lost", async () => {
    await seedWorkspace("w_snap8", bigFiles);
    const { bucket, gets } = recordingBucket();
    const snapshot = await loadWorkspace(bucket, "w_snap8");
    const CHUNK = 8 * 1024 * 1024;
    const bodyOf = async (path: string) => new Uint8Array(await new Response((await snapshot.fileStream(path)).body).arrayBuffer());
    gets.length = 0;
    const crossing = await bodyOf("f/209.txt");
    expect(crossing).toEqual(bigFiles["f/209.txt"]);
    expect(gets).toEqual([
      { key: "workspaces/w_snap8/pack/00000", range: { offset: 209 * FILE_BYTES, length: CHUNK - 209 * FILE_BYTES } },
      { key: "workspaces/w_snap8/pack/00001", range: { offset: 0, length: 210 * FILE_BYTES - CHUNK } },
    ]);
    // Ten at once, all exact (each pumps its own ranges).
    const many = await Promise.all(Array.from({ length: 10 }, () => bodyOf("f/209.txt")));
    expect(many.every((bytes) => bytes.byteLength === FILE_BYTES && bytes.every((b) => b === 97 + (209 % 26)))).toBe(true);
    // A consumer that stops after the first read leaves nothing running that could fail later.
    const reader = (await snapshot.fileStream("f/209.txt")).body.getReader();
    expect(((await reader.read()).value?.byteLength ?? 0) > 0).toBe(true);
    await reader.cancel("client left");
    // The second chunk lost: the first range streams, then the stream errors instead of ending short.
    await env.STORE.delete("workspaces/w_snap8/pack/00001");
    const broken = await new Response((await snapshot.fileStream("f/209.txt")).body).arrayBuffer().then(
      () => "ended",
      (err: unknown) => String(err),
    );
    expect(broken).toContain("has lost part of its pack");
    // The first chunk lost: no stream at all, an error the route answers.
    await env.STORE.delete("workspaces/w_snap8/pack/00000");
    expect(await codeOf(snapshot.fileStream("f/209.txt"))).toBe("workspace_not_found");
  });

  it("keeps a range read within one pack chunk unless a single file crosses the boundary", () => {
    const at = (path: string, offset: number, size: number) => ({ path, offset, size, mode: 0o644 });
    const groups = coalesce([at("a", 0, 90), at("b", 90, 10), at("c", 100, 50), at("d", 150, 60), at("e", 210, 10)], 100);
    expect(groups).toEqual([
      { start: 0, end: 100, entries: [at("a", 0, 90), at("b", 90, 10)] },
      { start: 100, end: 150, entries: [at("c", 100, 50)] },
      { start: 150, end: 210, entries: [at("d", 150, 60)] },
      { start: 210, end: 220, entries: [at("e", 210, 10)] },
    ]);
  });

  it("reads, streams and deletes files of a pack stored in many chunks", async () => {
    const files = { "a.txt": "0123456789".repeat(3), "b.txt": "abcdefghij".repeat(5), "c.txt": "z" };
    await ingestWorkspace(env.STORE, streamOf(await tarOf(files)), { workspaceId: "w_snap5", owner: "alice", partBytes: 16 });
    const prefix = "workspaces/w_snap5/";
    // 81 bytes in chunks of 16.
    expect((await keysUnder(env.STORE, `${prefix}pack/`)).map((k) => k.slice(prefix.length))).toEqual(
      Array.from({ length: 6 }, (_, n) => `pack/0000${n}`),
    );
    const { bucket, gets } = recordingBucket();
    const snapshot = await loadWorkspace(bucket, "w_snap5");
    expect(snapshot.index.pack).toEqual({ chunkBytes: 16, chunks: 6 });
    gets.length = 0;
    expect(decode(await snapshot.readFile("b.txt"))).toBe(files["b.txt"]);
    // b.txt is bytes 30-79: the rest of chunk 1, chunks 2-3, most of chunk 4.
    expect(gets).toEqual([
      { key: `${prefix}pack/00001`, range: { offset: 14, length: 2 } },
      { key: `${prefix}pack/00002`, range: { offset: 0, length: 16 } },
      { key: `${prefix}pack/00003`, range: { offset: 0, length: 16 } },
      { key: `${prefix}pack/00004`, range: { offset: 0, length: 16 } },
    ]);
    const read: Record<string, string> = {};
    for await (const { path, bytes } of snapshot.readMany(Object.keys(files))) read[path] = decode(bytes);
    expect(read).toEqual(files);
    expect(await new Response((await snapshot.fileStream("a.txt")).body).text()).toBe(files["a.txt"]);
    expect(await new Response((await snapshot.fileStream("b.txt")).body).text()).toBe(files["b.txt"]);
    expect(await new Response((await snapshot.fileStream("c.txt")).body).text()).toBe("z");
    await deleteWorkspace(env.STORE, "w_snap5");
    expect(await keysUnder(env.STORE, prefix)).toEqual([]);
  });

  it("reads a snapshot stored before chunks: one pack object, no pack layout in its index", async () => {
    await seedWorkspace("w_snap6", { "a.txt": "first", "b.txt": "second" });
    const prefix = "workspaces/w_snap6/";
    const index = (await (await env.STORE.get(`${prefix}index.json`))!.json()) as Record<string, unknown>;
    delete index.pack;
    await env.STORE.put(`${prefix}index.json`, JSON.stringify(index));
    await env.STORE.put(`${prefix}pack`, await (await env.STORE.get(`${prefix}pack/00000`))!.arrayBuffer());
    await env.STORE.delete(`${prefix}pack/00000`);
    const { bucket, gets } = recordingBucket();
    const snapshot = await loadWorkspace(bucket, "w_snap6");
    gets.length = 0;
    expect(decode(await snapshot.readFile("b.txt"))).toBe("second");
    expect(gets).toEqual([{ key: `${prefix}pack`, range: { offset: 5, length: 6 } }]);
    expect(await new Response((await snapshot.fileStream("a.txt")).body).text()).toBe("first");
    await deleteWorkspace(env.STORE, "w_snap6");
    expect(await keysUnder(env.STORE, prefix)).toEqual([]);
  });

  it("hides a workspace from other tenants and reports missing ones as workspace_not_found", async () => {
    await seedWorkspace("w_snap3", { "a.txt": "x" }, "alice");
    expect((await readWorkspaceMeta(env.STORE, "w_snap3", "alice")).files).toBe(1);
    expect((await loadWorkspace(env.STORE, "w_snap3")).stat("a.txt")).toEqual({ type: "file", size: 1, mode: 0o644 });
    expect(await codeOf(loadWorkspace(env.STORE, "w_snap3", "mallory"))).toBe("workspace_not_found");
    expect(await codeOf(loadWorkspace(env.STORE, "w_snap3", null))).toBe("workspace_not_found");
    expect(await codeOf(loadWorkspace(env.STORE, "w_nothing"))).toBe("workspace_not_found");
  });

  it("opens a snapshot for the file route once per isolate: later opens read only its meta (owner, existence)", async () => {
    await seedWorkspace("w_snap_open", { "a.txt": "alpha", "b.txt": "beta" }, "alice");
    const { bucket, gets } = recordingBucket();
    const first = await openWorkspace(bucket, "w_snap_open", "alice");
    expect(gets.map((g) => g.key).sort()).toEqual(["workspaces/w_snap_open/index.json", "workspaces/w_snap_open/meta.json"]);
    gets.length = 0;
    const again = await openWorkspace(bucket, "w_snap_open", "alice");
    expect(again).toBe(first);
    expect(gets).toEqual([{ key: "workspaces/w_snap_open/meta.json" }]);
    expect(again.stat("b.txt")).toEqual({ type: "file", size: 4, mode: 0o644 });
    // Another tenant is refused even though the snapshot is cached; a deleted workspace is gone at once.
    expect(await codeOf(openWorkspace(bucket, "w_snap_open", "mallory"))).toBe("workspace_not_found");
    await deleteWorkspace(env.STORE, "w_snap_open");
    expect(await codeOf(openWorkspace(bucket, "w_snap_open", "alice"))).toBe("workspace_not_found");
  });

  it("gives the snapshot cache back to ingests while they run", async () => {
    await seedWorkspace("w_snap_lend", { "a.txt": "alpha" }, "alice");
    const { bucket, gets } = recordingBucket();
    await openWorkspace(bucket, "w_snap_lend", "alice");
    ingestsRunning(2);
    gets.length = 0;
    try {
      await openWorkspace(bucket, "w_snap_lend", "alice");
      expect(gets.map((g) => g.key).sort()).toEqual(["workspaces/w_snap_lend/index.json", "workspaces/w_snap_lend/meta.json"]);
    } finally {
      ingestsRunning(0);
    }
    await openWorkspace(bucket, "w_snap_lend", "alice");
    gets.length = 0;
    await openWorkspace(bucket, "w_snap_lend", "alice");
    expect(gets).toEqual([{ key: "workspaces/w_snap_lend/meta.json" }]);
  });

  it("streams one file for downloads", async () => {
    await seedWorkspace("w_snap4", { "a.txt": "first", "b.txt": "second" });
    const snapshot = await loadWorkspace(env.STORE, "w_snap4");
    const { entry, body } = await snapshot.fileStream("b.txt");
    expect(entry).toEqual({ path: "b.txt", offset: 5, size: 6, mode: 0o644 });
    expect(await new Response(body).text()).toBe("second");
  });
});
