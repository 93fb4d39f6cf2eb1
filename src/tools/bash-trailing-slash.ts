import type { IFileSystem } from "just-bash";

/**
 * Which arguments of each filesystem call are paths the shell resolved (a symlink's target is text,
 * not resolved, and `cp`/`mv` take two).
 */
const PATH_ARGUMENTS: Readonly<Record<string, readonly number[]>> = {
  readFile: [0],
  readFileBuffer: [0],
  readFileBytes: [0],
  writeFile: [0],
  appendFile: [0],
  exists: [0],
  stat: [0],
  lstat: [0],
  mkdir: [0],
  readdir: [0],
  readdirWithFileTypes: [0],
  rm: [0],
  cp: [0, 1],
  mv: [0, 1],
  chmod: [0],
  symlink: [1],
  link: [0, 1],
  readlink: [0],
  realpath: [0],
  utimes: [0],
};

/**
 * `fs` holding to POSIX's rule that a path ending in "/" names a directory. just-bash resolves
 * `a.txt/` to `a.txt` before any call of ours, so `echo x > a.txt/` overwrote a file,
 * `mv a.txt nodir/` renamed it to a file `nodir` (the next such move overwrote that) and
 * `cp b.txt newdir/` made a file `newdir` (hunt 75). Here the slash survives resolution, and a call
 * on such a path goes through only when a directory is there (or, for `mkdir`, a directory is made;
 * for `cp`/`mv`, a directory is the source); otherwise it fails as on a disk: a write with EISDIR,
 * other calls over a file with ENOTDIR, and `exists` is false.
 */
export function trailingSlashes<T extends IFileSystem>(fs: T): T {
  const kind = (path: string) =>
    fs.stat(path).then(
      (s) => (s.isDirectory ? "dir" : "file"),
      () => null,
    );
  return new Proxy(fs, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      const call = (args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(target, args);
      if (property === "resolvePath") {
        return (base: string, path: string) => {
          const resolved = call([base, path]) as string;
          return endsInSlash(path) && resolved !== "/" ? `${resolved}/` : resolved;
        };
      }
      const positions = typeof property === "string" ? PATH_ARGUMENTS[property] : undefined;
      if (!positions) return value.bind(target);
      const op = property as string;
      return async (...args: unknown[]) => {
        if (!positions.some((i) => endsInSlash(args[i]))) return call(args);
        for (const i of positions) {
          const path = args[i];
          if (!endsInSlash(path)) continue;
          const bare = path.replace(/\/+$/, "") || "/";
          const found = await kind(bare);
          if (found !== "dir" && op === "exists") return false;
          // What opening such a path for writing says on a disk, over a file or nothing ("Is a directory").
          if (found !== "dir" && (op === "writeFile" || op === "appendFile")) {
            throw new Error(`EISDIR: illegal operation on a directory, open '${path}'`);
          }
          if (found === "file") throw new Error(`ENOTDIR: not a directory, ${op} '${path}'`);
          // A new name that ends in "/" can be a directory's, not a file's.
          if (found === null && (op === "cp" || op === "mv") && i === 1 && (await kind(String(args[0]))) !== "dir") {
            throw new Error(`ENOTDIR: not a directory, ${op} '${String(args[0])}' -> '${path}'`);
          }
          args[i] = bare;
        }
        return call(args);
      };
    },
  });
}

function endsInSlash(path: unknown): path is string {
  return typeof path === "string" && path.length > 1 && path.endsWith("/");
}
