import { spawnSync } from "node:child_process";
import { copyFileSync, createReadStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import type { TestProject } from "vitest/node";
import { MAX_ARCHIVE_BYTES } from "../../src/domain/limits";
import { copySourceTree } from "../fixtures/source-tree";
import { WorkerdMemoryProbe } from "./probes/workerd-memory";

/**
 * Global setup for bench/workspace.bench.ts, run in Node: copies real source text from
 * node_modules into a temp tree (at least MIN_SOURCE_BYTES), packs it with GNU tar (tar, tar.gz)
 * and zip, times the native baselines (`tar -xf`, `tar -xzf`, `unzip`) extracting to disk, and
 * serves the archives over a local HTTP server that the bench (in workerd) fetches (as fast as it
 * can, or with `?pace=<bytes per second>` at about that rate, as an upload over a slower link).
 *
 * For the memory bench it also repeats that tree under `copy-N/` until it holds LARGE_SOURCE_BYTES
 * (a tar just under MAX_ARCHIVE_BYTES) and answers `POST /memory/start` and `POST /memory/stop`
 * with the workerd processes' resident memory (see probes/workerd-memory.ts).
 */
const MIN_SOURCE_BYTES = 24 * 1024 * 1024;
const SOURCE_DIRS = ["typescript/lib", "hono/dist", "zod", "diff", "openai", "modern-tar/dist", "fflate", "picomatch", "ignore"];
const TEXT_FILE = /\.(m?js|cjs|d\.[cm]?ts|ts|json|md)$/;
const BASELINE_RUNS = 3;
/** Source text in the large archives: "100 MB" as the issue counts it, while the tar stays under MAX_ARCHIVE_BYTES. */
const LARGE_SOURCE_BYTES = 100_000_000;

type Format = "tar" | "tar.gz" | "zip";

export interface WorkspaceBenchInput {
  baseUrl: string;
  files: number;
  sourceBytes: number;
  archives: { format: Format; path: string; bytes: number; contentType: string; baseline: string; baselineMs: number }[];
  large: {
    files: number;
    sourceBytes: number;
    archives: { format: Format; path: string; bytes: number; contentType: string }[];
    /** Build the search index in the 100 MB cases (off with WS_BENCH_NO_INDEX=1, to compare). */
    searchIndex: boolean;
  };
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
  const { files, sourceBytes } = copySourceTree(modules, tree, {
    dirs: SOURCE_DIRS,
    include: TEXT_FILE,
    stopAtBytes: MIN_SOURCE_BYTES + 4 * 1024 * 1024,
    minBytes: MIN_SOURCE_BYTES,
    skipNestedNodeModules: true,
  });

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
      run(
        cmd,
        args.map((a) => a.replace("{out}", out)),
      );
      samples.push(performance.now() - start);
      rmSync(out, { recursive: true, force: true });
    }
    return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
  };
  const archives: WorkspaceBenchInput["archives"] = [
    {
      format: "tar",
      path: "ws.tar",
      contentType: "application/x-tar",
      baseline: "GNU tar -xf",
      baselineMs: time("tar", ["-xf", "ws.tar", "-C", "{out}"]),
    },
    {
      format: "tar.gz",
      path: "ws.tar.gz",
      contentType: "application/gzip",
      baseline: "GNU tar -xzf",
      baselineMs: time("tar", ["-xzf", "ws.tar.gz", "-C", "{out}"]),
    },
    {
      format: "zip",
      path: "ws.zip",
      contentType: "application/zip",
      baseline: "unzip -q",
      baselineMs: time("unzip", ["-q", "ws.zip", "-d", "{out}"]),
    },
  ].map((a) => ({ ...a, format: a.format as Format, bytes: statSync(join(root, a.path)).size }));

  const large = buildLargeTree(tree, join(root, "large"));
  run("tar", ["-cf", "large.tar", "-C", join(root, "large"), "."]);
  run("tar", ["-czf", "large.tar.gz", "-C", join(root, "large"), "."]);
  run("zip", ["-qr", join(root, "large.zip"), "."], join(root, "large"));
  rmSync(join(root, "large"), { recursive: true, force: true });
  const largeArchives = [
    { format: "tar" as const, path: "large.tar", contentType: "application/x-tar" },
    { format: "tar.gz" as const, path: "large.tar.gz", contentType: "application/gzip" },
    { format: "zip" as const, path: "large.zip", contentType: "application/zip" },
  ]
    .filter((a) => !process.env.WS_BENCH_LARGE || process.env.WS_BENCH_LARGE.split(",").includes(a.format))
    .map((a) => ({ ...a, bytes: statSync(join(root, a.path)).size }));
  const tooBig = largeArchives.find((a) => a.bytes >= MAX_ARCHIVE_BYTES);
  if (tooBig) throw new Error(`${tooBig.path} is ${tooBig.bytes} bytes, over MAX_ARCHIVE_BYTES`);

  const probe = new WorkerdMemoryProbe();
  const served = [...archives, ...largeArchives];
  const server = createServer((req, res) => {
    if (req.method === "POST" && (req.url === "/memory/start" || req.url === "/memory/stop")) {
      const reading = req.url === "/memory/start" ? probe.start() : probe.stop();
      return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reading));
    }
    const url = new URL(req.url ?? "/", "http://bench");
    const archive = served.find((a) => url.pathname === `/${a.path}`);
    if (!archive) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": archive.contentType, "content-length": archive.bytes });
    const pace = Number(url.searchParams.get("pace") ?? 0);
    if (pace > 0) void sendPaced(res, join(root, archive.path), pace);
    else createReadStream(join(root, archive.path)).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no server address");
  project.provide("workspaceBench", {
    baseUrl: `http://127.0.0.1:${address.port}`,
    files,
    sourceBytes,
    archives,
    large: { ...large, archives: largeArchives, searchIndex: !process.env.WS_BENCH_NO_INDEX },
  });

  return async () => {
    probe.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(root, { recursive: true, force: true });
  };
}

/** Copies `tree` file by file under `to/copy-0/`, `to/copy-1/`, ... until LARGE_SOURCE_BYTES are in. */
function buildLargeTree(tree: string, to: string): { files: number; sourceBytes: number } {
  const sources: { path: string; size: number }[] = [];
  const list = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const stat = statSync(path);
      if (stat.isDirectory()) list(path);
      else sources.push({ path: relative(tree, path), size: stat.size });
    }
  };
  list(tree);
  let sourceBytes = 0;
  let files = 0;
  for (let copy = 0; sourceBytes < LARGE_SOURCE_BYTES; copy++) {
    for (const source of sources) {
      if (sourceBytes >= LARGE_SOURCE_BYTES) break;
      const target = join(to, `copy-${copy}`, source.path);
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(join(tree, source.path), target);
      sourceBytes += source.size;
      files++;
    }
  }
  return { files, sourceBytes };
}

const PACED_CHUNK_BYTES = 64 * 1024;

/** Writes the file at about `bytesPerSecond`, 64 KiB at a time. */
async function sendPaced(res: ServerResponse, path: string, bytesPerSecond: number): Promise<void> {
  const body = readFileSync(path);
  const start = performance.now();
  for (let sent = 0; sent < body.length; ) {
    const wait = start + (sent / bytesPerSecond) * 1000 - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const end = Math.min(body.length, sent + PACED_CHUNK_BYTES);
    if (!res.write(body.subarray(sent, end))) await new Promise((resolve) => res.once("drain", resolve));
    sent = end;
  }
  res.end();
}
