// Packs a directory for upload the way git would see it, and the result is a tar.gz that POST
// /api/workspaces accepts. Inside a git work tree git itself lists the files (`git ls-files
// --cached --others --exclude-standard`: every .gitignore from the repository's root down,
// info/exclude, worktrees and submodules as git reads them); elsewhere the directory is walked with
// its .gitignore files and .git/info/exclude. Either way .git, node_modules/ and .env* are left out
// unless asked for.
import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { access, lstat, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import { createGzip } from "node:zlib";
import ignore from "ignore";
import { packTar } from "modern-tar/fs";

const execFileAsync = promisify(execFile);

/** Never packed unless asked for: the repository's own data (a directory, or a worktree's file), installed dependencies, secrets. */
export const DEFAULT_EXCLUDES = { git: ".git", nodeModules: "node_modules/", env: ".env*" };

/**
 * @typedef {object} PackOptions
 * @property {boolean} [includeEnv] pack .env* files too
 * @property {boolean} [includeNodeModules] pack node_modules/ too
 * @property {boolean} [includeIgnored] pack what .gitignore rules leave out too (the directory is walked; the three above still apply)
 * @property {boolean} [useGit] ask git for the list when the directory is in a work tree (default true)
 */

/**
 * @typedef {object} PackedFile
 * @property {string} path relative to the root, `/` separated
 * @property {string} source absolute path on disk
 * @property {number} size bytes
 * @property {number} mode permission bits
 */

/** @typedef {{ path: string; reason: string }} Skipped */

/**
 * The rules of one .gitignore: `dir` is where it sits, relative to the root ("" for the root).
 * @typedef {{ dir: string; ig: import("ignore").Ignore }} Rules
 */

/**
 * The files to pack, in path order. Symbolic links, special files, nested repositories, unreadable
 * files and names the archive cannot carry are left out (a workspace holds regular files only) and
 * reported in `skipped`.
 * @param {string} root
 * @param {PackOptions} [options]
 * @returns {Promise<{ files: PackedFile[]; skipped: Skipped[] }>}
 */
export async function listWorkspaceFiles(root, options = {}) {
  // Exactly these names, in their case, as the docs name them.
  const defaults = ignore({ ignorecase: false }).add(DEFAULT_EXCLUDES.git);
  if (!options.includeNodeModules) defaults.add(DEFAULT_EXCLUDES.nodeModules);
  if (!options.includeEnv) defaults.add(DEFAULT_EXCLUDES.env);
  const listed = options.useGit === false || options.includeIgnored ? null : await gitListing(root);
  // Not a work tree: the directory walked with its own rules. In one, where git lists nothing the
  // directory is empty or git ignores all of it; walking it with its own rules only would drop the
  // parents' rules and send what they keep home (a secrets/ directory, hunt 77): it is refused
  // unless asked for (a build output named on purpose).
  const found =
    listed === null ? await walkTree(root, defaults, !options.includeIgnored) : await fromGit(root, listed.names, defaults, listed.unfit);
  if (listed !== null && listed.names.length === 0 && listed.unfit.length === 0) {
    const ignored = await walkTree(root, defaults, false);
    if (ignored.files.length > 0) {
      throw new Error(
        `git ignores every file in ${root} (${ignored.files.length} of them, such as ${ignored.files[0]?.path}): nothing was sent. ` +
          "Give --include-ignored to pack them anyway (.git, node_modules/ and .env* stay out unless asked for)",
      );
    }
  }
  /** @type {PackedFile[]} */
  const files = [];
  const skipped = found.skipped;
  for (const file of found.files) {
    const unfit = unfitName(file.path) ?? (await unreadable(file.source));
    if (unfit) skipped.push({ path: file.path, reason: unfit });
    else files.push(file);
  }
  files.sort((a, b) => compare(a.path, b.path));
  skipped.sort((a, b) => compare(a.path, b.path));
  return { files, skipped };
}

/**
 * Packs the directory as a tar.gz in memory.
 * @param {string} root
 * @param {PackOptions} [options]
 * @returns {Promise<{ archive: Buffer; files: PackedFile[]; bytes: number; skipped: Skipped[] }>}
 */
export async function packWorkspace(root, options = {}) {
  const { files, skipped } = await listWorkspaceFiles(root, options);
  /** @type {import("modern-tar/fs").TarSource[]} */
  const sources = files.map((f) => ({ type: "file", source: f.source, target: f.path, mode: f.mode, mtime: new Date(0) }));
  /** @type {Buffer[]} */
  const chunks = [];
  // pipeline, not pipe: an error of either stream (a file that went away meanwhile) rejects here.
  await pipeline(packTar(sources), createGzip(), async (/** @type {AsyncIterable<Buffer>} */ gzipped) => {
    for await (const chunk of gzipped) chunks.push(chunk);
  });
  return { archive: Buffer.concat(chunks), files, bytes: files.reduce((sum, f) => sum + f.size, 0), skipped };
}

/**
 * The paths git lists under `root`, relative to it, when `root` is inside a work tree (those whose
 * names are not UTF-8 apart, as skipped); null when it is not, or git cannot be run.
 * @param {string} root
 * @returns {Promise<{ names: string[]; unfit: Skipped[] } | null>}
 */
async function gitListing(root) {
  let stdout;
  try {
    ({ stdout } = await execFileAsync("git", ["-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      encoding: "buffer",
      maxBuffer: 512 * 1024 * 1024,
    }));
  } catch {
    return null;
  }
  /** @type {string[]} */
  const names = [];
  /** @type {Skipped[]} */
  const unfit = [];
  for (let start = 0; start < stdout.length; ) {
    const end = stdout.indexOf(0, start);
    const name = stdout.subarray(start, end < 0 ? stdout.length : end);
    start = end < 0 ? stdout.length : end + 1;
    if (name.length === 0) continue;
    const decoded = utf8(name);
    if (decoded === null) unfit.push({ path: name.toString("utf8"), reason: NOT_UTF8 });
    else names.push(decoded);
  }
  return { names, unfit };
}

/** Why a name the disk holds is left out when its bytes are not UTF-8. */
const NOT_UTF8 = "a name that is not UTF-8 (a workspace's names are UTF-8)";

/** The UTF-8 text of a name's bytes, or null when they are not UTF-8. @param {Uint8Array} bytes */
function utf8(bytes) {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Git's list, minus the default exclusions, as files on disk: a path git still has in its index but
 * that is gone from the disk is left out; a directory (a submodule, a repository inside this one)
 * is skipped, as git does not look inside it.
 * @param {string} root
 * @param {string[]} listed
 * @param {import("ignore").Ignore} defaults
 * @param {Skipped[]} unfit names git listed that are skipped already
 */
async function fromGit(root, listed, defaults, unfit) {
  /** @type {PackedFile[]} */
  const files = [];
  /** @type {Skipped[]} */
  const skipped = unfit.filter((s) => !defaults.ignores(s.path));
  for (const entry of listed) {
    const relPath = entry.endsWith("/") ? entry.slice(0, -1) : entry;
    if (defaults.ignores(entry)) continue;
    const source = path.join(root, relPath);
    const stat = await lstat(source).catch(() => null);
    if (stat === null) continue;
    if (stat.isFile()) files.push({ path: relPath, source, size: stat.size, mode: stat.mode & 0o777 });
    else skipped.push({ path: relPath, reason: kindOf(stat) });
  }
  return { files, skipped };
}

/**
 * Outside a work tree: the directory walked with its .gitignore files (deeper ones winning) and
 * .git/info/exclude. A directory is entered only when not ignored, so each file judges the path
 * itself, as git does (a directory excluded at one level and re-included deeper keeps its files);
 * a repository inside it is skipped, as `fromGit` skips it.
 * @param {string} root
 * @param {import("ignore").Ignore} defaults
 * @param {boolean} [gitignore] apply the .gitignore files (false: only `defaults`)
 */
async function walkTree(root, defaults, gitignore = true) {
  /** @type {PackedFile[]} */
  const files = [];
  /** @type {Skipped[]} */
  const skipped = [];

  /**
   * @param {string} rel the directory, relative to the root
   * @param {Rules[]} chain the rules in force there, outermost first
   */
  async function walk(rel, chain) {
    const abs = path.join(root, rel);
    let entries;
    try {
      // Names as bytes: one that is not UTF-8 would read as another name (U+FFFD), which the disk does not hold.
      entries = (await readdir(abs, { withFileTypes: true, encoding: "buffer" }))
        .map((entry) => ({ entry, name: utf8(entry.name) }))
        .sort((a, b) => compare(a.name ?? "", b.name ?? ""));
    } catch (err) {
      // A directory git could not open either: it says so and goes on.
      skipped.push({ path: rel, reason: `not readable (${/** @type {NodeJS.ErrnoException} */ (err).code})` });
      return;
    }
    for (const { entry, name } of entries) {
      if (name === null) {
        skipped.push({ path: rel === "" ? entry.name.toString("utf8") : `${rel}/${entry.name.toString("utf8")}`, reason: NOT_UTF8 });
        continue;
      }
      const relPath = rel === "" ? name : `${rel}/${name}`;
      const isDir = entry.isDirectory();
      if (defaults.ignores(isDir ? `${relPath}/` : relPath) || (gitignore && ignoredBy(chain, relPath, isDir))) continue;
      if (isDir) {
        // A repository of its own (a `.git` directory, or a submodule's `.git` file): git stages it
        // as one entry and never looks inside, so its files stay home, listed as the git mode lists them.
        if (await holdsRepository(path.join(root, relPath))) {
          skipped.push({ path: relPath, reason: NESTED_REPOSITORY });
          continue;
        }
        const rules = await readRules(path.join(root, relPath, ".gitignore"));
        await walk(relPath, rules.length > 0 ? [...chain, { dir: relPath, ig: ignore({ ignorecase: false }).add(rules) }] : chain);
        continue;
      }
      const source = path.join(abs, name);
      const stat = await lstat(source);
      if (stat.isFile()) files.push({ path: relPath, source, size: stat.size, mode: stat.mode & 0o777 });
      else skipped.push({ path: relPath, reason: kindOf(stat) });
    }
  }

  const rootRules = [...(await readRules(path.join(root, ".git", "info", "exclude"))), ...(await readRules(path.join(root, ".gitignore")))];
  await walk("", [{ dir: "", ig: ignore({ ignorecase: false }).add(rootRules) }]);
  return { files, skipped };
}

const NESTED_REPOSITORY = "a git submodule or a repository inside this one";

/** Whether a directory has a `.git` of its own (a directory, or the file a submodule or worktree has). @param {string} dir */
async function holdsRepository(dir) {
  return (await lstat(path.join(dir, ".git")).catch(() => null)) !== null;
}

/** @param {import("node:fs").Stats} stat */
function kindOf(stat) {
  if (stat.isSymbolicLink()) return "symbolic link";
  if (stat.isDirectory()) return NESTED_REPOSITORY;
  return "not a regular file";
}

/**
 * Why the tar writer cannot carry a name as it is, or null: it reads `\` as a separator and drops a
 * leading drive letter (`C:`), so such a name would land on another path, maybe another file's.
 * @param {string} relPath
 */
function unfitName(relPath) {
  if (relPath.includes("\\")) return "a backslash in the name (the archive would read it as a directory separator)";
  if (/^[A-Za-z]:/.test(relPath)) return "a drive letter at the start of the name (the archive would drop it)";
  return null;
}

/** Why a file cannot be packed, or null when it can be read. @param {string} source */
async function unreadable(source) {
  try {
    await access(source, constants.R_OK);
    return null;
  } catch (err) {
    return `not readable (${/** @type {NodeJS.ErrnoException} */ (err).code})`;
  }
}

/**
 * A .gitignore's rules applied to a path itself. The library's `test` also judges the path's
 * parents by the same file, which overrides a deeper file's re-inclusion of a parent; the walk
 * enters only directories that are not ignored. The rule list's own `test` is what the library
 * calls per path (not in its types; the version is pinned and a test covers it).
 * @param {import("ignore").Ignore} ig
 * @returns {(path: string) => { ignored: boolean; unignored: boolean }}
 */
function ownRules(ig) {
  const rules = /** @type {{ _rules?: { test?: (path: string, mode: string) => { ignored: boolean; unignored: boolean } } }} */ (
    /** @type {unknown} */ (ig)
  )._rules;
  const test = rules?.test;
  if (typeof test !== "function") throw new Error("the ignore library no longer exposes its rule list");
  return (path) => test.call(rules, path, "regex");
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
    const result = ownRules(ig)(isDir ? `${inner}/` : inner);
    if (result.ignored) return true;
    if (result.unignored) return false;
  }
  return false;
}

/**
 * The lines of an ignore file, or none when there is no readable one. As git: a leading BOM is not
 * part of the first rule, and a symbolic link is not followed (it could point out of the tree).
 * @param {string} file
 * @returns {Promise<string[]>}
 */
async function readRules(file) {
  try {
    if ((await lstat(file)).isSymbolicLink()) return [];
    return (await readFile(file, "utf8")).replace(/^\uFEFF/, "").split(/\r?\n/);
  } catch {
    // Missing, a directory, unreadable: no rules, as git goes on without them.
    return [];
  }
}

/** Byte order of names, as git sorts them. @param {string} a @param {string} b */
function compare(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}
