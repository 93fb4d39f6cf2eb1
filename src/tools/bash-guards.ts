import type { Command, ExecResult } from "just-bash";
import { comparePaths } from "../workspace/paths";
import { shellQuote } from "./read";

/** just-bash is loaded on first use (bash.ts). */
type DefineCommand = typeof import("just-bash").defineCommand;

/** find's actions that run a command, up to a `;` or `+`. */
const EXEC_ACTIONS = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/**
 * `find` as just-bash has it, but replacing `{}` inside a word of an `-exec ... ;` as GNU find does.
 * just-bash replaces only a whole `{}`, so `-exec mv {} {}.bak \;` moved every match onto one file
 * named `{}.bak`, losing all but the last (hunt 75). Such an action is run through `sh -c`, the path
 * passed as `$1`: `-exec sh -c "'mv' ''\"$1\"'' ''\"$1\"'.bak'" _ {} \;`.
 */
export function findCommand(defineCommand: DefineCommand): Command {
  return defineCommand("find", async (args, ctx): Promise<ExecResult> => {
    if (!ctx.origCommand) return { stdout: "", stderr: "find: not available\n", exitCode: 127 };
    return ctx.origCommand(withWholeBraces(args));
  });
}

/** `args` with each `-exec`/`-execdir`/`-ok`/`-okdir ... ;` that holds `{}` inside a word run through `sh -c`. */
export function withWholeBraces(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    out.push(arg);
    if (!EXEC_ACTIONS.has(arg)) continue;
    let end = i + 1;
    while (end < args.length && args[end] !== ";" && args[end] !== "+") end++;
    const command = args.slice(i + 1, end);
    // With "+" (or no end) just-bash's own rules apply; GNU refuses {} inside a word there too.
    if (args[end] === ";" && command.some((word) => word !== "{}" && word.includes("{}"))) {
      const script = command.map((word) => word.split("{}").map(shellQuote).join('"$1"')).join(" ");
      out.push("sh", "-c", script, "_", "{}");
      i = end - 1;
    }
  }
  return out;
}

/**
 * `ln` refused before it changes anything: the workspace has no links, and just-bash's own `ln -f`
 * removed the destination before the link was refused, deleting the file (hunt 75).
 */
export function lnCommand(defineCommand: DefineCommand): Command {
  return defineCommand(
    "ln",
    async (): Promise<ExecResult> => ({
      stdout: "",
      stderr: "ln: links are not supported in the workspace; copy the file with cp instead\n",
      exitCode: 1,
    }),
  );
}

/**
 * `ls` of several operands laid out as GNU ls does: the files first, one per line, then each
 * directory under a `name:` header, a blank line before each, each group in name order. just-bash lists every operand on its
 * own with a blank line between, so `ls src/*.ts | wc -l` counted 27 for 15 files, and read an
 * operand holding `[`, `*` or `?` as a pattern again (`d/[x].txt` was "not found") (hunt 76). With
 * one operand, or `-R`, it is just-bash's own.
 */
export function lsCommand(defineCommand: DefineCommand): Command {
  return defineCommand("ls", async (args, ctx): Promise<ExecResult> => {
    if (!ctx.origCommand) return { stdout: "", stderr: "ls: not available\n", exitCode: 127 };
    const flags: string[] = [];
    const operands: string[] = [];
    let options = true;
    for (const arg of args) {
      if (options && arg === "--") options = false;
      else if (options && arg.startsWith("-") && arg.length > 1) flags.push(arg);
      else operands.push(arg);
    }
    const has = (short: string, long: string) => flags.some((f) => f === long || (!f.startsWith("--") && f.includes(short)));
    if (operands.length < 2 || has("R", "--recursive") || flags.includes("--help")) return ctx.origCommand(args);
    const directoryOnly = has("d", "--directory");
    const isDirectory = await Promise.all(
      operands.map((operand) =>
        ctx.fs.stat(ctx.fs.resolvePath(ctx.cwd, operand)).then(
          (s) => s.isDirectory,
          () => false,
        ),
      ),
    );
    // In name order (reversed with -r), as GNU ls sorts its operands; by time or size it keeps them as given.
    const byName =
      has("t", "--sort=time") || has("S", "--sort=size")
        ? () => 0
        : has("r", "--reverse")
          ? (a: string, b: string) => comparePaths(b, a)
          : comparePaths;
    const files = operands.filter((_, i) => directoryOnly || !isDirectory[i]).sort(byName);
    const directories = directoryOnly ? [] : operands.filter((_, i) => isDirectory[i]).sort(byName);
    let stdout = "";
    let stderr = "";
    let exitCode = 0;
    if (files.length > 0) {
      // One line per operand with -d (an error goes to stderr); just-bash puts a blank line between them.
      const listed = await ctx.origCommand([...flags, "-d", "--", ...files]);
      stdout = listed.stdout
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => `${line}\n`)
        .join("");
      stderr = listed.stderr;
      exitCode = listed.exitCode;
    }
    // The shell's output limit applies to what the guard returns: the listings it gathers stop there
    // (one directory named 1,200 times built a 580 MB string, hunt 80).
    const maxBytes = ctx.limits?.maxOutputSize ?? Number.POSITIVE_INFINITY;
    for (const directory of directories) {
      if (stdout.length + stderr.length > maxBytes) {
        return {
          stdout,
          stderr: `${stderr}ls: output limit exceeded (more than ${maxBytes} bytes): list fewer directories at a time\n`,
          exitCode: 2,
        };
      }
      const listed = await ctx.origCommand([...flags, "--", directory]);
      stdout += `${stdout === "" ? "" : "\n"}${directory}:\n${listed.stdout}`;
      stderr += listed.stderr;
      exitCode = Math.max(exitCode, listed.exitCode);
    }
    return { stdout, stderr, exitCode };
  });
}
