// Packs a directory for upload the way git would see it: .gitignore files (at every level, deeper
// ones winning) and .git/info/exclude are honoured, and .git/, node_modules/ and .env* are left out
// unless asked for. The result is a tar.gz that POST /api/workspaces accepts.
import { lstat, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { buffer } from "node:stream/consumers";
import { createGzip } from "node:zlib";
import ignore from "ignore";
import { packTar } from "modern-tar/fs";

/** Never packed unless asked for: the repository's own data, installed dependencies, secrets. */
export const DEFAULT_EXCLUDES = { git: ".git/", nodeModules: "node_modules/", env: ".env*" };

/**
 * @typedef {object} PackOptions
 * @property {boolean} [includeEnv] pack .env* files too
 * @property {boolean} [includeNodeModules] pack node_modules/ too
 */

/**
 * @typedef {object} PackedFile
 * @property {string} path relative to the root, `/` separated
 * @property {string} source absolute path on disk
 * @property {number} size bytes
 * @property {number} mode permission bits
 */

/**
 * The rules of one .gitignore: `dir` is where it sits, relative to the root ("" for the root).
 * @typedef {{ dir: string; ig: import("ignore").Ignore }} Rules
 */

/**
 * The files to pack, in path order. Symbolic links and special files are left out (a workspace
 * holds regular files only) and reported in `skipped`.
 * @param {string} root
 * @param {PackOptions} [options]
 * @returns {Promise<{ files: PackedFile[]; skipped: { path: string; reason: string }[] }>}
 */
export async function listWorkspaceFiles(root, options = {}) {
  const defaults = ignore().add(DEFAULT_EXCLUDES.git);
  if (!options.includeNodeModules) defaults.add(DEFAULT_EXCLUDES.nodeModules);
  if (!options.includeEnv) defaults.add(DEFAULT_EXCLUDES.env);
  /** @type {PackedFile[]} */
  const files = [];
  /** @type {{ path: string; reason: string }[]} */
  const skipped = [];

  /**
   * @param {string} rel the directory, relative to the root
   * @param {Rules[]} chain the rules in force there, outermost first
   */
  async function walk(rel, chain) {
    const abs = path.join(root, rel);
    const entries = (await readdir(abs, { withFileTypes: true })).sort((a, b) => compare(a.name, b.name));
    for (const entry of entries) {
      const relPath = rel === "" ? entry.name : `${rel}/${entry.name}`;
      const isDir = entry.isDirectory();
      if (defaults.ignores(isDir ? `${relPath}/` : relPath) || ignoredBy(chain, relPath, isDir)) continue;
      if (isDir) {
        const rules = await readRules(path.join(root, relPath, ".gitignore"));
        await walk(relPath, rules.length > 0 ? [...chain, { dir: relPath, ig: ignore({ ignorecase: false }).add(rules) }] : chain);
        continue;
      }
      const source = path.join(abs, entry.name);
      const stat = await lstat(source);
      if (stat.isFile()) files.push({ path: relPath, source, size: stat.size, mode: stat.mode & 0o777 });
      else skipped.push({ path: relPath, reason: stat.isSymbolicLink() ? "symbolic link" : "not a regular file" });
    }
  }

  const rootRules = [...(await readRules(path.join(root, ".git", "info", "exclude"))), ...(await readRules(path.join(root, ".gitignore")))];
  await walk("", [{ dir: "", ig: ignore({ ignorecase: false }).add(rootRules) }]);
  return { files, skipped };
}

/**
 * Packs the directory as a tar.gz in memory.
 * @param {string} root
 * @param {PackOptions} [options]
 * @returns {Promise<{ archive: Buffer; files: PackedFile[]; bytes: number; skipped: { path: string; reason: string }[] }>}
 */
export async function packWorkspace(root, options = {}) {
  const { files, skipped } = await listWorkspaceFiles(root, options);
  /** @type {import("modern-tar/fs").TarSource[]} */
  const sources = files.map((f) => ({ type: "file", source: f.source, target: f.path, mode: f.mode, mtime: new Date(0) }));
  const archive = await buffer(packTar(sources).pipe(createGzip()));
  return { archive, files, bytes: files.reduce((sum, f) => sum + f.size, 0), skipped };
}

/**
 * Git's precedence: the deepest .gitignore that says anything about the path decides.
 * @param {Rules[]} chain
 * @param {string} relPath
 * @param {boolean} isDir
 */
function ignoredBy(chain, relPath, isDir) {
  for (let i = chain.length - 1; i >= 0; i--) {
    const { dir, ig } = /** @type {Rules} */ (chain[i]);
    const inner = dir === "" ? relPath : relPath.slice(dir.length + 1);
    const result = ig.test(isDir ? `${inner}/` : inner);
    if (result.ignored) return true;
    if (result.unignored) return false;
  }
  return false;
}

/**
 * The lines of an ignore file, or none when it does not exist.
 * @param {string} file
 * @returns {Promise<string[]>}
 */
async function readRules(file) {
  try {
    return (await readFile(file, "utf8")).split(/\r?\n/);
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code === "ENOENT" || /** @type {NodeJS.ErrnoException} */ (err).code === "ENOTDIR")
      return [];
    throw err;
  }
}

/** Byte order of names, as git sorts them. @param {string} a @param {string} b */
function compare(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}
