import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { RE2JS } from "re2js";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { GREP_MAX_FILE_BYTES, grepTool, warmGrep } from "../../src/tools/grep";
import { LineMatcher, lines } from "../../src/tools/grep-matcher";
import { IgnoreRules, walkWorkspace } from "../../src/tools/workspace-walk";
import { ingestWorkspace } from "../../src/workspace/ingest";
import { SqliteOverlay } from "../../src/workspace/overlay";
import { isAll } from "../../src/workspace/search/query";
import { clearWholeShards } from "../../src/workspace/search/search-index";
import { searchTextCache } from "../../src/workspace/search/text-cache";
import { openWorkspace, type SnapshotWorkspaceFs } from "../../src/workspace/snapshot-workspace-fs";
import { decodeText, isBinary } from "../../src/workspace/text";
import type { WorkspaceFs } from "../../src/workspace/workspace-fs";
import { MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";
import type { SourceTreeInput } from "../setup/source-tree";

/**
 * grep narrowed by the search index gives exactly what a full scan gives, over a real source tree
 * (code and translated messages from node_modules plus awkward files, packed with GNU tar by
 * test/setup/source-tree.ts), with session changes in the overlay. Three views of the same files:
 * the indexed snapshot, the same snapshot stored without an index, and every file in memory.
 */

interface Case {
  pattern: string;
  literal?: boolean;
  ignoreCase?: boolean;
  path?: string;
  glob?: string;
  context?: number;
  /** For a pattern in grep's and rg's habits: the same search in JavaScript's syntax (the reference). */
  javaScript?: { pattern: string; ignoreCase?: boolean };
}

const CASES: Case[] = [
  // Literals
  { pattern: "return", literal: true },
  { pattern: "function", literal: true },
  { pattern: "export", literal: true },
  { pattern: "TypeScript", literal: true },
  { pattern: "undefined", literal: true },
  { pattern: "use strict", literal: true },
  { pattern: "a + b", literal: true },
  { pattern: "return;", literal: true },
  { pattern: ".js", literal: true },
  { pattern: "zzzz_not_there", literal: true },
  { pattern: "hidden", literal: true },
  { pattern: "(", literal: true },
  { pattern: "\\", literal: true },
  { pattern: "\t", literal: true },
  // Shorter than a trigram
  { pattern: "=>", literal: true },
  { pattern: "replaced\r", literal: true },
  { pattern: "no return here" },
  { pattern: "{}", literal: true },
  { pattern: "a", literal: true },
  { pattern: "ab" },
  { pattern: "x*" },
  { pattern: "." },
  // Unicode
  { pattern: "café", literal: true },
  { pattern: "Grüße", literal: true },
  { pattern: "😀", literal: true },
  { pattern: "😀😀", literal: true },
  { pattern: "ファイル", literal: true },
  { pattern: "文件", literal: true },
  { pattern: "файл", literal: true },
  { pattern: "ファ.ル" },
  { pattern: "[аеио]л" },
  { pattern: "[^\\x00-\\x7F]{3}" },
  { pattern: "\\uFFFD" },
  { pattern: "caf\\uFFFD" },
  // Regexes
  { pattern: "function [a-zA-Z]+\\(" },
  { pattern: "^import .* from" },
  { pattern: "\\bconst\\b" },
  { pattern: "(get|set)[A-Z]\\w*" },
  { pattern: "colou?r" },
  { pattern: "\\d{4,}" },
  // Plain texts joined by .* (a chain, found in order without a regex).
  { pattern: "import.*from.*zod" },
  { pattern: "return.*\\(.+\\);" },
  { pattern: "EXPORT.*?DEFAULT", ignoreCase: true },
  { pattern: "^\\s*$" },
  { pattern: "^$" },
  { pattern: "return\\s+\\w+;$" },
  { pattern: "(?<=return )\\d+" },
  { pattern: "return(?! )" },
  { pattern: "^return" },
  { pattern: "beta$" },
  { pattern: "(\\w{3,})\\1" },
  { pattern: "\\.(ts|js)\\b" },
  { pattern: "error|warning" },
  { pattern: "\\r" },
  { pattern: "return\\r?$" },
  { pattern: "Return\\b" },
  // Case-insensitive
  { pattern: "todo|fixme", ignoreCase: true },
  { pattern: "RETURN", ignoreCase: true },
  { pattern: "UNDEFINED", literal: true, ignoreCase: true },
  { pattern: "TYPEERROR", ignoreCase: true },
  { pattern: "deprecated", ignoreCase: true },
  { pattern: "GRÜSSE|GRÜẞE|grüße", ignoreCase: true },
  { pattern: "CAFÉ|NAÏVE", ignoreCase: true },
  { pattern: "ФАЙЛ", ignoreCase: true },
  { pattern: "σ|Σ", ignoreCase: true },
  { pattern: "function\\s+\\w+\\s*\\(", ignoreCase: true },
  // ripgrep's habits: POSIX classes in brackets, a leading (?i)
  { pattern: "^[[:space:]]+return", javaScript: { pattern: "^[\\t\\n\\v\\f\\r ]+return" } },
  { pattern: "[[:upper:]][[:lower:]]+Error", javaScript: { pattern: "[A-Z][a-z]+Error" } },
  { pattern: "[[:blank:]]return[^[:alnum:]_]", javaScript: { pattern: "[\\t ]return[^0-9A-Za-z_]" } },
  { pattern: "(?i)TYPEERROR", javaScript: { pattern: "TYPEERROR", ignoreCase: true } },
  { pattern: "(?i)return [[:digit:]]+", javaScript: { pattern: "return [0-9]+", ignoreCase: true } },
  // On RE2 (a repeated alternation), whose ignoreCase folds as Unicode does: k/K and the Kelvin
  // sign, ß and ẞ, s and the long s
  { pattern: "(kelvin|celsius)+ units", ignoreCase: true },
  { pattern: "(straße|gasse)+ 1", ignoreCase: true },
  { pattern: "(congress|senate)+ shall", ignoreCase: true },
  // Path, glob and context
  { pattern: "return", path: "crafted" },
  { pattern: "return", glob: "*.js" },
  { pattern: "Hono", glob: "**/*.js", context: 2 },
  { pattern: "return", path: "crafted", glob: "crafted/*.js" },
  { pattern: "ファイル", context: 1 },
];

/** The session's changes, applied the same way to every view. */
const CHANGES: { path: string; content: string | null }[] = [
  { path: "crafted/overlay-new.ts", content: "export const added = () => 'return from the overlay café';\n" },
  { path: "crafted/crlf.txt", content: "replaced\r\nno return here? return!\r\n" },
  { path: "crafted/bom.ts", content: null },
];

const views = new Map<string, { open: () => Promise<WorkspaceFs> }>();
let memory: MemoryWorkspaceFs;

async function ingest(workspaceId: string, searchIndex: boolean): Promise<void> {
  const input: SourceTreeInput = inject("sourceTree");
  const response = await fetch(input.url);
  const result = await ingestWorkspace(env.STORE, response.body!, {
    workspaceId,
    owner: null,
    contentType: "application/x-tar",
    searchIndex,
    // Several shards, so that narrowing crosses shard boundaries.
    searchShardPostings: 50_000,
  });
  expect(result.skipped).toEqual([]);
  expect(result.files).toBe(input.files);
}

/** Runs `fn` over a snapshot with the changes applied in a real SqliteOverlay. */
function withSnapshot<T>(workspaceId: string, fn: (fs: SnapshotWorkspaceFs) => Promise<T>): Promise<T> {
  return runInDurableObject(env.SESSIONS.getByName(`exactness-${workspaceId}`), async (_i, state) => {
    const fs = await openWorkspace(env.STORE, workspaceId, new SqliteOverlay(state.storage.sql));
    if (fs.overlay.list().length === 0) await applyChanges(fs);
    return fn(fs);
  });
}

async function applyChanges(fs: WorkspaceFs): Promise<void> {
  for (const change of CHANGES) {
    if (change.content === null) await fs.deleteFile(change.path);
    else await fs.writeFile(change.path, new TextEncoder().encode(change.content));
  }
}

const grep = (fs: WorkspaceFs, { javaScript: _reference, ...c }: Case) =>
  grepTool.execute(grepTool.parameters.parse({ ...c, limit: 1000 }), toolContext(fs));

beforeAll(async () => {
  await ingest("w_exact_indexed", true);
  await ingest("w_exact_plain", false);
  memory = new MemoryWorkspaceFs();
  await withSnapshot("w_exact_plain", async (fs) => {
    for await (const { path, bytes } of fs.snapshot.readMany(fs.snapshot.index.files.map((f) => f.path))) memory.put(path, bytes);
  });
  await applyChanges(memory);
});

describe("grep over the search index equals a full scan", () => {
  it(`prints the same output for ${CASES.length} patterns from the indexed snapshot (cold, cached, after a warm-up), an unindexed one and memory`, async () => {
    expect(CASES.length).toBeGreaterThanOrEqual(50);
    views.clear();
    const outputs = async (workspaceId: string) =>
      withSnapshot(workspaceId, async (fs) => {
        const out: string[] = [];
        for (const c of CASES) out.push((await grep(fs, c)).text);
        return out;
      });
    searchTextCache.clear();
    const indexed = await outputs("w_exact_indexed");
    // Again, now served from the text cache.
    const indexedWarm = await outputs("w_exact_indexed");
    // After a run's warm-up in a fresh isolate: the lists come from the shards it read whole.
    searchTextCache.clear();
    clearWholeShards();
    const afterWarmUp = await withSnapshot("w_exact_indexed", async (fs) => {
      await warmGrep(fs, new AbortController().signal);
      const out: string[] = [];
      for (const c of CASES) out.push((await grep(fs, c)).text);
      return out;
    });
    const plain = await outputs("w_exact_plain");
    const inMemory: string[] = [];
    for (const c of CASES) inMemory.push((await grep(memory, c)).text);
    CASES.forEach((c, i) => {
      const label = JSON.stringify(c);
      expect(indexed[i], label).toBe(inMemory[i]);
      expect(indexedWarm[i], label).toBe(inMemory[i]);
      expect(afterWarmUp[i], label).toBe(inMemory[i]);
      expect(plain[i], label).toBe(inMemory[i]);
    });
    // A pattern in grep's and rg's habits prints what the same search in JavaScript's syntax prints.
    for (const [i, c] of CASES.entries()) {
      if (c.javaScript) expect(inMemory[i], c.pattern).toBe((await grep(memory, { ...c, ...c.javaScript })).text);
    }
    // The cases are not vacuous: most find something, some find nothing.
    expect(inMemory.filter((text) => text !== "No matches found").length).toBeGreaterThan(50);
    // 79 patterns over four views: 20 s alone on a machine with two busy cores, past 30 s in a full run there.
  }, 90_000);

  it("counts the same matching lines per file as testing every line of every file, while reading fewer files", async () => {
    // The reference: every searchable file (not ignored, not binary, not oversized), every line.
    const rules = await IgnoreRules.load(memory);
    const searchable = walkWorkspace(memory, "", rules).files.filter((p) => (memory.stat(p)?.size ?? 0) <= GREP_MAX_FILE_BYTES);
    const texts = new Map<string, string[]>();
    for (const path of searchable) {
      const bytes = await memory.readFile(path);
      if (!isBinary(bytes)) texts.set(path, lines(decodeText(bytes)));
    }
    let narrowed = 0;
    await withSnapshot("w_exact_indexed", async (fs) => {
      for (const c of CASES.filter((k) => !k.path && !k.glob)) {
        const matcher = new LineMatcher(c.pattern, c);
        const js = c.javaScript ?? c;
        const regex = new RegExp(c.literal ? c.pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : js.pattern, js.ignoreCase ? "i" : "");
        // V8 would take hours on crafted/long-line.min.js for a chain (4,000 "return" and "(" on
        // one line): RE2 is the reference there, with JavaScript's `.`; and where grep runs on RE2.
        const re2 =
          matcher.engine === "chain" || matcher.engine === "re2"
            ? RE2JS.compile(js.pattern.replaceAll(".", "[^\\n\\r\\x{2028}\\x{2029}]"), js.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0)
            : null;
        const reference = (line: string) => (re2 ? re2.matcher(line).find() : regex.test(line));
        const expected = new Map<string, number>();
        for (const [path, fileLines] of texts) {
          const n = fileLines.filter(reference).length;
          if (n > 0) expected.set(path, n);
        }
        const found = new Map<string, number>();
        let read = 0;
        for await (const { path, text, pieces } of fs.searchTexts(searchable, matcher.query)) {
          read++;
          const n = text.selected(pieces).reduce((sum, piece) => sum + matcher.countMatchingLines(piece), 0);
          if (n > 0) found.set(path, n);
        }
        expect(Object.fromEntries([...found].sort()), JSON.stringify(c)).toEqual(Object.fromEntries([...expected].sort()));
        if (!isAll(matcher.query)) {
          expect(read, JSON.stringify(c)).toBeLessThan(texts.size);
          narrowed++;
        }
      }
    });
    expect(narrowed).toBeGreaterThan(30);
  });
});
