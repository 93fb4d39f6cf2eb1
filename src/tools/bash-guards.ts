import type { Command, ExecResult } from "just-bash";

/** just-bash is loaded on first use (bash.ts). */
type DefineCommand = typeof import("just-bash").defineCommand;

/** find's actions that run a command, up to a `;` or `+`. */
const EXEC_ACTIONS = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

/**
 * `find` as just-bash has it, refusing an `-exec` argument that holds `{}` inside a longer word.
 * just-bash replaces only a whole `{}`, so `-exec mv {} {}.bak \;` moved every match onto one file
 * named `{}.bak`, losing all but the last (hunt 75); GNU find replaces it inside words too.
 */
export function findCommand(defineCommand: DefineCommand): Command {
  return defineCommand("find", async (args, ctx): Promise<ExecResult> => {
    let inExec = false;
    for (const arg of args) {
      if (!inExec) inExec = EXEC_ACTIONS.has(arg);
      else if (arg === ";" || arg === "+") inExec = false;
      else if (arg !== "{}" && arg.includes("{}")) {
        const stderr =
          `find: '${arg}': this shell's find replaces {} only as a whole argument, not inside '${arg}'; ` +
          `to use the path inside a word, run it through sh: -exec sh -c 'mv "$1" "$1.bak"' _ {} \\;\n`;
        return { stdout: "", stderr, exitCode: 1 };
      }
    }
    if (!ctx.origCommand) return { stdout: "", stderr: "find: not available\n", exitCode: 127 };
    return ctx.origCommand(args);
  });
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
