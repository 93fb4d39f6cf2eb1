import { describe, expect, it } from "vitest";
import type { OverlayEntry } from "../../src/workspace/overlay";
import { comparePaths, parentOf } from "../../src/workspace/paths";
import { TreeView, type UploadedTree } from "../../src/workspace/tree-view";

/** The rule as docs/architecture.md states it, computed from scratch: what the view must list. */
function expectedTree(uploaded: UploadedTree, overlay: ReadonlyMap<string, OverlayEntry>) {
  const files = new Set(uploaded.files.map((f) => f.path));
  const removed = new Set<string>();
  for (const change of overlay.values()) {
    // A file can take an uploaded directory's path only once the directory was removed.
    if (uploaded.dirs.includes(change.path)) removed.add(change.path);
    if (change.deleted) files.delete(change.path);
    else files.add(change.path);
  }
  const ancestors = (paths: Iterable<string>) => {
    const out = new Set<string>();
    for (const path of paths) for (let dir = parentOf(path); dir !== ""; dir = parentOf(dir)) out.add(dir);
    return out;
  };
  const holding = ancestors(files);
  const hadUploads = ancestors(uploaded.files.map((f) => f.path));
  const dropped = (dir: string) => {
    for (let at = dir; at !== ""; at = parentOf(at)) if ((hadUploads.has(at) || removed.has(at)) && !holding.has(at)) return true;
    return false;
  };
  const dirs = [...new Set([...uploaded.dirs, ...holding])]
    .filter((dir) => holding.has(dir) || (!files.has(dir) && !dropped(dir)))
    .sort(comparePaths);
  return { files: [...files].sort(comparePaths), dirs };
}

function childrenOf(files: readonly string[], dirs: readonly string[], dir: string) {
  const direct = (path: string) => parentOf(path) === dir;
  const name = (path: string) => (dir === "" ? path : path.slice(dir.length + 1));
  return [
    ...dirs.filter(direct).map((d) => ({ name: name(d), type: "dir" })),
    ...files.filter(direct).map((f) => ({ name: name(f), type: "file" })),
  ].sort((a, b) => comparePaths(a.name, b.name));
}

/** A small deterministic generator (tests repeat exactly). */
function random(seed: number) {
  let state = seed >>> 0;
  return (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

describe("TreeView", () => {
  it("kept current write by write, it lists what a view made from scratch lists, after every step of 20,000 random ones", () => {
    const next = random(7);
    const names = ["a", "b", "c", "d"];
    const pathOf = () => Array.from({ length: 1 + next(3) }, () => names[next(names.length)]).join("/");
    for (let round = 0; round < 200; round++) {
      const uploadedFiles = new Map<string, { path: string; size: number; mode: number }>();
      const uploadedDirs = new Set<string>();
      for (let i = 0; i < 8; i++) {
        const path = pathOf();
        if ([...uploadedFiles.keys()].some((f) => f === path || f.startsWith(`${path}/`) || path.startsWith(`${f}/`))) continue;
        if (next(4) === 0) {
          if (!uploadedFiles.has(path)) for (let dir = path; dir !== ""; dir = parentOf(dir)) uploadedDirs.add(dir);
          continue;
        }
        if (uploadedDirs.has(path)) continue;
        uploadedFiles.set(path, { path, size: 1, mode: 0o644 });
        for (let dir = parentOf(path); dir !== ""; dir = parentOf(dir)) uploadedDirs.add(dir);
      }
      const uploaded: UploadedTree = { files: [...uploadedFiles.values()], dirs: [...uploadedDirs].sort(comparePaths) };
      const overlay = new Map<string, OverlayEntry>();
      let view = new TreeView(uploaded, overlay.values());
      for (let step = 0; step < 100; step++) {
        const files = view.files();
        const op = next(5);
        if (op < 2) {
          // Write where a file may go: not onto a directory, not under a file.
          const path = pathOf();
          const blocked = view.dirSet.has(path) || [...view.info.keys()].some((f) => path.startsWith(`${f}/`));
          if (blocked) continue;
          overlay.set(path, { path, deleted: false, size: step, mode: 0o644 });
          view.written(path, step, 0o644);
        } else if (op < 4 && files.length > 0) {
          const path = files[next(files.length)]!;
          overlay.set(path, { path, deleted: true, size: 0, mode: 0 });
          view.deleted(path);
        } else if (op === 4) {
          // An uploaded directory with no file under it removed (rmdir): the fs makes its view again.
          const empty = view.dirs().filter((d) => uploaded.dirs.includes(d) && !files.some((f) => f.startsWith(`${d}/`)));
          if (empty.length === 0) continue;
          const dir = empty[next(empty.length)]!;
          overlay.set(dir, { path: dir, deleted: true, size: 0, mode: 0 });
          view = new TreeView(uploaded, overlay.values());
        }
        const expected = expectedTree(uploaded, overlay);
        const fresh = new TreeView(uploaded, overlay.values());
        const context = JSON.stringify({ round, step, uploaded, overlay: [...overlay.values()] });
        expect({ files: view.files(), dirs: view.dirs() }, context).toEqual(expected);
        expect({ files: fresh.files(), dirs: fresh.dirs() }, context).toEqual(expected);
        for (const dir of ["", ...expected.dirs])
          expect(view.children(dir), `${context} ${dir}`).toEqual(childrenOf(expected.files, expected.dirs, dir));
        const sizes = Object.fromEntries(expected.files.map((f) => [f, overlay.get(f)?.size ?? 1]));
        expect(Object.fromEntries([...view.info].map(([path, info]) => [path, info.size])), context).toEqual(sizes);
      }
    }
  });

  it("a directory emptied and then written in again brings back the uploaded empty ones under it", () => {
    const uploaded: UploadedTree = { files: [{ path: "a/x", size: 1, mode: 0o644 }], dirs: ["a", "a/e", "a/e/f"] };
    const view = new TreeView(uploaded, []);
    view.deleted("a/x");
    expect([view.dirs(), view.children("")]).toEqual([[], []]);
    view.written("a/y", 2, 0o644);
    expect([view.dirs(), view.children("a")]).toEqual([
      ["a", "a/e", "a/e/f"],
      [
        { name: "e", type: "dir" },
        { name: "y", type: "file" },
      ],
    ]);
    const overlay = new Map<string, OverlayEntry>([
      ["a/x", { path: "a/x", deleted: true, size: 0, mode: 0 }],
      ["a/y", { path: "a/y", deleted: false, size: 2, mode: 0o644 }],
    ]);
    expect(expectedTree(uploaded, overlay)).toEqual({ files: ["a/y"], dirs: ["a", "a/e", "a/e/f"] });
  });

  it("keeps 20,000 uploaded files current through 5,000 writes and 5,000 deletions", () => {
    const uploaded: UploadedTree = {
      files: Array.from({ length: 20_000 }, (_, i) => ({ path: `src/d${i % 100}/f${i}.ts`, size: 1, mode: 0o644 })),
      dirs: ["src", ...Array.from({ length: 100 }, (_, i) => `src/d${i}`)].sort(comparePaths),
    };
    const view = new TreeView(uploaded, []);
    expect(view.children("src")).toHaveLength(100);
    for (let i = 0; i < 5_000; i++) view.written(`new/n${i}`, 1, 0o644);
    for (let i = 0; i < 20_000; i++) if (i % 100 < 25) view.deleted(`src/d${i % 100}/f${i}.ts`);
    // The first 25 directories lost all their 200 files: gone; the other 75 lost none.
    expect([view.files().length, view.dirs().length, view.children("src").length, view.children("new").length]).toEqual([
      20_000, 77, 75, 5_000,
    ]);
    expect(view.dirs().slice(0, 3)).toEqual(["new", "src", "src/d25"]);
    expect(view.children("src/d24")).toEqual([]);
  });
});
