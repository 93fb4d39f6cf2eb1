import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { grepTool } from "../../../src/tools/grep";
import { ArchiveError } from "../../../src/workspace/archive-errors";
import { ingestWorkspace } from "../../../src/workspace/ingest";
import { SqliteOverlay } from "../../../src/workspace/overlay";
import { ALL, containsText, type SearchQuery } from "../../../src/workspace/search/query";
import { regexQuery } from "../../../src/workspace/search/regex-query";
import { searchTextCache } from "../../../src/workspace/search/text-cache";
import { deleteWorkspace, loadWorkspace } from "../../../src/workspace/snapshot";
import { openWorkspace } from "../../../src/workspace/snapshot-workspace-fs";
import { toolContext } from "../../helpers/memory-fs";
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

async function ingest(workspaceId: string, files = FILES, options: { searchIndex?: boolean; searchShardPostings?: number } = {}) {
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

beforeEach(() => searchTextCache.clear());

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

  it("splits into shards and finds files in every one of them", async () => {
    const files = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`f${String(i).padStart(2, "0")}.txt`, `file ${i} ${i % 7 === 0 ? "marker" : "plain"}\n`]),
    );
    await ingest("w_si_shards", files, { searchShardPostings: 64 });
    const index = (await (await env.STORE.get("workspaces/w_si_shards/index.json"))!.json()) as { search: { shards: number } };
    expect(index.search.shards).toBeGreaterThan(5);
    expect(await searched("w_si_shards", containsText("marker"))).toEqual([
      "f00.txt",
      "f07.txt",
      "f14.txt",
      "f21.txt",
      "f28.txt",
      "f35.txt",
    ]);
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
