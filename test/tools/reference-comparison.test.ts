import ignore from "ignore";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { findTool } from "../../src/tools/find";
import { grepTool } from "../../src/tools/grep";
import { MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

/**
 * grep and find against answers computed independently over the same files: a plain
 * split-lines + RegExp scan, and picomatch over the file list, with the root .gitignore applied
 * by the `ignore` package to whole paths.
 */

const WORDS = ["alpha", "beta", "Gamma", "delta", "TODO", "fixme", "return", "const", "x = 1;", "foo(bar)", "a.b", "[x]", "é"];
const GITIGNORE = "dist/\n*.tmp\nsecret*\n!secret-ok.txt\n";

function seededRandom(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

function generateTree(): Record<string, string | Uint8Array> {
  const rand = seededRandom(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const dirs = ["", "src", "src/util", "src/util/deep", "lib", "dist", "docs", ".hidden", ".git"];
  const exts = [".ts", ".js", ".md", ".txt", ".tmp"];
  const files: Record<string, string | Uint8Array> = { ".gitignore": GITIGNORE, "secret-ok.txt": "TODO ok\n", "secret.txt": "TODO no\n" };
  for (let i = 0; i < 160; i++) {
    const dir = pick(dirs);
    const name = `${pick(["util", "main", "index", "readme", "data"])}${i}${pick(exts)}`;
    const lineCount = 1 + Math.floor(rand() * 40);
    const lines: string[] = [];
    for (let l = 0; l < lineCount; l++) lines.push(Array.from({ length: 1 + Math.floor(rand() * 8) }, () => pick(WORDS)).join(" "));
    if (i % 17 === 0) lines.push("z".repeat(700));
    const text = `${lines.join(i % 11 === 0 ? "\r\n" : "\n")}\n`;
    files[dir === "" ? name : `${dir}/${name}`] = i % 23 === 0 ? new Uint8Array([0, ...new TextEncoder().encode(text)]) : text;
  }
  return files;
}

const tree = generateTree();
const rootIgnore = ignore().add(GITIGNORE);
const visibleFiles = Object.keys(tree)
  .filter((p) => !p.startsWith(".git/") && !rootIgnore.ignores(p))
  .sort();

function referenceGrep(pattern: RegExp): string {
  const out: string[] = [];
  for (const path of visibleFiles) {
    const content = tree[path];
    if (typeof content !== "string") continue; // the binary ones
    const lines = content.split("\n");
    lines.pop();
    lines.forEach((raw, i) => {
      const line = raw.replace(/\r$/, "");
      if (pattern.test(line)) out.push(`${path}:${i + 1}: ${line.length > 500 ? `${line.slice(0, 500)}... [truncated]` : line}`);
    });
  }
  return out.join("\n");
}

function referenceFind(glob: string): string {
  const isMatch = picomatch(glob, { dot: true });
  const dirs = new Set<string>();
  for (const f of visibleFiles) for (let d = f.split("/").slice(0, -1); d.length > 0; d.pop()) dirs.add(d.join("/"));
  const entries = [...visibleFiles.map((f) => ({ key: f, shown: f })), ...[...dirs].map((d) => ({ key: d, shown: `${d}/` }))];
  return entries
    .filter((e) => isMatch(glob.includes("/") ? e.key : (e.key.split("/").pop() ?? "")))
    .sort((a, b) => (a.key < b.key ? -1 : 1))
    .map((e) => e.shown)
    .join("\n");
}

const fs = new MemoryWorkspaceFs(tree);
const body = (text: string) => text.split("\n\n[")[0];

describe("grep agrees with a reference scan", () => {
  it.each([
    ["TODO", {}, /TODO/],
    ["gamma", { ignoreCase: true }, /gamma/i],
    ["^alpha .* delta$", {}, /^alpha .* delta$/],
    ["foo(bar)", { literal: true }, /foo\(bar\)/],
    ["a.b", { literal: true }, /a\.b/],
    ["\\[x\\]|fixme$", {}, /\[x\]|fixme$/],
    ["é", {}, /é/],
    ["z{600}", {}, /z{600}/],
  ])("pattern %s %o", async (pattern, options, reference) => {
    const expected = referenceGrep(reference);
    expect(expected).not.toBe(""); // the comparison is only worth something when there are matches
    const out = await grepTool.execute(grepTool.parameters.parse({ pattern, ...options, limit: 1000 }), toolContext(fs));
    expect(body(out.text)).toBe(expected === "" ? "No matches found" : expected);
  });
});

describe("find agrees with picomatch over the file list", () => {
  it.each(["*.ts", "*", "src/**/*.js", "**/util*", "*.{md,txt}", ".hidden/*", "util"])("glob %s", async (glob) => {
    const expected = referenceFind(glob);
    expect(expected).not.toBe("");
    const out = await findTool.execute(findTool.parameters.parse({ pattern: glob, limit: 2_000 }), toolContext(fs));
    expect(out.text).toBe(expected === "" ? "No files found matching pattern" : expected);
  });
});
