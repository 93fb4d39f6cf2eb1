// For the memory scripts of bench/ that drive `wrangler dev` over HTTP: a dev server of a tree on a
// fresh local state, with the black-box campaign's fake model, and the resident memory of its workerd
// processes.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Starts `wrangler dev` of `tree` (a checkout, or a `git archive` of an older commit to compare). */
export async function startMeasuredDev(tree) {
  process.chdir(tree);
  const { startDevServer, freePort } = await import(path.join(tree, "scripts/blackbox/dev-server.mjs"));
  const { startFakeModel } = await import(path.join(tree, "scripts/blackbox/fake-model.mjs"));
  const model = await startFakeModel();
  const persistTo = fs.mkdtempSync(path.join(os.tmpdir(), "devmem-"));
  const dev = await startDevServer({ port: await freePort(), persistTo, modelUrl: `http://127.0.0.1:${model.port}/v1` });
  return {
    base: dev.base,
    post: (p, body) => fetch(dev.base + p, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
    /** Resident memory of the dev server's workerd processes, in MB. */
    rss() {
      let kb = 0;
      for (const line of execFileSync("ps", ["-e", "-o", "pid=,pgid=,rss=,comm="]).toString().trim().split("\n")) {
        const [, pgid, size, comm] = line.trim().split(/\s+/);
        if (Number(pgid) === dev.child.pid && comm.startsWith("workerd")) kb += Number(size);
      }
      return kb / 1024;
    },
    async stop() {
      await dev.stop("SIGTERM");
      model.server.close();
      fs.rmSync(persistTo, { recursive: true, force: true });
    },
  };
}
