import type { Command, ExecResult } from "just-bash";
import { RE2JS } from "re2js";
import { diffFile } from "../workspace/changes";
import { comparePaths, parentOf } from "../workspace/paths";
import type { WorkspaceBase, WorkspaceFs } from "../workspace/workspace-fs";
import type { WorkspaceBashFs } from "./bash-fs";
import { formatStat, quotePath, relativePath, statSummary } from "./git-format";
import { changeOf, collapseUntracked, holdsAny, type Sides, type WorktreeState, worktreeState } from "./git-worktree";
import { classEnd, classPattern, literal } from "./glob-re2";
import { IgnoreRules } from "./workspace-walk";

/** just-bash is loaded on first use (bash.ts). */
type DefineCommand = typeof import("just-bash").defineCommand;

/** What the shell's git works on: the session's view, the snapshot under it, and the shell's filesystem over the view. */
export interface GitWorkspace {
  view: WorkspaceFs;
  base: WorkspaceBase | null;
  shell: WorkspaceBashFs;
  /** Where the shell mounts the workspace (`/workspace`). */
  mountPoint: string;
}

/** The branch `git status` names: a snapshot has none of its own. */
const BRANCH = "main";
const SUBCOMMANDS = "status, diff, ls-files, show HEAD:<path>, restore <path> (or checkout -- <path>) and rev-parse";
const NOT_A_REPOSITORY = "fatal: not a git repository (or any of the parent directories): .git";

/** One call of a subcommand: its arguments and where it runs. */
interface GitCall {
  args: string[];
  /** The current directory, from the workspace root ("" for the root). */
  cwd: string;
  sides: Sides;
  shell: WorkspaceBashFs;
  mountPoint: string;
  /** A path given on the command line, as a workspace path (from the root); outside the workspace: git's fatal error. */
  resolve(path: string): string;
}

/**
 * `git` over the session's workspace, for the commands agents run to see and undo their own changes:
 * the snapshot as uploaded is HEAD and the index (nothing is staged, there is no history), the
 * session's view is the working tree. `status`, `diff`, `ls-files`, `show HEAD:<path>` and
 * `rev-parse` write what git writes; `restore` (and `checkout -- <path>`) puts tracked files back
 * as the snapshot has them, a write like any other. Everything else is refused, saying what there is.
 */
export function gitCommand(defineCommand: DefineCommand, workspace: GitWorkspace): Command {
  return defineCommand("git", async (argv, ctx): Promise<ExecResult> => {
    const { view, base, shell, mountPoint } = workspace;
    const args = [...argv];
    // Global options that change nothing here.
    while (args[0] === "--no-pager" || args[0] === "-c" || args[0] === "--no-optional-locks") args.splice(0, args[0] === "-c" ? 2 : 1);
    let cwd = ctx.cwd;
    if (args[0] === "-C" && args.length > 1) {
      cwd = ctx.fs.resolvePath(cwd, args[1]!);
      args.splice(0, 2);
    }
    const inside = cwd === mountPoint || cwd.startsWith(`${mountPoint}/`);
    if (!base || !inside) return failure(NOT_A_REPOSITORY, 128);
    const signal = ctx.signal;
    const sides: Sides = {
      base,
      view,
      readBase: async (path) => {
        shell.chargeRead(base.stat(path)?.size ?? 0, `${mountPoint}/${path}`);
        return base.readFile(path, signal);
      },
      readView: (path) => shell.readFileBuffer(`/${path}`),
    };
    // What the command appended so far is part of the working tree.
    await shell.flushAppends();
    const resolve = (path: string): string => {
      // As the shell resolves it (`$PWD/x` and `/workspace/x` are the workspace's x); git refuses a path outside.
      const full = ctx.fs.resolvePath(cwd, path);
      if (full === mountPoint) return "";
      if (full.startsWith(`${mountPoint}/`)) return full.slice(mountPoint.length + 1);
      throw new GitError(`fatal: ${path}: '${path}' is outside repository at '${mountPoint}'`, 128);
    };
    const call: GitCall = { args: args.slice(1), cwd: cwd.slice(mountPoint.length + 1), sides, shell, mountPoint, resolve };
    const sub = args[0];
    try {
      switch (sub) {
        case "status":
          return await status(call);
        case "diff":
          return await diff(call);
        case "ls-files":
          return await lsFiles(call);
        case "show":
        case "cat-file":
          return await show(call, sub);
        case "restore":
        case "checkout":
          return await restore(call, sub);
        case "rev-parse":
          return revParse(call);
        case undefined:
          return failure(`usage: git <command> [<args>]\nThis shell's git has ${SUBCOMMANDS}.`, 1);
        default:
          return failure(
            `git: '${sub}' is not available in this shell. It has ${SUBCOMMANDS}, over the uploaded snapshot (HEAD; no history, nothing staged) ` +
              "and this session's changes (the working tree).",
            1,
          );
      }
    } catch (err) {
      if (err instanceof GitError) return failure(err.message, err.exitCode);
      return failure(`fatal: ${(err as Error).message}`, 128);
    }
  });
}

class GitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

function failure(message: string, exitCode: number): ExecResult {
  return { stdout: "", stderr: `${message}\n`, exitCode };
}

function ok(stdout: string, exitCode = 0): ExecResult {
  return { stdout, stderr: "", exitCode };
}

/**
 * Splits a subcommand's arguments into the options it knows (given with their value, if any) and
 * its pathspecs; an unknown option is git's usage error (exit 129).
 */
function parseArgs(call: GitCall, known: readonly string[]): { options: Map<string, string>; paths: string[]; revisions: string[] } {
  const options = new Map<string, string>();
  const paths: string[] = [];
  const revisions: string[] = [];
  let afterDashes = false;
  // Single-letter flags given together (`-sb`) are taken one by one, unless the whole is known (`-uall`).
  const split = call.args.flatMap((arg) =>
    /^-[a-zA-Z]{2,}$/.test(arg) && !known.includes(arg) ? [...arg.slice(1)].map((c) => `-${c}`) : [arg],
  );
  for (const arg of split) {
    if (afterDashes) paths.push(arg);
    else if (arg === "--") afterDashes = true;
    else if (arg.startsWith("-") && arg !== "-") {
      const eq = arg.indexOf("=");
      const name = eq > 0 ? arg.slice(0, eq) : arg;
      if (!known.includes(name)) throw new GitError(`error: unknown option \`${arg.replace(/^-+/, "")}'`, 129);
      options.set(name, eq > 0 ? arg.slice(eq + 1) : "");
    } else if (arg === "HEAD" || arg === "@") revisions.push(arg);
    else paths.push(arg);
  }
  return { options, paths, revisions };
}

/** How many arguments come after the first `--`. */
function pathsAfterDashes(args: readonly string[]): number {
  const at = args.indexOf("--");
  return at < 0 ? 0 : args.length - at - 1;
}

/** One pathspec, read: the path it names from the root, whether it has wildcards, whether it excludes. */
interface Pathspec {
  path: string;
  glob: boolean;
  exclude: boolean;
}

/**
 * A pathspec as git reads it: from the current directory, or from the root with `:/` or `:(top)`; `:!`,
 * `:^` and `:(exclude)` exclude what they match. Other magic is refused, as by a git without it.
 */
function readPathspec(call: GitCall, spec: string): Pathspec {
  let rest = spec;
  let exclude = false;
  let top = false;
  const magic = /^:\(([^)]*)\)/.exec(rest);
  if (magic) {
    for (const word of magic[1]!.split(",")) {
      if (word === "exclude") exclude = true;
      else if (word === "top") top = true;
      else throw new GitError(`fatal: Unimplemented pathspec magic '${word}' in '${spec}'`, 128);
    }
    rest = rest.slice(magic[0].length);
  } else if (rest.startsWith(":")) {
    let i = 1;
    for (; i < rest.length && "!^/".includes(rest[i]!); i++) {
      if (rest[i] === "/") top = true;
      else exclude = true;
    }
    rest = rest.slice(rest[i] === ":" ? i + 1 : i);
  }
  const path = top ? call.resolve(`${call.mountPoint}/${rest}`) : call.resolve(rest === "" ? "." : rest);
  return { path, glob: /[*?[]/.test(rest), exclude };
}

/** A matcher of workspace paths (from the root) for pathspecs given from `cwd`; every path without any. */
function pathspecMatcher(call: GitCall, specs: readonly string[]): (path: string) => boolean {
  if (specs.length === 0) return () => true;
  const read = specs.map((spec) => readPathspec(call, spec));
  const matcher = (list: Pathspec[]) => {
    // Plain paths in a set, looked up for the path and each of its directories: 100,000 operands over
    // 10,000 files was a billion comparisons and held the isolate past the timeout (hunt 131).
    const plain = new Set(list.filter((p) => !p.glob).map((p) => p.path));
    // On RE2: a pattern of many `*` is a model's to choose, and a backtracking engine's time on it is not bounded.
    const globs = list.filter((p) => p.glob).map((p) => RE2JS.compile(`${pathspecPattern(p.path)}(?:/.*)?`, RE2JS.DOTALL));
    return (path: string) => {
      if (plain.has("")) return true;
      for (let at = path; at !== ""; at = parentOf(at)) if (plain.has(at)) return true;
      return globs.some((pattern) => pattern.matches(path));
    };
  };
  const includes = read.filter((p) => !p.exclude);
  const included = includes.length > 0 ? matcher(includes) : () => true;
  const excluded = matcher(read.filter((p) => p.exclude));
  return (path) => included(path) && !excluded(path);
}

/** A pathspec's wildcards as RE2: git's `*` matches across `/` too, `?` one character, `[...]` a class. */
function pathspecPattern(spec: string): string {
  let out = "";
  for (let i = 0; i < spec.length; i++) {
    const c = spec[i]!;
    const close = c === "[" ? classEnd(spec, i) : -1;
    if (c === "*") out += ".*";
    else if (c === "?") out += ".";
    else if (close > 0) {
      out += classPattern(spec.slice(i + 1, close));
      i = close;
    } else out += literal(c);
  }
  return out;
}

/** The tree git compares with: the state filtered by pathspecs, the ignore rules loaded once. */
async function stateFor(call: GitCall, specs: readonly string[]): Promise<WorktreeState> {
  const rules = await IgnoreRules.load(call.sides.view);
  const state = await worktreeState(call.sides, rules);
  const match = pathspecMatcher(call, specs);
  return {
    changed: state.changed.filter((c) => match(c.path)),
    untracked: state.untracked.filter(match),
    ignored: state.ignored.filter(match),
  };
}

async function status(call: GitCall): Promise<ExecResult> {
  const { options, paths } = parseArgs(call, [
    "-s",
    "--short",
    "--porcelain",
    "-b",
    "--branch",
    "-u",
    "-uall",
    "-unormal",
    "-uno",
    "--untracked-files",
    "--ignored",
    "--no-renames",
    "--long",
  ]);
  const state = await stateFor(call, paths);
  const untrackedMode = options.has("-uall")
    ? "all"
    : options.has("-uno")
      ? "no"
      : (options.get("--untracked-files") ?? options.get("-u") ?? "normal") || "all";
  const untracked =
    untrackedMode === "no" ? [] : untrackedMode === "all" ? state.untracked : collapseUntracked(state.untracked, call.sides.base.files());
  // An ignored file is shown by the topmost directory that holds nothing tracked or untracked (`-uall`: each file).
  const ignored = !options.has("--ignored")
    ? []
    : untrackedMode === "all"
      ? state.ignored
      : collapseUntracked(state.ignored, [...call.sides.base.files(), ...state.untracked].sort(comparePaths));
  const porcelain = options.has("--porcelain");
  if ((porcelain || options.has("-s") || options.has("--short")) && !options.has("--long")) {
    // Short paths are from the current directory, porcelain ones from the root; both quote a space.
    const shown = (path: string) => quotePath(porcelain ? path : relativePath(path, call.cwd), true);
    const lines = [
      ...(options.has("-b") || options.has("--branch") ? [`## ${BRANCH}`] : []),
      ...state.changed.map((c) => `${c.deleted ? " D" : " M"} ${shown(c.path)}`),
      ...untracked.map((path) => `?? ${shown(path)}`),
      ...ignored.map((path) => `!! ${shown(path)}`),
    ];
    return ok(lines.map((line) => `${line}\n`).join(""));
  }
  const shown = (path: string) => quotePath(relativePath(path, call.cwd));
  let out = `On branch ${BRANCH}\n`;
  if (state.changed.length > 0) {
    const verb = state.changed.some((c) => c.deleted) ? "git add/rm" : "git add";
    out += `Changes not staged for commit:\n  (use "${verb} <file>..." to update what will be committed)\n`;
    out += '  (use "git restore <file>..." to discard changes in working directory)\n';
    for (const c of state.changed) out += `\t${c.deleted ? "deleted:    " : "modified:   "}${shown(c.path)}\n`;
    out += "\n";
  }
  if (untracked.length > 0) {
    out += 'Untracked files:\n  (use "git add <file>..." to include in what will be committed)\n';
    for (const path of untracked) out += `\t${shown(path)}\n`;
    out += "\n";
  }
  if (ignored.length > 0) {
    out += 'Ignored files:\n  (use "git add -f <file>..." to include in what will be committed)\n';
    for (const path of ignored) out += `\t${shown(path)}\n`;
    out += "\n";
  }
  if (state.changed.length > 0) out += 'no changes added to commit (use "git add" and/or "git commit -a")\n';
  else if (untracked.length > 0) out += 'nothing added to commit but untracked files present (use "git add" to track)\n';
  else if (untrackedMode === "no" && state.untracked.length > 0) out += "nothing to commit (use -u to show untracked files)\n";
  else out += "nothing to commit, working tree clean\n";
  return ok(out);
}

async function diff(call: GitCall): Promise<ExecResult> {
  const { options, paths, revisions } = parseArgs(call, [
    "--stat",
    "--numstat",
    "--shortstat",
    "--name-only",
    "--name-status",
    "--quiet",
    "--exit-code",
    "--cached",
    "--staged",
    "--no-color",
    "--color",
    "--no-ext-diff",
    "-p",
    "--patch",
  ]);
  if (revisions.length > 1) throw new GitError("fatal: this workspace has one commit, HEAD: there is nothing to compare it with", 128);
  // As git: an argument before `--` that names no file is taken for a revision, and there is only HEAD.
  for (const path of paths.slice(0, call.args.includes("--") ? paths.length - pathsAfterDashes(call.args) : paths.length)) {
    const resolved = call.resolve(path);
    if (
      /[*?[]/.test(path) ||
      call.sides.view.stat(resolved) ||
      call.sides.base.stat(resolved) ||
      holdsAny(call.sides.base.files(), `${resolved}/`)
    )
      continue;
    throw new GitError(
      `fatal: ambiguous argument '${path}': unknown revision or path not in the working tree.\n` +
        "Use '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'\n" +
        "(This workspace has one commit, HEAD: the snapshot as uploaded.)",
      128,
    );
  }
  // Nothing is ever staged: the index is HEAD.
  const changed = options.has("--cached") || options.has("--staged") ? [] : (await stateFor(call, paths)).changed;
  const quiet = options.has("--quiet");
  const status = (any: boolean) => (any && (quiet || options.has("--exit-code")) ? 1 : 0);
  if (quiet) return ok("", status(changed.length > 0));
  if (options.has("--name-only")) return ok(changed.map((c) => `${quotePath(c.path)}\n`).join(""), status(changed.length > 0));
  if (options.has("--name-status")) {
    return ok(changed.map((c) => `${c.deleted ? "D" : "M"}\t${quotePath(c.path)}\n`).join(""), status(changed.length > 0));
  }
  const diffs = [];
  for (const c of changed) {
    const change = await changeOf(call.sides, c.path, c.deleted);
    diffs.push({ change, diff: await diffFile(change, "show") });
  }
  const stats = diffs.map(({ change, diff }) => ({
    name: quotePath(change.path),
    added: diff.added,
    removed: diff.removed,
    binary: diff.binary ? { before: change.before?.bytes.byteLength ?? 0, after: change.after?.bytes.byteLength ?? 0 } : undefined,
  }));
  let out = "";
  if (options.has("--numstat")) {
    out += stats.map((s) => (s.binary ? `-\t-\t${s.name}\n` : `${s.added}\t${s.removed}\t${s.name}\n`)).join("");
  }
  if (options.has("--stat")) out += formatStat(stats);
  else if (options.has("--shortstat")) {
    out += statSummary(
      stats.length,
      stats.reduce((n, s) => n + s.added, 0),
      stats.reduce((n, s) => n + s.removed, 0),
    );
  }
  const statOnly = options.has("--numstat") || options.has("--stat") || options.has("--shortstat");
  if (!statOnly || options.has("-p") || options.has("--patch")) {
    // After a stat, a blank line before the patch.
    if (statOnly && diffs.length > 0) out += "\n";
    out += diffs.map((d) => d.diff.text).join("");
  }
  return ok(out, status(changed.length > 0));
}

async function lsFiles(call: GitCall): Promise<ExecResult> {
  const { options, paths } = parseArgs(call, [
    "-c",
    "--cached",
    "-m",
    "--modified",
    "-d",
    "--deleted",
    "-o",
    "--others",
    "--exclude-standard",
    "-z",
  ]);
  // Listings are of the current directory, from it (as git's).
  const specs = paths.length > 0 ? paths : ["."];
  const match = pathspecMatcher(call, specs);
  const others = options.has("-o") || options.has("--others");
  const modified = options.has("-m") || options.has("--modified");
  const deleted = options.has("-d") || options.has("--deleted");
  const cached = options.has("-c") || options.has("--cached") || !(others || modified || deleted);
  const listed = new Set<string>();
  if (cached) for (const path of call.sides.base.files()) if (match(path)) listed.add(path);
  if (others || modified || deleted) {
    const state = await stateFor(call, specs);
    if (others) for (const path of [...state.untracked, ...(options.has("--exclude-standard") ? [] : state.ignored)]) listed.add(path);
    // A deleted file is modified too, to git.
    for (const c of state.changed) if (modified || (deleted && c.deleted)) listed.add(c.path);
  }
  const end = options.has("-z") ? "\0" : "\n";
  const shown = (path: string) => (end === "\0" ? relativePath(path, call.cwd) : quotePath(relativePath(path, call.cwd)));
  return ok(
    [...listed]
      .sort(comparePaths)
      .map((path) => `${shown(path)}${end}`)
      .join(""),
  );
}

/** `git show HEAD:<path>` and `git cat-file -p HEAD:<path>`: a file as the snapshot has it. */
async function show(call: GitCall, sub: "show" | "cat-file"): Promise<ExecResult> {
  const args = sub === "cat-file" && call.args[0] === "-p" ? call.args.slice(1) : call.args;
  const object = args.length === 1 ? /^(?:HEAD|@)?:(.*)$/.exec(args[0]!) : null;
  if (!object) {
    throw new GitError(
      `git ${sub}: this shell's git shows files as the snapshot has them: git ${sub}${sub === "cat-file" ? " -p" : ""} HEAD:<path> (there are no commits to show)`,
      1,
    );
  }
  const spec = object[1]!;
  // `HEAD:./x` and `HEAD:../x` are from the current directory; `HEAD:x` from the root.
  const path = /^\.\.?(\/|$)/.test(spec) ? call.resolve(spec) : call.resolve(`${call.mountPoint}/${spec}`);
  const stat = call.sides.base.stat(path);
  if (stat?.type !== "file") {
    const exists = call.sides.view.stat(path) !== null;
    throw new GitError(
      exists ? `fatal: path '${path}' exists on disk, but not in 'HEAD'` : `fatal: path '${path}' does not exist in 'HEAD'`,
      128,
    );
  }
  const bytes = await call.sides.readBase(path);
  let stdout = "";
  for (let i = 0; i < bytes.byteLength; i += 0x8000) stdout += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { stdout, stderr: "", exitCode: 0, stdoutEncoding: "binary" };
}

/** `git restore <paths>` and `git checkout [--] <paths>`: tracked files back as the snapshot has them. */
async function restore(call: GitCall, sub: "restore" | "checkout"): Promise<ExecResult> {
  const known = sub === "restore" ? ["-W", "--worktree", "--source", "-s"] : ["-f", "--force"];
  const { options, paths, revisions } = parseArgs(call, known);
  const source = options.get("--source") ?? options.get("-s");
  if (source !== undefined && source !== "HEAD") throw new GitError(`fatal: could not resolve '${source}': the only commit is HEAD`, 128);
  if (sub === "checkout" && paths.length === 0) {
    throw new GitError(
      revisions.length > 0
        ? `Your branch is the snapshot as uploaded: there is nothing to check out. To put files back: git checkout -- <path>`
        : "git checkout: this shell's git only puts files back as the snapshot has them: git checkout -- <path> (there are no branches)",
      1,
    );
  }
  if (paths.length === 0) throw new GitError("fatal: you must specify path(s) to restore", 128);
  const state = await stateFor(call, []);
  const restored: string[] = [];
  for (const spec of paths) {
    const match = pathspecMatcher(call, [spec]);
    // Untracked files are not known to git: it has nothing to put back there.
    if (!knownToGit(call, spec, match)) throw new GitError(`error: pathspec '${spec}' did not match any file(s) known to git`, 1);
    for (const c of state.changed) if (match(c.path) && !restored.includes(c.path)) restored.push(c.path);
  }
  for (const path of restored) {
    const stat = call.sides.base.stat(path)!;
    await call.shell.restore(`/${path}`, await call.sides.readBase(path), stat.mode);
  }
  return ok("");
}

/** Whether a pathspec names a tracked file: a plain path by a lookup, a pattern by a walk of the tracked files. */
function knownToGit(call: GitCall, spec: string, match: (path: string) => boolean): boolean {
  const read = readPathspec(call, spec);
  if (read.glob || read.exclude) return call.sides.base.files().some(match);
  return read.path === "" || call.sides.base.stat(read.path)?.type === "file" || holdsAny(call.sides.base.files(), `${read.path}/`);
}

function revParse(call: GitCall): ExecResult {
  const answers: Record<string, string> = {
    "--show-toplevel": call.mountPoint,
    "--is-inside-work-tree": "true",
    "--show-prefix": call.cwd === "" ? "" : `${call.cwd}/`,
    "--show-cdup": call.cwd === "" ? "" : call.cwd.replace(/[^/]+/g, "..").concat("/"),
    "--abbrev-ref": BRANCH,
  };
  let out = "";
  for (const arg of call.args) {
    if (arg === "HEAD" && call.args.includes("--abbrev-ref")) continue;
    const answer = answers[arg];
    if (answer === undefined) {
      throw new GitError(
        `git rev-parse: '${arg}' is not available in this shell (it has ${Object.keys(answers).join(", ")}): there are no commits`,
        128,
      );
    }
    out += `${answer}\n`;
  }
  return ok(out);
}
