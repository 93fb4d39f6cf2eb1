import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { TestProject } from "vitest/node";
import { copySourceTree } from "../../bench/fixtures/source-tree";

/**
 * Global setup, run in Node: a real source tree for the tests that compare grep over the search
 * index with a full scan. Copies code and translated messages (Japanese, Chinese, Russian) from
 * node_modules, adds files with the awkward cases (CRLF, a BOM, invalid UTF-8, U+2028, emoji, a
 * late NUL, binary, no final newline, a .gitignore), packs it with GNU tar and serves the tar.
 */
const SOURCE_DIRS = [
  "hono/dist/cjs",
  "diff/libesm",
  "picomatch",
  "ignore",
  "modern-tar/dist",
  "typescript/lib/ja",
  "typescript/lib/zh-cn",
  "typescript/lib/ru",
  "typescript/lib/de",
  "zod/v4/core",
];
const MIN_SOURCE_BYTES = 2 * 1024 * 1024;

export interface SourceTreeInput {
  /** URL of the tar. */
  url: string;
  files: number;
  bytes: number;
}

declare module "vitest" {
  export interface ProvidedContext {
    sourceTree: SourceTreeInput;
  }
}

const CRAFTED: Record<string, string | Uint8Array> = {
  "crafted/crlf.txt": "first line\r\nsecond Return\r\nthird return;\r\n\r\nlast\r",
  "crafted/bom.ts": "\uFEFFexport function bom(): string {\n  return 'bom';\n}\n",
  "crafted/latin1.txt": Uint8Array.from([...Buffer.from("caf"), 0xe9, 0x20, ...Buffer.from("cr"), 0xe8, ...Buffer.from("me return\n")]),
  "crafted/u2028.txt": "alpha\u2028return beta\nreturn\u2029gamma\n",
  "crafted/emoji.md": "# 😀 Grüße\nsmile 😀 return 😀😀\nnaïve café — done\n",
  // Letters only Unicode's case folding (RE2's ignoreCase) pairs: the Kelvin sign, capital sharp s, long s.
  "crafted/folding.txt": "300 \u212Aelvin units\nSTRA\u1E9EE 1\ncongre\u017F\u017F shall\n",
  "crafted/late-nul.txt": `${"text line with return\n".repeat(500)}\u0000 after the sniff window\n`,
  "crafted/binary.bin": Uint8Array.from([...Buffer.from("return function "), 0, 1, 2, ...Buffer.from("return")]),
  "crafted/no-final-newline.js": "function last() {\n  return 42;\n}",
  "crafted/.gitignore": "ignored/\n",
  "crafted/ignored/hidden.js": "function hidden() { return 'ignored'; }\n",
  "crafted/empty.txt": "",
  "crafted/long-line.min.js": `${"var a=function(){return 1};".repeat(4000)}\n`,
};

export default async function setup(project: TestProject) {
  const root = mkdtempSync(join(tmpdir(), "source-tree-"));
  const tree = join(root, "tree");
  const modules = join(process.cwd(), "node_modules");
  const copied = copySourceTree(modules, tree, { dirs: SOURCE_DIRS, include: /./, stopAtBytes: Infinity, minBytes: MIN_SOURCE_BYTES });
  let bytes = copied.sourceBytes;
  for (const [path, content] of Object.entries(CRAFTED)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), content);
    bytes += typeof content === "string" ? Buffer.byteLength(content) : content.byteLength;
  }
  const tar = join(root, "tree.tar");
  const packed = spawnSync("tar", ["-cf", tar, "-C", tree, "."]);
  if (packed.status !== 0) throw new Error(`tar: ${packed.stderr}`);

  const server = createServer((req, res) => {
    if (req.url !== "/tree.tar") return res.writeHead(404).end();
    const body = readFileSync(tar);
    res.writeHead(200, { "content-type": "application/x-tar", "content-length": body.byteLength }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no server address");
  project.provide("sourceTree", {
    url: `http://127.0.0.1:${address.port}/tree.tar`,
    files: copied.files + Object.keys(CRAFTED).length,
    bytes,
  });

  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(root, { recursive: true, force: true });
  };
}
