import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import type { TestProject } from "vitest/node";

/**
 * Global setup for bench/workspace.bench.ts, run in Node: copies real source text from
 * node_modules into a temp tree (at least MIN_SOURCE_BYTES), packs it with GNU tar (tar, tar.gz)
 * and zip, times the native baselines (`tar -xf`, `tar -xzf`, `unzip`) extracting to disk, and
 * serves the archives over a local HTTP server that the bench (in workerd) fetches.
 */
const MIN_SOURCE_BYTES = 24 * 1024 * 1024;
const SOURCE_DIRS = ["typescript/lib", "hono/dist", "zod", "diff", "openai", "modern-tar/dist", "fflate", "picomatch", "ignore"];
const TEXT_FILE = /\.(m?js|cjs|d\.[cm]?ts|ts|json|md)$/;
const BASELINE_RUNS = 3;

export interface WorkspaceBenchInput {
  baseUrl: string;
  files: number;
  sourceBytes: number;
  archives: { format: "tar" | "tar.gz" | "zip"; path: string; bytes: number; contentType: string; baseline: string; baselineMs: number }[];
}

declare module "vitest" {
  export interface ProvidedContext {
    workspaceBench: WorkspaceBenchInput;
  }
}

export default async function setup(project: TestProject) {
  const root = mkdtempSync(join(tmpdir(), "ws-bench-"));
  const tree = join(root, "tree");
  const modules = join(process.cwd(), "node_modules");
  let sourceBytes = 0;
  let files = 0;
  const copy = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (sourceBytes >= MIN_SOURCE_BYTES + 4 * 1024 * 1024) return;
      const from = join(dir, name);
      const stat = statSync(from);
      if (stat.isDirectory()) {
        if (name !== "node_modules") copy(from);
      } else if (TEXT_FILE.test(name)) {
        const to = join(tree, relative(modules, from));
        mkdirSync(dirname(to), { recursive: true });
        copyFileSync(from, to);
        sourceBytes += stat.size;
        files++;
      }
    }
  };
  for (const dir of SOURCE_DIRS) copy(join(modules, dir));
  if (sourceBytes < MIN_SOURCE_BYTES) throw new Error(`only ${sourceBytes} bytes of source text found`);

  const run = (cmd: string, args: string[], cwd = root) => {
    const result = spawnSync(cmd, args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
    if (result.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${result.stderr}`);
  };
  run("tar", ["-cf", "ws.tar", "-C", tree, "."]);
  run("tar", ["-czf", "ws.tar.gz", "-C", tree, "."]);
  run("zip", ["-qr", join(root, "ws.zip"), "."], tree);

  const time = (cmd: string, args: string[]) => {
    const samples: number[] = [];
    for (let i = 0; i < BASELINE_RUNS; i++) {
      const out = join(root, `out-${i}`);
      mkdirSync(out);
      const start = performance.now();
      run(cmd, args.map((a) => a.replace("{out}", out)));
      samples.push(performance.now() - start);
      rmSync(out, { recursive: true, force: true });
    }
    return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
  };
  const archives: WorkspaceBenchInput["archives"] = [
    { format: "tar", path: "ws.tar", contentType: "application/x-tar", baseline: "GNU tar -xf", baselineMs: time("tar", ["-xf", "ws.tar", "-C", "{out}"]) },
    { format: "tar.gz", path: "ws.tar.gz", contentType: "application/gzip", baseline: "GNU tar -xzf", baselineMs: time("tar", ["-xzf", "ws.tar.gz", "-C", "{out}"]) },
    { format: "zip", path: "ws.zip", contentType: "application/zip", baseline: "unzip -q", baselineMs: time("unzip", ["-q", "ws.zip", "-d", "{out}"]) },
  ].map((a) => ({ ...a, format: a.format as "tar" | "tar.gz" | "zip", bytes: statSync(join(root, a.path)).size }));

  const server = createServer((req, res) => {
    const archive = archives.find((a) => req.url === `/${a.path}`);
    if (!archive) return res.writeHead(404).end();
    const body = readFileSync(join(root, archive.path));
    res.writeHead(200, { "content-type": archive.contentType, "content-length": body.byteLength }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no server address");
  project.provide("workspaceBench", { baseUrl: `http://127.0.0.1:${address.port}`, files, sourceBytes, archives });

  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(root, { recursive: true, force: true });
  };
}
