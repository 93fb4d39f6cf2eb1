import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SEARCH_MAX_FILE_BYTES } from "../../../src/domain/limits";
import { AgentRunOptions } from "../../../src/domain/run";
import { ToolExecutionService } from "../../../src/tools/execution-service";
import { grepTool, warmGrep } from "../../../src/tools/grep";
import { BUILTIN_TOOLS } from "../../../src/tools/registry";
import { ArchiveError } from "../../../src/workspace/archive-errors";
import { ingestWorkspace } from "../../../src/workspace/ingest";
import { type OverlayStore, SqliteOverlay } from "../../../src/workspace/overlay";
import {
  decodeDirectory,
  decodePostings,
  encodeDirectory,
  type SearchIndexInfo,
  type ShardDirectory,
  searchKeys,
} from "../../../src/workspace/search/index-layout";
import { ALL, containsText, type SearchQuery } from "../../../src/workspace/search/query";
import { regexQuery } from "../../../src/workspace/search/regex-query";
import { clearWholeShards, SearchIndex } from "../../../src/workspace/search/search-index";
import { type PieceSet, SearchText, searchTextOf } from "../../../src/workspace/search/search-text";
import { SEARCH_TEXT_CACHE_BYTES, searchTextCache } from "../../../src/workspace/search/text-cache";
import { deleteWorkspace, loadWorkspace } from "../../../src/workspace/snapshot";
import { type WorkspaceIndex, workspaceKeys } from "../../../src/workspace/snapshot-layout";
import { openWorkspace } from "../../../src/workspace/snapshot-workspace-fs";
import { MemoryWorkspaceFs, toolContext } from "../../helpers/memory-fs";
import { keysUnder, streamOf, tarOf } from "../archives";
import { recordingBucket } from "../helpers";

const FILES: Record<string, string | Uint8Array> = {
  "src/alpha.ts": "export const alpha = 'needle in alpha';\n",
  "src/beta.ts": "export const beta = 2;\n",
  "src/gamma.ts": "// Needle, capitalised\n",
  "docs/unicode.md": "Grüße aus Köln — naïve café\n",
  "docs/empty.txt": "",
  "assets/blob.bin": new Uint8Array([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00, 0x01]), // "needle" then NUL
};

async function ingest(
  workspaceId: string,
  files = FILES,
  options: { searchIndex?: boolean; searchShardPostings?: number; searchDirectoryBytes?: number } = {},
) {
  return ingestWorkspace(env.STORE, streamOf(await tarOf(files)), { workspaceId, owner: null, ...options });
}

/** Paths `searchTexts` yields for `query`, sorted. */
async function searched(workspaceId: string, query: SearchQuery, bucket = env.STORE): Promise<string[]> {
  const snapshot = await loadWorkspace(bucket, workspaceId);
  const out: string[] = [];
  for await (const { path } of snapshot.searchTexts(
    snapshot.index.files.map((f) => f.path),
    query,
  ))
    out.push(path);
  return out.sort();
}

beforeEach(() => {
  searchTextCache.clear();
  clearWholeShards();
});
afterEach(() => vi.restoreAllMocks());

/** 40 small files; "marker" is in every seventh (`MARKED`). */
const MARKER_FILES = Object.fromEntries(
  Array.from({ length: 40 }, (_, i) => [`f${String(i).padStart(2, "0")}.txt`, `file ${i} ${i % 7 === 0 ? "marker" : "plain"}\n`]),
);
const MARKED = ["f00.txt", "f07.txt", "f14.txt", "f21.txt", "f28.txt", "f35.txt"];

/** A file of 192 KB (12 pieces, 3 docs) with "needle" on lines 5, 3800 and 3801 only, "zebras" on line 2000. */
const BIG = Array.from({ length: 4400 }, (_, i) =>
  i === 5 || i === 3800 || i === 3801
    ? `line ${i} has a needle in it\n`
    : `line ${i} plain ${i === 2000 ? "zebras" : "filler"} text, nothing to see\n`,
).join("");

/** An overlay with no changes, outside a Durable Object. */
function emptyOverlay(): OverlayStore {
  const refuse = () => {
    throw new Error("read-only test overlay");
  };
  return { list: () => [], entry: () => null, get: () => null, stream: () => null, put: refuse, whiteout: refuse };
}

/** What `searchTexts` yields per path: the pieces to search and whether the text is complete. */
async function yielded(workspaceId: string, query: SearchQuery, bucket = env.STORE) {
  const snapshot = await loadWorkspace(bucket, workspaceId);
  const out: Record<string, { pieces: PieceSet | number[]; complete: boolean; read: number[] }> = {};
  for await (const { path, text, pieces } of snapshot.searchTexts(
    snapshot.index.files.map((f) => f.path),
    query,
  )) {
    const read = text.pieces.flatMap((p, k) => (p === undefined ? [] : [k]));
    out[path] = { pieces: pieces === "all" ? "all" : [...pieces], complete: text.complete, read };
  }
  return out;
}

/**
 * Rewrites a stored index as version 1 wrote it (snapshots stored before pieces): one doc per
 * file, no piece table. Built from the version 2 index, whose shards hold whole files.
 */
async function rewriteAsVersion1(workspaceId: string): Promise<void> {
  const key = (name: string) => `workspaces/${workspaceId}/${name}`;
  const v2 = decodeDirectory(new Uint8Array(await (await env.STORE.get(key("search/directory")))!.arrayBuffer()));
  const table = v2.pieces!;
  const firstDoc = [0];
  for (let f = 0; f < v2.offsets.length; f++) {
    firstDoc.push(firstDoc[f]! + Math.ceil((table.firstPiece[f + 1]! - table.firstPiece[f]!) / table.piecesPerDoc));
  }
  const fileOf = (doc: number) => firstDoc.findLastIndex((first, f) => f < v2.offsets.length && first <= doc);
  const shards: ShardDirectory[] = [];
  let firstFile = 0;
  for (const [n, shard] of v2.shards.entries()) {
    const last = n === v2.shards.length - 1 ? v2.offsets.length - 1 : fileOf(shard.firstDoc + shard.docCount - 1);
    const body = new Uint8Array(await (await env.STORE.get(key(`search/postings-${String(n).padStart(4, "0")}`)))!.arrayBuffer());
    const lists: number[] = [];
    const ends = shard.keys.map((_, i) => {
      const files = new Set<number>();
      for (const local of decodePostings(body.subarray(i === 0 ? 0 : shard.ends[i - 1]!, shard.ends[i]!))) {
        files.add(fileOf(shard.firstDoc + local) - firstFile);
      }
      let previous = -1;
      for (const file of files) {
        for (let gap = file - previous; ; gap >>>= 7) {
          if (gap < 0x80) {
            lists.push(gap);
            break;
          }
          lists.push((gap & 0x7f) | 0x80);
        }
        previous = file;
      }
      return lists.length;
    });
    await env.STORE.put(key(`search/postings-${String(n).padStart(4, "0")}`), Uint8Array.from(lists));
    shards.push({ firstDoc: firstFile, docCount: last + 1 - firstFile, keys: shard.keys, ends });
    firstFile = last + 1;
  }
  const directory = encodeDirectory({ offsets: v2.offsets, flags: v2.flags, pieces: null, shards });
  await env.STORE.put(key("search/directory"), directory);
  const index = (await (await env.STORE.get(key("index.json")))!.json()) as { search: SearchIndexInfo };
  index.search = { ...index.search, version: 1, directoryBytes: directory.byteLength };
  await env.STORE.put(key("index.json"), JSON.stringify(index));
}

describe("search index", () => {
  it("narrows to the files holding every trigram, case-insensitively, leaving binary files out", async () => {
    await ingest("w_si_narrow");
    expect(await searched("w_si_narrow", containsText("needle"))).toEqual(["src/alpha.ts", "src/gamma.ts"]);
    expect(await searched("w_si_narrow", regexQuery("café|Köln"))).toEqual(["docs/unicode.md"]);
    expect(await searched("w_si_narrow", containsText("nowhere"))).toEqual([]);
    // Without a trigram: every text file (the empty one too), still not the binary one.
    expect(await searched("w_si_narrow", ALL)).toEqual([
      "docs/empty.txt",
      "docs/unicode.md",
      "src/alpha.ts",
      "src/beta.ts",
      "src/gamma.ts",
    ]);
  });

  it("never takes a binary file for text because an empty file before it starts at the same offset", async () => {
    await ingest("w_si_empty_binary", {
      "a-empty.txt": "",
      "b.bin": new Uint8Array([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00]),
      "c.txt": "needle\n",
    });
    const index = (await (await env.STORE.get("workspaces/w_si_empty_binary/index.json"))!.json()) as {
      files: { path: string; offset: number }[];
    };
    expect(index.files.map((f) => [f.path, f.offset])).toEqual([
      ["a-empty.txt", 0],
      ["b.bin", 0],
      ["c.txt", 7],
    ]);
    expect(await searched("w_si_empty_binary", ALL)).toEqual(["a-empty.txt", "c.txt"]);
    expect(await searched("w_si_empty_binary", containsText("needle"))).toEqual(["c.txt"]);
  });

  it("stores no shard for a tree with no text, and finds nothing in it", async () => {
    await ingest("w_si_binary_only", { "a.bin": FILES["assets/blob.bin"]!, "b-empty.txt": "" });
    const index = (await (await env.STORE.get("workspaces/w_si_binary_only/index.json"))!.json()) as { search: { shards: number } };
    expect(index.search.shards).toBe(0);
    expect(await keysUnder(env.STORE, "workspaces/w_si_binary_only/search/")).toEqual(["workspaces/w_si_binary_only/search/directory"]);
    expect(await searched("w_si_binary_only", containsText("needle"))).toEqual([]);
    expect(await searched("w_si_binary_only", ALL)).toEqual(["b-empty.txt"]);
  });

  it("splits into shards and finds files in every one of them", async () => {
    const files = MARKER_FILES;
    await ingest("w_si_shards", files, { searchShardPostings: 64 });
    const index = (await (await env.STORE.get("workspaces/w_si_shards/index.json"))!.json()) as { search: { shards: number } };
    expect(index.search.shards).toBeGreaterThan(5);
    expect(await searched("w_si_shards", containsText("marker"))).toEqual(MARKED);
  });

  it("stores no index when its directory would pass the limit (shards written are deleted); then every file is a candidate", async () => {
    const files = MARKER_FILES;
    const keysUnder = async (prefix: string) => (await env.STORE.list({ prefix })).objects.map((o) => o.key);
    // The same files fit a limit of 2,000 bytes (at least three shards written, and their directory)...
    await ingest("w_si_dir_fits", files, { searchShardPostings: 64, searchDirectoryBytes: 2000 });
    const fits = (await (await env.STORE.get("workspaces/w_si_dir_fits/index.json"))!.json()) as { search: { shards: number } };
    expect(fits.search.shards).toBeGreaterThan(2);
    expect(await keysUnder("workspaces/w_si_dir_fits/search/")).toHaveLength(fits.search.shards + 1);
    // ...and pass a limit of 300.
    await ingest("w_si_dir_over", files, { searchShardPostings: 64, searchDirectoryBytes: 300 });
    const over = (await (await env.STORE.get("workspaces/w_si_dir_over/index.json"))!.json()) as { search?: unknown; files: unknown[] };
    expect([over.search, over.files.length]).toEqual([undefined, 40]);
    expect(await keysUnder("workspaces/w_si_dir_over/search/")).toEqual([]);
    // Without an index every file is a candidate (the matcher then decides, as for snapshots stored before the index).
    expect(await searched("w_si_dir_over", containsText("marker"))).toEqual(Object.keys(files));
    expect(await searched("w_si_dir_fits", containsText("marker"))).toEqual(MARKED);
  });

  it("reads the directory once and the lists it needs by range; a warm search touches no R2", async () => {
    await ingest("w_si_reads");
    const { bucket, gets } = recordingBucket();
    const snapshot = await loadWorkspace(bucket, "w_si_reads");
    gets.length = 0;
    const run = async () => {
      const out: string[] = [];
      for await (const { path } of snapshot.searchTexts(
        snapshot.index.files.map((f) => f.path),
        containsText("needle"),
      ))
        out.push(path);
      return out.sort();
    };
    expect(await run()).toEqual(["src/alpha.ts", "src/gamma.ts"]);
    expect(gets.map((g) => g.key.replace("workspaces/w_si_reads/", ""))).toEqual([
      "search/directory",
      "search/postings-0000",
      "pack/00000",
    ]);
    gets.length = 0;
    expect(await run()).toEqual(["src/alpha.ts", "src/gamma.ts"]);
    expect(gets).toEqual([]);
  });

  it("narrows a large file to the pieces that can hold a match, decoding only those, and grep still prints from the whole file", async () => {
    await ingest("w_si_pieces", { ...FILES, "src/big.ts": BIG });
    const pieces = searchTextOf(new TextEncoder().encode(BIG)).selected("all");
    expect(pieces.length).toBe(12);
    expect(pieces.flatMap((p, k) => (p.includes("needle") ? [k] : []))).toEqual([0, 10]);
    expect(pieces.flatMap((p, k) => (p.includes("zebras") ? [k] : []))).toEqual([5]);
    // Docs are runs of 4 pieces: "needle" is in docs 0 and 2.
    const needleDocs = [0, 1, 2, 3, 8, 9, 10, 11];
    const first = await yielded("w_si_pieces", containsText("needle"));
    expect(first["src/big.ts"]).toEqual({ pieces: needleDocs, complete: false, read: needleDocs });
    expect(first["src/alpha.ts"]).toEqual({ pieces: "all", complete: true, read: [0] });
    expect(Object.keys(first).sort()).toEqual(["src/alpha.ts", "src/big.ts", "src/gamma.ts"]);
    // A search needing other pieces reads those too, into the same cached text; ALL completes it.
    const other = await yielded("w_si_pieces", containsText("zebras"));
    expect(other).toEqual({ "src/big.ts": { pieces: [4, 5, 6, 7], complete: true, read: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] } });
    searchTextCache.clear();
    await yielded("w_si_pieces", containsText("zebras"));
    const { bucket, gets } = recordingBucket();
    expect((await yielded("w_si_pieces", containsText("zebras"), bucket))["src/big.ts"]!.read).toEqual([4, 5, 6, 7]);
    expect(gets.filter((g) => g.key.includes("/pack/"))).toEqual([]);
    const all = await yielded("w_si_pieces", ALL);
    expect(all["src/big.ts"]).toEqual({ pieces: "all", complete: true, read: [...pieces.keys()] });

    // grep from a cold cache (pieces only in pass 1) prints what it prints over memory.
    const memory = new MemoryWorkspaceFs();
    memory.put("src/big.ts", new TextEncoder().encode(BIG));
    for (const [path, content] of Object.entries(FILES))
      memory.put(path, typeof content === "string" ? new TextEncoder().encode(content) : content);
    const args = grepTool.parameters.parse({ pattern: "needle", context: 2 });
    const expected = (await grepTool.execute(args, toolContext(memory))).text;
    expect(expected).toContain("src/big.ts:3801: line 3800 has a needle in it");
    searchTextCache.clear();
    const fs = await openWorkspace(env.STORE, "w_si_pieces", emptyOverlay());
    expect((await grepTool.execute(args, toolContext(fs))).text).toBe(expected);
    searchTextCache.clear();
    await yielded("w_si_pieces", containsText("zebras"));
    expect((await grepTool.execute(args, toolContext(fs))).text).toBe(expected);
  });

  it("prints context across piece boundaries from the neighbouring pieces, and from the whole file when lines are longer than a piece", async () => {
    const filler = (i: number) => `line ${i} plain filler text, nothing to see\n`;
    const plain = Array.from({ length: 1600 }, (_, i) => filler(i)).join("");
    const starts: number[] = [0];
    for (const piece of searchTextOf(new TextEncoder().encode(plain)).selected("all").slice(0, -1)) {
      starts.push(starts[starts.length - 1]! + piece.split("\n").length - 1);
    }
    // "needle" in place of "filler" (same length, same cuts): the last line of piece 1 and the first of piece 3.
    const needles = new Set([starts[2]! - 1, starts[3]!]);
    const edge = Array.from({ length: 1600 }, (_, i) => (needles.has(i) ? filler(i).replace("filler", "needle") : filler(i))).join("");
    const long = Array.from({ length: 8 }, (_, i) => `${i === 4 ? "needle " : ""}${"x".repeat(20_000)}\n`).join("");
    const files = { "src/edge.ts": edge, "src/long.ts": long };
    await ingest("w_si_context", files);
    const memory = new MemoryWorkspaceFs();
    for (const [path, content] of Object.entries(files)) memory.put(path, new TextEncoder().encode(content));
    for (const context of [2, 3]) {
      const args = grepTool.parameters.parse({ pattern: "needle", context });
      const expected = (await grepTool.execute(args, toolContext(memory))).text;
      expect(expected).toContain(`src/edge.ts:${starts[3]! + 1}: line ${starts[3]} plain needle text`);
      searchTextCache.clear();
      const fs = await openWorkspace(env.STORE, "w_si_context", emptyOverlay());
      expect((await grepTool.execute(args, toolContext(fs))).text, `context ${context}`).toBe(expected);
    }
    expect(needles.size).toBe(2);
  });

  it("still reads a version 1 index (one doc per file) and searches the files it names whole", async () => {
    await ingest("w_si_v1", { ...FILES, "src/big.ts": BIG }, { searchShardPostings: 200 });
    await rewriteAsVersion1("w_si_v1");
    const version = new DataView((await (await env.STORE.get("workspaces/w_si_v1/search/directory"))!.arrayBuffer()).slice(4, 8));
    expect(version.getUint32(0, true)).toBe(1);
    const found = await yielded("w_si_v1", containsText("needle"));
    expect(found).toEqual({
      "src/alpha.ts": { pieces: "all", complete: true, read: [0] },
      "src/big.ts": { pieces: "all", complete: true, read: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] },
      "src/gamma.ts": { pieces: "all", complete: true, read: [0] },
    });
    expect(await searched("w_si_v1", regexQuery("café|Köln"))).toEqual(["docs/unicode.md"]);
  });

  it("still reads a version 2 index (the same layout, before files could be left unindexed), and an unknown version not at all", async () => {
    // Stored snapshots never change, and the objects of an isolate share one's open search index:
    // each version is set on an upload of its own, before anything opens it.
    const setVersion = async (workspaceId: string, version: number) => {
      await ingest(workspaceId, { ...FILES, "src/big.ts": BIG });
      const key = `workspaces/${workspaceId}/search/directory`;
      const bytes = new Uint8Array(await (await env.STORE.get(key))!.arrayBuffer());
      new DataView(bytes.buffer).setUint32(4, version, true);
      await env.STORE.put(key, bytes);
    };
    await setVersion("w_si_v2", 2);
    const found = await yielded("w_si_v2", containsText("needle"));
    expect(found["src/big.ts"]).toEqual({ pieces: [0, 1, 2, 3, 8, 9, 10, 11], complete: false, read: [0, 1, 2, 3, 8, 9, 10, 11] });
    expect(Object.keys(found).sort()).toEqual(["src/alpha.ts", "src/big.ts", "src/gamma.ts"]);
    // A directory from a newer version is not guessed at: every file is searched.
    await setVersion("w_si_v4", 4);
    searchTextCache.clear();
    expect(await searched("w_si_v4", containsText("needle"))).toHaveLength(6);
  });

  it("searches files whole when the index cut them with another piece size", async () => {
    await ingest("w_si_piece_size", { ...FILES, "src/big.ts": BIG });
    const key = "workspaces/w_si_piece_size/search/directory";
    const bytes = new Uint8Array(await (await env.STORE.get(key))!.arrayBuffer());
    new DataView(bytes.buffer).setUint32(20, 8 * 1024, true);
    await env.STORE.put(key, bytes);
    expect((await yielded("w_si_piece_size", containsText("needle")))["src/big.ts"]).toEqual({
      pieces: "all",
      complete: true,
      read: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    });
  });

  it("leaves a file larger than grep searches out of the index, yet hands it out whole when asked for it", async () => {
    const big = "a needle in a haystack\n".repeat(Math.ceil((SEARCH_MAX_FILE_BYTES + 1) / 23));
    await ingest("w_si_oversized", { ...FILES, "data/big.txt": big });
    const found = await yielded("w_si_oversized", containsText("needle"));
    expect(Object.keys(found).sort()).toEqual(["data/big.txt", "src/alpha.ts", "src/gamma.ts"]);
    expect(found["data/big.txt"]).toEqual({
      pieces: "all",
      complete: true,
      read: [...searchTextOf(new TextEncoder().encode(big)).pieces.keys()],
    });
    expect(Object.keys(await yielded("w_si_oversized", containsText("zebras")))).toEqual(["data/big.txt"]);
    // grep itself skips it, and says so; the warm-up does not read it.
    const fs = await openWorkspace(env.STORE, "w_si_oversized", emptyOverlay());
    const grep = await grepTool.execute(grepTool.parameters.parse({ pattern: "needle" }), toolContext(fs));
    expect(grep.text).toBe(
      "src/alpha.ts:1: export const alpha = 'needle in alpha';\n\n[Skipped 1 file(s) larger than 8.0MB: data/big.txt]",
    );
    searchTextCache.clear();
    await warmGrep(fs, new AbortController().signal);
    expect(searchTextCache.bytes).toBe(
      ["docs/unicode.md", "src/alpha.ts", "src/beta.ts", "src/gamma.ts"].reduce(
        (sum, p) => sum + searchTextOf(new TextEncoder().encode(FILES[p] as string)).bytes,
        0,
      ),
    );
  });

  it("searches a snapshot stored without an index in full", async () => {
    await ingest("w_si_old", FILES, { searchIndex: false });
    expect(await keysUnder(env.STORE, "workspaces/w_si_old/search/")).toEqual([]);
    expect(await searched("w_si_old", containsText("needle"))).toEqual([
      "docs/empty.txt",
      "docs/unicode.md",
      "src/alpha.ts",
      "src/beta.ts",
      "src/gamma.ts",
    ]);
  });

  it("falls back to a full scan when the index cannot be read", async () => {
    await ingest("w_si_lost");
    await env.STORE.delete("workspaces/w_si_lost/search/directory");
    expect(await searched("w_si_lost", containsText("needle"))).toHaveLength(5);
  });

  it("falls back to a full scan when a posting list cannot be read", async () => {
    await ingest("w_si_lost_shard");
    await env.STORE.delete("workspaces/w_si_lost_shard/search/postings-0000");
    expect(await searched("w_si_lost_shard", containsText("needle"))).toHaveLength(5);
  });

  it("logs an unreadable posting list once per workspace, as a warning, however many searches meet it", async () => {
    await ingest("w_si_lost_once");
    await env.STORE.delete("workspaces/w_si_lost_once/search/postings-0000");
    const lines: string[] = [];
    for (const via of ["log", "warn", "error"] as const)
      vi.spyOn(console, via).mockImplementation((line: string) => lines.push(`${via} ${line}`));
    for (let i = 0; i < 3; i++) expect(await searched("w_si_lost_once", containsText("needle"))).toHaveLength(5);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.startsWith("warn ")).toBe(true);
    expect(JSON.parse(lines[0]!.slice(5))).toEqual({
      level: "warn",
      msg: "search index unreadable, searching in full",
      workspaceId: "w_si_lost_once",
      error: expect.any(String),
    });
  });

  it("always searches the overlay's files, and never a deleted one", async () => {
    await ingest("w_si_overlay");
    const out = await runInDurableObject(env.SESSIONS.getByName("search-overlay"), async (_i, state) => {
      const fs = await openWorkspace(env.STORE, "w_si_overlay", new SqliteOverlay(state.storage.sql));
      await fs.writeFile("src/beta.ts", new TextEncoder().encode("const beta = 'needle now';\n"));
      await fs.writeFile("src/new.ts", new TextEncoder().encode("another needle\n"));
      await fs.deleteFile("src/alpha.ts");
      const grep = await grepTool.execute(grepTool.parameters.parse({ pattern: "needle", ignoreCase: true }), toolContext(fs));
      return grep.text;
    });
    expect(out).toBe(
      ["src/beta.ts:1: const beta = 'needle now';", "src/gamma.ts:1: // Needle, capitalised", "src/new.ts:1: another needle"].join("\n"),
    );
  });

  it("leaves nothing behind when an upload is refused after shards were written", async () => {
    const files = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}.txt`, `content number ${i}\n`]));
    const promise = ingestWorkspace(env.STORE, streamOf(await tarOf(files)), {
      workspaceId: "w_si_refused",
      owner: null,
      limits: { maxArchiveFiles: 25 },
      searchShardPostings: 32,
    });
    await expect(promise).rejects.toBeInstanceOf(ArchiveError);
    expect(await keysUnder(env.STORE, "workspaces/w_si_refused/")).toEqual([]);
  });

  it("is deleted with its workspace", async () => {
    await ingest("w_si_delete", FILES, { searchShardPostings: 16 });
    expect((await keysUnder(env.STORE, "workspaces/w_si_delete/search/")).length).toBeGreaterThan(2);
    await deleteWorkspace(env.STORE, "w_si_delete");
    expect(await keysUnder(env.STORE, "workspaces/w_si_delete/")).toEqual([]);
  });
});

describe("warming the text cache before a search", () => {
  const encode = (content: string | Uint8Array) => (typeof content === "string" ? new TextEncoder().encode(content) : content);
  /** Bytes the cache counts for these files' texts. */
  const textBytes = (files: Record<string, string | Uint8Array>, paths: string[]) =>
    paths.reduce((sum, path) => sum + searchTextOf(encode(files[path]!)).bytes, 0);
  const WARM_FILES = { ...FILES, "src/big.ts": BIG, ".gitignore": "ignored/\n", "ignored/note.ts": "a needle nobody searches\n" };
  const grepArgs = grepTool.parameters.parse({ pattern: "needle", ignoreCase: true, context: 1 });

  it("caches what a grep of the whole tree reads, so the first grep reads no pack and prints the same", async () => {
    await ingest("w_si_warm", WARM_FILES);
    // A narrowed search left big.ts partial (pieces 4-7); the warm-up completes it.
    await yielded("w_si_warm", containsText("zebras"));
    const { bucket, gets } = recordingBucket();
    const fs = await openWorkspace(bucket, "w_si_warm", emptyOverlay());
    await warmGrep(fs, new AbortController().signal);
    // Text files grep would search, whole: not the binary, the empty or the ignored file.
    const searchedPaths = [".gitignore", "docs/unicode.md", "src/alpha.ts", "src/beta.ts", "src/big.ts", "src/gamma.ts"];
    expect(searchTextCache.bytes).toBe(textBytes(WARM_FILES, searchedPaths));
    expect(gets.some((g) => g.key.includes("/pack/"))).toBe(true);
    gets.length = 0;

    const memory = new MemoryWorkspaceFs();
    for (const [path, content] of Object.entries(WARM_FILES)) memory.put(path, encode(content));
    const expected = (await grepTool.execute(grepArgs, toolContext(memory))).text;
    expect(expected).toContain("src/big.ts:3801: line 3800 has a needle in it");
    expect((await grepTool.execute(grepArgs, toolContext(fs))).text).toBe(expected);
    // Nothing at all from R2: no pack, and no posting list (the warm-up read the shards whole).
    expect(gets).toEqual([]);
    // Warming again finds everything cached: nothing more is read.
    await warmGrep(fs, new AbortController().signal);
    expect(gets.filter((g) => g.key.includes("/pack/"))).toEqual([]);
  });

  it("reads the posting lists whole only when they are small enough, and then answers every search as range reads do", async () => {
    await ingest("w_si_postings", WARM_FILES, { searchShardPostings: 16 });
    const stored = (await (await env.STORE.get(workspaceKeys("w_si_postings").index))!.json()) as WorkspaceIndex;
    const info = stored.search!;
    expect(info.shards).toBeGreaterThan(3);
    // What range reads answer (nothing of this snapshot is in the isolate's shard cache yet).
    const byRange = await SearchIndex.open(env.STORE, "w_si_postings", info, "t1");
    const queries = [
      containsText("needle"),
      containsText("zebras"),
      containsText("line 3800"),
      regexQuery("ga[m]+a|ünï", { ignoreCase: true }),
    ];
    const expected = [];
    for (const query of queries) {
      const filter = await byRange.filter(query);
      expected.push(stored.files.map((f) => filter(f.offset)));
    }

    const { bucket, gets } = recordingBucket();
    const warmed = await SearchIndex.open(bucket, "w_si_postings", info, "t1");
    gets.length = 0;
    // Over the limit: nothing is read.
    expect(await warmed.warmPostings(undefined, 64)).toBe(false);
    expect(gets).toEqual([]);
    expect(await warmed.warmPostings()).toBe(true);
    expect(gets.map((g) => g.key)).toEqual(Array.from({ length: info.shards }, (_, n) => searchKeys("w_si_postings").shard(n)));
    gets.length = 0;
    const actual = [];
    for (const query of queries) {
      const filter = await warmed.filter(query);
      actual.push(stored.files.map((f) => filter(f.offset)));
    }
    expect(actual).toEqual(expected);
    // Another object's index of the same snapshot finds the shards in the isolate's cache.
    const other = await SearchIndex.open(bucket, "w_si_postings", info, "t1");
    gets.length = 0;
    expect(await other.warmPostings()).toBe(true);
    await other.filter(queries[0]!);
    expect(gets).toEqual([]);
  });

  it("fills only the room left, evicting nothing, and reads nothing once aborted", async () => {
    await ingest("w_si_warm_room");
    const aborted = new AbortController();
    aborted.abort();
    const { bucket, gets } = recordingBucket();
    const fs = await openWorkspace(bucket, "w_si_warm_room", emptyOverlay());
    await expect(warmGrep(fs, aborted.signal)).rejects.toThrow();
    expect([searchTextCache.bytes, gets.filter((g) => g.key.includes("/pack/"))]).toEqual([0, []]);

    // 100 bytes free: alpha (39) and beta (23) fit, in pack order; unicode.md's text (two bytes a
    // character) no longer does, and the warm-up stops there.
    const others = ["a", "b", "c", "d", "e"].map((name) => `someone else's ${name}`);
    const search = searchTextCache.beginSearch();
    for (const key of others) searchTextCache.set(key, new SearchText(["x"], SEARCH_TEXT_CACHE_BYTES / others.length - 20), search);
    await warmGrep(fs, new AbortController().signal);
    expect(others.map((key) => searchTextCache.peek(key) !== undefined)).toEqual([true, true, true, true, true]);
    expect(searchTextCache.bytes).toBe(SEARCH_TEXT_CACHE_BYTES - 100 + textBytes(FILES, ["src/alpha.ts", "src/beta.ts"]));
  });

  it("runs from the run's tools once per run, one at a time in the isolate, and only for a run with a workspace", async () => {
    await ingest("w_si_warm_run");
    const options = AgentRunOptions.parse({});
    const fs = await openWorkspace(env.STORE, "w_si_warm_run", emptyOverlay());
    const tools = new ToolExecutionService({ tools: BUILTIN_TOOLS, fs, options });
    await tools.warmUp(new AbortController().signal);
    const warmed = textBytes(FILES, ["docs/unicode.md", "src/alpha.ts", "src/beta.ts", "src/gamma.ts"]);
    expect(searchTextCache.bytes).toBe(warmed);
    searchTextCache.clear();
    await tools.warmUp(new AbortController().signal);
    expect(searchTextCache.bytes).toBe(0);
    await new ToolExecutionService({ tools: BUILTIN_TOOLS, fs: null, options }).warmUp(new AbortController().signal);
    expect(searchTextCache.bytes).toBe(0);
    // One warm-up at a time in the isolate: a run whose warm-up could not start tries again later.
    const busy = new ToolExecutionService({ tools: BUILTIN_TOOLS, fs, options });
    const other = warmGrep(fs, new AbortController().signal);
    await busy.warmUp(new AbortController().signal);
    expect(await other).toBe(true);
    expect(searchTextCache.bytes).toBe(warmed);
    searchTextCache.clear();
    await busy.warmUp(new AbortController().signal);
    expect(searchTextCache.bytes).toBe(warmed);
    expect(await Promise.all([warmGrep(fs, new AbortController().signal), warmGrep(fs, new AbortController().signal)])).toEqual([
      true,
      false,
    ]);
    searchTextCache.clear();
    // A warm-up stuck on an R2 read that never answers ends at its abort, and lets the next one run.
    const stuck = new Proxy(env.STORE, {
      get(target, property) {
        if (property === "get")
          return (key: string, options?: R2GetOptions) => (key.includes("/pack/") ? new Promise(() => {}) : target.get(key, options));
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const hanging = new AbortController();
    const stuckWarmUp = warmGrep(await openWorkspace(stuck, "w_si_warm_run", emptyOverlay()), hanging.signal);
    await new Promise((resolve) => setTimeout(resolve, 20));
    hanging.abort();
    await expect(stuckWarmUp).rejects.toThrow();
    expect(await warmGrep(fs, new AbortController().signal)).toBe(true);
    expect(searchTextCache.bytes).toBe(warmed);
    searchTextCache.clear();
    // A failure is logged, not thrown: the run's calls are only as slow as without it.
    const broken = await openWorkspace(recordingBucket().bucket, "w_si_warm_run", emptyOverlay());
    await env.STORE.delete("workspaces/w_si_warm_run/pack/00000");
    await new ToolExecutionService({ tools: BUILTIN_TOOLS, fs: broken, options }).warmUp(new AbortController().signal);
    expect(searchTextCache.bytes).toBe(0);
  });
});
