import { appendFileSync, createReadStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { TestProject } from "vitest/node";

/**
 * Global setup for bench/session-history.bench.ts, run in Node: the local-file baseline, what pi does
 * with a session file. `POST /history/baseline` takes a messages JSONL document (the bench sends the
 * very bytes its session stored in R2), writes it to local disk, then times (1) reading it back line
 * by line with node:readline and JSON.parse of every line, (2) appending the same lines to a new file
 * one fs.appendFileSync per line (unsynced), and (3) the same with the JSON.stringify of each record
 * first, as pi appends a session entry. Median of RUNS each.
 */
const RUNS = 5;

export interface HistoryBaseline {
  lines: number;
  bytes: number;
  readMs: number;
  appendMs: number;
  appendsPerSecond: number;
  stringifyAppendsPerSecond: number;
}

export interface SessionHistoryInput {
  url: string;
  node: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    sessionHistory: SessionHistoryInput;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function baseline(jsonl: string, dir: string): Promise<HistoryBaseline> {
  const file = join(dir, "session.jsonl");
  writeFileSync(file, jsonl);
  const reads: number[] = [];
  let lines = 0;
  for (let run = 0; run < RUNS; run++) {
    const start = performance.now();
    const parsed: unknown[] = [];
    for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY })) {
      if (line) parsed.push(JSON.parse(line));
    }
    reads.push(performance.now() - start);
    lines = parsed.length;
  }
  const all = jsonl.split("\n").filter(Boolean);
  const appends: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const target = join(dir, `append-${run}.jsonl`);
    const start = performance.now();
    for (const line of all) appendFileSync(target, `${line}\n`);
    appends.push(performance.now() - start);
    rmSync(target);
  }
  const appendMs = median(appends);
  const records = all.map((line) => JSON.parse(line) as unknown);
  const stringified: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const target = join(dir, `stringify-${run}.jsonl`);
    const start = performance.now();
    for (const record of records) appendFileSync(target, `${JSON.stringify(record)}\n`);
    stringified.push(performance.now() - start);
    rmSync(target);
  }
  return {
    lines,
    bytes: Buffer.byteLength(jsonl),
    readMs: median(reads),
    appendMs,
    appendsPerSecond: all.length / (appendMs / 1000),
    stringifyAppendsPerSecond: all.length / (median(stringified) / 1000),
  };
}

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "session-history-"));
  const server = createServer((req, res) => {
    if (req.method !== "POST" || req.url !== "/history/baseline") return res.writeHead(404).end();
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      baseline(Buffer.concat(chunks).toString("utf8"), dir).then(
        (result) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(result)),
        (error: Error) => res.writeHead(500).end(error.message),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no server address");
  project.provide("sessionHistory", { url: `http://127.0.0.1:${address.port}`, node: process.version });
  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  };
}
