import type { CommandName } from "just-bash";
import { z } from "zod";
import {
  BASH_DEFAULT_TIMEOUT_MS,
  BASH_MAX_COMMANDS,
  BASH_MAX_LOOP_ITERATIONS,
  BASH_MAX_OUTPUT_BYTES_PER_COMMAND,
  BASH_MAX_READ_BYTES,
  BASH_MAX_TIMEOUT_MS,
  BASH_MAX_TRAVERSAL_OPERATIONS,
  BASH_REGEX_STEPS_PER_MS,
  MAX_PATH_DEPTH,
  TOOL_OUTPUT_MAX_BYTES,
  TOOL_OUTPUT_MAX_LINES,
} from "../domain/limits";
import { DeviceFs } from "./bash-devices";
import { readsCounted, WorkspaceBashFs } from "./bash-fs";
import { yieldingFs } from "./bash-fs-turns";
import { gitCommand } from "./bash-git";
import { grepCommand } from "./bash-grep";
import { findCommand, lnCommand, lsCommand } from "./bash-guards";
import { type StepDeadline, withStepDeadline } from "./bash-step-deadline";
import { teeCommand } from "./bash-tee";
import { trailingSlashes } from "./bash-trailing-slash";
import { type OutputBudget, outputLimit, type Tool, ToolError } from "./tool";
import { formatSize, truncateTail, withNotices } from "./truncate";

/** Output shown to the model: the last 2000 lines / 50 KB of stdout followed by stderr. */
export const BASH_MAX_OUTPUT_LINES = TOOL_OUTPUT_MAX_LINES;
export const BASH_MAX_OUTPUT_BYTES = TOOL_OUTPUT_MAX_BYTES;
/** What the shell may produce at all before it stops the command (just-bash maxOutputSize). */
export const BASH_MAX_CAPTURED_OUTPUT_BYTES = BASH_MAX_OUTPUT_BYTES_PER_COMMAND;
/** Scratch space in /tmp, discarded after each command. */
export const BASH_MAX_SCRATCH_BYTES = 8 * 1024 * 1024;
/** Live memory just-bash may reserve; the hardened profile's 64 MiB is half an isolate. */
export const BASH_MAX_LIVE_BYTES = 32 * 1024 * 1024;
/** just-bash's own deadline comes this long after our abort, as a backstop for commands that ignore the signal. */
export const BASH_DEADLINE_GRACE_MS = 1_000;
/** Where the workspace is mounted; commands start there. */
export const BASH_WORKSPACE_DIR = "/workspace";

/**
 * Commands of the just-bash browser bundle we leave out: they fail in workerd (tar, gzip family
 * need Node modules; html-to-markdown needs a DOM), need a database engine (sqlite3), or run
 * without a bound on their work (diff: two 12,000-line files that differ everywhere held the isolate
 * for 25 s; the session's /changes, bounded, shows what a run changed).
 */
export const BASH_EXCLUDED_COMMANDS = ["tar", "gzip", "gunzip", "zcat", "sqlite3", "html-to-markdown", "diff"] as const;
/** Common commands that do not exist in this shell (told to the model up front; a test checks each). */
export const BASH_UNAVAILABLE_COMMANDS = [
  ...BASH_EXCLUDED_COMMANDS,
  "yq",
  "xan",
  "curl",
  "wget",
  "python3",
  "python",
  "node",
  "npm",
  "npx",
  "pnpm",
  "yarn",
  "pip",
  "make",
  "gcc",
  "ssh",
  "sudo",
] as const;

export const BashParams = z.strictObject({
  command: z.string().min(1).describe("Bash command line to run in the workspace directory"),
  timeoutMs: z
    .number()
    .int()
    .min(1)
    .max(BASH_MAX_TIMEOUT_MS)
    .optional()
    .describe(`Timeout in milliseconds (default ${BASH_DEFAULT_TIMEOUT_MS}, max ${BASH_MAX_TIMEOUT_MS})`),
});
export type BashParams = z.infer<typeof BashParams>;

/** bash's description for a run whose results are cut at `maxOutputBytes` (see outputLimit). */
function bashDescription(budget: OutputBudget): string {
  return (
    `Run a command in a simulated bash shell (just-bash) whose current directory ${BASH_WORKSPACE_DIR} is the workspace ` +
    "root, so relative paths match the other tools. Provides the usual text tools (ls, cat, head, tail, grep, rg, find, " +
    "sed, awk, sort, uniq, wc, cut, tr, xargs, jq, ...), pipes and redirects, and git status, diff, ls-files, show HEAD:<path> and " +
    "restore over the workspace (HEAD is the workspace as uploaded, the working tree this session's changes; no history, nothing to " +
    "commit). No network and no real " +
    `processes; not available: ${BASH_UNAVAILABLE_COMMANDS.join(", ")}. File writes go to this session's overlay and ` +
    `only when the run allows writes (otherwise they fail with EROFS); /tmp is scratch space (${formatSize(BASH_MAX_SCRATCH_BYTES)}) ` +
    `discarded after the command. Timeout ${BASH_DEFAULT_TIMEOUT_MS / 1000}s by default (timeoutMs, max ${BASH_MAX_TIMEOUT_MS / 1000}s). ` +
    `One call runs at most ${count(BASH_MAX_COMMANDS)} commands (each pass of a loop body counts) and ${count(BASH_MAX_LOOP_ITERATIONS)} passes ` +
    "of a loop or numbers from seq; for more, work in batches over several calls or use one command over many files " +
    "(grep -r, sed -i on several files, xargs) instead of a loop per item. " +
    `Output (stdout, then stderr) is truncated to the last ${BASH_MAX_OUTPUT_LINES} lines or ${formatSize(outputLimit(BASH_MAX_OUTPUT_BYTES, budget))}.`
  );
}

/**
 * Runs a command in just-bash, a simulated bash (a TypeScript interpreter, no processes, no
 * network) over the same workspace view as the other tools. Output is tail-truncated like pi's.
 */
export const bashTool: Tool<BashParams> = {
  name: "bash",
  description: bashDescription({}),
  describe: bashDescription,
  parameters: BashParams,
  mutates: false,
  needsBash: true,
  async execute(args, ctx) {
    const { fs, signal, allowWrite } = ctx;
    const timeoutMs = args.timeoutMs ?? BASH_DEFAULT_TIMEOUT_MS;
    const { Bash, InMemoryFs, MountableFs, getCommandNames, defineCommand } = await loadJustBash();
    const scratch = new InMemoryFs({}, { maxTotalBytes: BASH_MAX_SCRATCH_BYTES });
    scratch.mkdirSync("/tmp", { recursive: true });
    // The run's abort or the command's timeout: what stops the command, and the workspace's long walks.
    const timeout = new AbortController();
    const stop = AbortSignal.any([signal, timeout.signal]);
    const workspace = new WorkspaceBashFs(fs, allowWrite, stop, BASH_WORKSPACE_DIR);
    // Reads of /tmp count against the command's read budget too, but a copy or move out of it is a write, counted as one.
    let copying = (): boolean => false;
    const tmp = readsCounted(scratch, (size, path) => {
      if (!copying()) workspace.chargeRead(size, path);
    });
    const root = new MountableFs({ base: tmp });
    root.mount(BASH_WORKSPACE_DIR, workspace);
    const devices = new DeviceFs(BASH_MAX_CAPTURED_OUTPUT_BYTES);
    root.mount("/dev", devices);
    copiesKeepDestinationModes(root);
    copying = copiesUnderway(root);

    const excluded: readonly string[] = BASH_EXCLUDED_COMMANDS;
    const shell = new Bash({
      fs: yieldingFs(trailingSlashes(root)),
      cwd: BASH_WORKSPACE_DIR,
      env: { HOME: BASH_WORKSPACE_DIR, PWD: BASH_WORKSPACE_DIR },
      // tee is ours (bash-tee.ts): it says why a write failed.
      commands: getCommandNames().filter((c) => !excluded.includes(c) && c !== "tee") as CommandName[],
      // find and ln guard against just-bash losing files, ls lays out several operands as GNU ls (bash-guards.ts);
      // grep reads its arguments as GNU grep does (bash-grep.ts).
      customCommands: [
        teeCommand(defineCommand),
        findCommand(defineCommand),
        lnCommand(defineCommand),
        lsCommand(defineCommand),
        ...(["grep", "egrep", "fgrep"] as const).map((name) => grepCommand(defineCommand, name)),
        // git shows and undoes the session's changes against the snapshot (bash-git.ts).
        gitCommand(defineCommand, { view: fs, base: fs.base(), shell: workspace, mountPoint: BASH_WORKSPACE_DIR }),
      ],
      executionLimitProfile: "hardened",
      executionLimits: {
        maxCommandCount: BASH_MAX_COMMANDS,
        maxLoopIterations: BASH_MAX_LOOP_ITERATIONS,
        maxAwkIterations: BASH_MAX_LOOP_ITERATIONS,
        maxSedIterations: BASH_MAX_LOOP_ITERATIONS,
        maxJqIterations: BASH_MAX_LOOP_ITERATIONS,
        maxTraversalEntries: BASH_MAX_TRAVERSAL_OPERATIONS,
        // The deepest path a workspace holds (the hardened profile's 256 made find and grep -r
        // skip deeper files without a word, hunt 72).
        maxTraversalDepth: MAX_PATH_DEPTH,
        maxTraversalWork: BASH_MAX_TRAVERSAL_OPERATIONS,
        maxGlobOperations: BASH_MAX_TRAVERSAL_OPERATIONS,
        // Traversals draw on the shell's shared work budget too (find stopped at its 100,000).
        maxWorkUnits: BASH_MAX_TRAVERSAL_OPERATIONS,
        maxExecutionTimeMs: timeoutMs + BASH_DEADLINE_GRACE_MS,
        maxOutputSize: BASH_MAX_CAPTURED_OUTPUT_BYTES,
        maxLiveBytes: BASH_MAX_LIVE_BYTES,
        maxFileSystemBytes: BASH_MAX_SCRATCH_BYTES,
      },
    });

    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    const deadline: StepDeadline = {
      at: Date.now() + timeoutMs,
      maxWork: timeoutMs * BASH_REGEX_STEPS_PER_MS,
      work: 0,
      passed: null,
    };
    let result: { stdout: string; stderr: string; exitCode: number };
    try {
      result = await withStepDeadline(deadline, () => shell.exec(args.command, { signal: stop }));
    } catch (err) {
      // just-bash lets a filesystem error of a redirect target (EROFS, ENOSPC, ...) escape exec();
      // the command's earlier output is lost with it, so say what failed instead.
      result = { stdout: "", stderr: signal.aborted ? "" : `bash: ${(err as Error).message}\n`, exitCode: 1 };
    } finally {
      clearTimeout(timer);
    }
    // One step of a command (a sort, a regex over a long line) is not stopped by the timer: it runs
    // to its end, and just-bash's deadline then stops the command (exit 124). That is a timeout too.
    // (A command that prints the same words and exits 124 early is not one: hunt 108.)
    const timedOut =
      timeout.signal.aborted ||
      deadline.passed !== null ||
      (result.exitCode === DEADLINE_EXIT_CODE && DEADLINE_ERROR.test(result.stderr) && Date.now() >= deadline.at);
    // The patch keeps what a stopped command printed; just-bash's own line about the stop goes, as the notice says it.
    if (signal.aborted || timedOut) result = { ...result, stderr: result.stderr.replace(/bash: execution aborted\n$/, "") };
    // Appends the filesystem held back are written now, after a timeout or an abort too: what a command wrote stays.
    await workspace.flushAppends();
    if (workspace.unwritten.length > 0) {
      const failed = workspace.unwritten.map((line) => `bash: appending to ${line}\n`).join("");
      result = { ...result, stderr: `${result.stderr}${failed}`, exitCode: result.exitCode || 1 };
    }
    result = statementLimit(result);

    const stdout = result.stdout;
    // What commands wrote to /dev/stderr as a file goes with the shell's own stderr, before it.
    const stderr = devices.written.join("") + fixedLimits(result.stderr);
    // stdout's last line without its newline would run into stderr's first ("count=3ls: missing...").
    const seam = stdout !== "" && stderr !== "" && !stdout.endsWith("\n") ? "\n" : "";
    const output = stdout + seam + stderr;
    const shown = truncateTail(output.endsWith("\n") ? output.slice(0, -1) : output, {
      maxLines: BASH_MAX_OUTPUT_LINES,
      maxBytes: outputLimit(BASH_MAX_OUTPUT_BYTES, ctx),
    });
    const notices: string[] = [];
    if (shown.truncated) {
      const first = shown.totalLines - shown.outputLines + 1;
      const partial = shown.lastLinePartial
        ? ` (last ${formatSize(outputLimit(BASH_MAX_OUTPUT_BYTES, ctx))} of line ${shown.totalLines})`
        : "";
      notices.push(
        `Showing lines ${first}-${shown.totalLines} of ${shown.totalLines}${partial}. Output truncated; narrow the command (| head, | grep, | tail -n) to see other parts`,
      );
    }
    if (signal.aborted) notices.push("Command aborted: the run was aborted");
    else if (deadline.passed === "work") notices.push(timedOutByWork(timeoutMs, deadline.maxWork));
    else if (timedOut) notices.push(`Command timed out after ${timeoutMs} ms`);
    else if (result.exitCode !== 0) notices.push(`Command exited with code ${result.exitCode}`);
    // A stopped command's writes stay: the next turn (or run) must know the workspace changed.
    if ((signal.aborted || timedOut) && workspace.changed.size > 0) notices.push(changedNotice(workspace.changed));
    if (result.exitCode === BASH_LIMIT_EXIT_CODE) {
      const data =
        DATA_ITERATION_ERROR.test(result.stderr) || (!WORK_LIMIT_ERROR.test(result.stderr) && DATA_LIMIT_ERROR.test(result.stderr));
      if (data) notices.push(DATA_LIMIT_ADVICE);
      else if (WORK_LIMIT_ERROR.test(result.stderr)) notices.push(WORK_LIMIT_ADVICE);
    }
    // Unless the output already tells each refusal (a redirect's or tee's EROFS does), a write the shell hid is told.
    if (workspace.refused.count > (output.match(/EROFS/g)?.length ?? 0)) notices.push(refusedNotice(workspace.refused));
    // Commands report a failed read in their own words, most as a missing file: the budget is told.
    if (workspace.unread.count > 0) notices.push(unreadNotice(workspace.unread));
    const body = output === "" ? "(no output)" : shown.content;
    const failed = signal.aborted || timedOut || result.exitCode !== 0;
    const code = signal.aborted ? "aborted" : timedOut ? "bash_timeout" : "exit_status";
    return { text: withNotices(body, notices), error: failed, exitCode: result.exitCode, ...(failed ? { code } : {}) };
  },
};

/**
 * The regex engine's work passed what the timeout allows: deployed, where the clock stands still
 * inside a step, that is what stops a step; locally the clock or the count, whichever comes first.
 */
function timedOutByWork(timeoutMs: number, maxWork: number): string {
  return `Command timed out: its regular-expression matching passed the work a ${timeoutMs} ms timeout allows (${count(maxWork)} steps); match less text at once (one file, or lines cut short) or a simpler pattern`;
}

/** Files written or deleted before the command was stopped: `It had changed 437 workspace files (f/1.txt, ...), which stay changed`. */
function changedNotice(changed: ReadonlySet<string>): string {
  const first = [...changed].slice(0, CHANGED_NAMED);
  const files = changed.size === 1 ? "1 workspace file" : `${changed.size} workspace files`;
  return `It had changed ${files} (${named(first, changed.size)}), which stay changed`;
}

/** The first few of `count` things, and how many more: `a, b, c, and 4 more`. */
function named(first: readonly string[], count: number): string {
  const more = count - first.length;
  return `${first.join(", ")}${more > 0 ? `, and ${more} more` : ""}`;
}

/** How many changed files a stopped command's notice names. */
const CHANGED_NAMED = 3;

/** `This command read 32 MiB of files, the most one command may read: 3 reads were refused ('/workspace/a', ...)`. */
function unreadNotice(unread: { count: number; first: string[] }): string {
  const reads = unread.count === 1 ? "1 read was" : `${unread.count} reads were`;
  return `This command read ${formatSize(BASH_MAX_READ_BYTES)} of files, the most one command may read: ${reads} refused (${named(unread.first, unread.count)}); read less at once (fewer or smaller files, head -n) or over several calls`;
}

/** `This run does not allow writes: 2 writes to the workspace were refused (rm '/workspace/d', ...)`. */
function refusedNotice(refused: { count: number; first: string[] }): string {
  const writes = refused.count === 1 ? "1 write to the workspace was" : `${refused.count} writes to the workspace were`;
  return `This run does not allow writes: ${writes} refused (read-only file system: ${named(refused.first, refused.count)}); nothing was changed`;
}

/** The exit status just-bash gives a command it stopped at one of its execution limits. */
const BASH_LIMIT_EXIT_CODE = 126;
/** just-bash's errors for the command and iteration limits (`seq: iteration limit exceeded (100000)`, ...). */
const WORK_LIMIT_ERROR = /too many commands executed|too many iterations|iteration limit exceeded|exceeded maximum iterations/;
const WORK_LIMIT_ADVICE =
  `This shell stops a call at ${count(BASH_MAX_COMMANDS)} commands or ${count(BASH_MAX_LOOP_ITERATIONS)} loop iterations, a fixed limit that ` +
  "cannot be raised: process the items in batches over several calls, or use fewer commands per item (one grep, sed or awk " +
  "over many files, xargs) instead of a loop per item";

/** just-bash's exit status and error when a command passed its deadline (`execution exceeded execution deadline (11000ms)`). */
const DEADLINE_EXIT_CODE = 124;
const DEADLINE_ERROR = /execution exceeded execution deadline/;
/** just-bash's errors for its limits on the data one command handles (`search: line limit exceeded (100000)`, ...). */
const DATA_LIMIT_ERROR = /limit exceeded \(\d+\)/;
/** Counts of data that just-bash words as iterations (`strings: iteration limit exceeded (100000)`): no loop to batch. */
const DATA_ITERATION_ERROR = /\b(?:strings|join|xargs): iteration limit exceeded/;
const DATA_LIMIT_ADVICE =
  "This shell's commands stop at fixed limits on the data one command handles (100,000 lines, matches or items for grep, " +
  "rg, paste, column and xargs, records for awk and jq -R, strings found by strings, values of a JSON input for jq, fields or characters picked by cut): " +
  "narrow the input first (grep, head, sed -n) or split it over several commands";

/**
 * just-bash's parser refuses a script of more than 10,000 top-level statements as a syntax error
 * (exit 2, "Parser stuck"), before a command runs. It is the same fixed limit as the command count,
 * met earlier: it is told as that limit (exit 126, with the advice), not as a mistake in the script.
 */
function statementLimit(result: { stdout: string; stderr: string; exitCode: number }) {
  const stuck = result.exitCode === 2 ? PARSER_STATEMENT_LIMIT.exec(result.stderr) : null;
  if (!stuck) return result;
  return {
    stdout: result.stdout,
    stderr: `bash: too many commands executed (more than ${count(Number(stuck[1]))} statements in one call; nothing was run)\n`,
    exitCode: BASH_LIMIT_EXIT_CODE,
  };
}
const PARSER_STATEMENT_LIMIT = /^bash: syntax error: Parse error at \d+:\d+: Parser stuck: too many iterations \(>(\d+)\)\n?$/;

/**
 * just-bash's limit errors end in ", increase executionLimits.maxCommandCount": a setting neither
 * the model nor the user can change, so it names the limit as fixed instead.
 */
function fixedLimits(stderr: string): string {
  return stderr.replace(/, increase executionLimits\.\w+/g, ", this shell's fixed limit");
}

/** 10000 -> "10,000". */
function count(n: number): string {
  return n.toLocaleString("en-US");
}

let justBash: Promise<typeof import("just-bash")> | null = null;

/** Loaded on first use: the bundle is large and most sessions never run bash. */
function loadJustBash(): Promise<typeof import("just-bash")> {
  justBash ??= import("just-bash").catch((err: unknown) => {
    justBash = null;
    throw new ToolError("bash_unavailable", `the shell could not be loaded: ${(err as Error).message}`);
  });
  return justBash;
}

type Mounts = InstanceType<Awaited<ReturnType<typeof loadJustBash>>["MountableFs"]>;

/**
 * A `cp` from another mount (`/tmp`) onto existing files keeps their modes, as cp does: just-bash's
 * copy between mounts writes each file and then sets its source's mode, which is right for a move
 * (`mv` replaces the file) but made `cp /tmp/x run.sh` take an executable's bit away. A move to or
 * from /dev is refused: across mounts it is a copy and a removal, so `mv f /dev/null` deleted `f`.
 */
function copiesKeepDestinationModes(root: Mounts): void {
  const { cp, mv, chmod, writeFile } = root;
  const keep = new Set<string>();
  let moving = 0;
  let copying = 0;
  const isFile = (path: string) =>
    root.stat(path).then(
      (s) => s.isFile,
      () => false,
    );
  root.mv = async (src, dest) => {
    if ([src, dest].some(inDev)) throw new Error(`EACCES: permission denied, mv '${src}' -> '${dest}'`);
    moving++;
    try {
      return await mv.call(root, src, dest);
    } finally {
      moving--;
    }
  };
  root.cp = async (src, dest, options) => {
    if (moving > 0) return cp.call(root, src, dest, options);
    copying++;
    try {
      return await cp.call(root, src, dest, options);
    } finally {
      if (--copying === 0) keep.clear();
    }
  };
  // A copy writes each file before it sets the mode: the files that were there keep theirs.
  root.writeFile = async (path, content, options) => {
    if (copying > 0 && (await isFile(path))) keep.add(path);
    return writeFile.call(root, path, content, options);
  };
  root.chmod = (path, mode) => (keep.has(path) ? Promise.resolve() : chmod.call(root, path, mode));
}

/** Wraps `root`'s cp and mv; the function returned tells whether one is underway (its reads are a copy's). */
function copiesUnderway(root: Mounts): () => boolean {
  const { cp, mv } = root;
  let depth = 0;
  const tracked =
    <A extends unknown[]>(op: (...args: A) => Promise<void>) =>
    async (...args: A): Promise<void> => {
      depth++;
      try {
        await op.apply(root, args);
      } finally {
        depth--;
      }
    };
  root.cp = tracked(cp);
  root.mv = tracked(mv);
  return () => depth > 0;
}

const inDev = (path: string) => path === "/dev" || path.startsWith("/dev/");
