import type { Command, ExecResult } from "just-bash";
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
