import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { ingestWorkspace } from "../../src/workspace/ingest";
import { SqliteOverlay } from "../../src/workspace/overlay";
import { parentOf } from "../../src/workspace/paths";
import { openWorkspace, SnapshotWorkspaceFs } from "../../src/workspace/snapshot-workspace-fs";
import { entry, fileEntry, streamOf, tarOf, text } from "./archives";

/** A small deterministic generator (tests repeat exactly). */
function random(seed: number) {
  let state = seed >>> 0;
  return (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state >>> 8) % n;
  };
}

/** Everything the tools can ask the tree: files, directories, every stat and every listing. */
function snapshotOf(fs: SnapshotWorkspaceFs) {
  const dirs = fs.dirs();
  const files = fs.files();
  const stat: Record<string, unknown> = {};
  for (const f of files) stat[f] = fs.stat(f);
  const readdir: Record<string, unknown> = { "": fs.readdir("") };
  for (const d of dirs) readdir[d] = fs.readdir(d);
  return { files: [...files], dirs: [...dirs], stat, readdir };
}

it("kept current through 4,800 random writes, deletions and directory removals, it answers as one opened afresh", async () => {
  const names = ["a", "b", "c"];
  for (let round = 0; round < 40; round++) {
    const next = random(1000 + round);
    const pathOf = () => Array.from({ length: 1 + next(4) }, () => names[next(names.length)]).join("/");
    const files = new Map<string, number>();
    const dirs = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const p = pathOf();
      const clash =
        [...files.keys()].some((f) => f === p || f.startsWith(`${p}/`) || p.startsWith(`${f}/`)) ||
        dirs.has(p) ||
        [...files.keys()].some((f) => p.startsWith(`${f}/`));
      if (clash) continue;
      if (next(3) === 0) {
        for (let d = p; d !== ""; d = parentOf(d)) dirs.add(d);
      } else {
        if ([...dirs].some((d) => d === p)) continue;
        files.set(p, next(2) ? 0o644 : 0o755);
        for (let d = parentOf(p); d !== ""; d = parentOf(d)) dirs.add(d);
      }
    }
    const wid = `w_fuzz_${round}`;
    const tar = await tarOf({}, [
      ...[...files].map(([p, m]) => fileEntry(p, `u:${p}`, m)),
      ...[...dirs].filter((d) => ![...files.keys()].some((f) => f.startsWith(`${d}/`))).map((d) => entry(d, "directory")),
    ]);
    await ingestWorkspace(env.STORE, streamOf(tar), { workspaceId: wid, owner: "alice" });
    await runInDurableObject(env.SESSIONS.getByName(`fuzz-${round}`), async (_i, state) => {
      const overlay = new SqliteOverlay(state.storage.sql);
      const fs = await openWorkspace(env.STORE, wid, overlay);
      const log: string[] = [];
      for (let step = 0; step < 120; step++) {
        const op = next(6);
        try {
          if (op <= 1) {
            const p = pathOf();
            const mode = [0o644, 0o755, 0o600][next(3)]!;
            const replace = next(2) === 0;
            log.push(`write ${p} ${mode.toString(8)} ${replace}`);
            await fs.writeFile(p, text(`s${step}`.repeat(1 + next(3))), mode, { replace });
          } else if (op <= 3) {
            const all = fs.files();
            if (all.length === 0) continue;
            const p = all[next(all.length)]!;
            log.push(`delete ${p}`);
            await fs.deleteFile(p);
          } else if (op === 4) {
            const ds = fs.dirs();
            if (ds.length === 0) continue;
            const d = ds[next(ds.length)]!;
            log.push(`rmdir ${d}`);
            await fs.removeDir(d);
          } else {
            const p = pathOf();
            log.push(`rmdir? ${p}`);
            await fs.removeDir(p);
          }
        } catch (e) {
          log.push(`  -> ${(e as Error).message}`);
        }
        // What a later object (or the next run) opens over the same snapshot and overlay.
        const fresh = new SnapshotWorkspaceFs(fs.snapshot, overlay);
        expect(snapshotOf(fs), JSON.stringify({ round, files: [...files], dirs: [...dirs], log })).toEqual(snapshotOf(fresh));
      }
    });
  }
}, 300_000);
