import { createServer } from "node:http";
import type { TestProject } from "vitest/node";
import { IsolateHeapProbe } from "./probes/isolate-heap";

/**
 * Global setup for bench/workspace-heap.bench.ts, run in Node. Only when vitest runs with
 * `--inspect=host:port` (workerd then serves the Chrome DevTools Protocol on that port): serves
 * `POST /heap/start`, `POST /heap/sample` and `POST /heap/stop` for the bench, answered by probes/isolate-heap.ts reading the bench isolate's V8 heap.
 */
export interface IsolateHeapInput {
  /** The setup's HTTP server answering /heap/start, /heap/sample and /heap/stop. */
  url: string;
  /** workerd's inspector (DevTools protocol) address. */
  inspector: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    isolateHeap: IsolateHeapInput | null;
  }
}

export default async function setup(project: TestProject) {
  const inspector = project.config.inspector;
  if (!inspector?.enabled) {
    project.provide("isolateHeap", null);
    return;
  }
  // vitest-pool-workers falls back to 9229 (or the next free port) when none is given.
  const inspectorUrl = `http://${inspector.host ?? "127.0.0.1"}:${inspector.port ?? 9229}`;
  const probe = new IsolateHeapProbe(inspectorUrl);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const steps: Record<string, () => Promise<unknown>> = {
      "/heap/start": () => probe.start(),
      "/heap/sample": () => probe.sample().then(() => ({})),
      "/heap/live": () => probe.live(),
      "/heap/stop": () => probe.stop(),
    };
    const step = steps[url.pathname];
    if (req.method !== "POST" || !step) return res.writeHead(404).end();
    const reading = step();
    reading.then(
      (value) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value)),
      (error: Error) => res.writeHead(500).end(error.message),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no server address");
  project.provide("isolateHeap", { url: `http://127.0.0.1:${address.port}`, inspector: inspectorUrl });

  return async () => {
    probe.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}
