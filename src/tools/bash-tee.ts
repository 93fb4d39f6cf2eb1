import type { ByteString, Command, ExecResult } from "just-bash";

/** just-bash is loaded on first use (bash.ts). */
type DefineCommand = typeof import("just-bash").defineCommand;

/**
 * A pipe's bytes as just-bash carries them: a string of one char per byte. Its `latin1FromBytes`, which
 * says so, is not in the browser build that workerd loads.
 */
const latin1 = (bytes: ByteString): string => bytes as unknown as string;

const HELP =
  "tee - read from stdin and write to stdout and files\n\nUsage: tee [OPTION]... [FILE]...\n\n" +
  "Options:\n  -a, --append     append to the given FILEs, do not overwrite\n" +
  "  -i, -p           accepted and ignored (this shell has no signals and no broken pipes)\n" +
  "      --help       display this help and exit\n";

/**
 * `tee` as just-bash has it, but telling why a write failed. just-bash's own reports every failed
 * write as "No such file or directory", so a file past its 16 MiB, a run without writes and the
 * command's write budget all read as a missing directory (hunt 57). Options are just-bash's, plus
 * GNU's -i and -p, which mean nothing here.
 */
export function teeCommand(defineCommand: DefineCommand): Command {
  return defineCommand("tee", async (args, ctx): Promise<ExecResult> => {
    let append = false;
    const files: string[] = [];
    let options = true;
    for (const arg of args) {
      if (options && arg === "--") options = false;
      else if (options && arg === "--help") return { stdout: HELP, stderr: "", exitCode: 0 };
      else if (options && arg === "--append") append = true;
      else if (options && arg.startsWith("--")) return usageError(`tee: unrecognized option '${arg}'`);
      else if (options && arg.length > 1 && arg.startsWith("-")) {
        for (const flag of arg.slice(1)) {
          if (flag === "a") append = true;
          else if (flag !== "i" && flag !== "p") return usageError(`tee: invalid option -- '${flag}'`);
        }
      } else files.push(arg);
    }
    // Bytes as they came (one char per byte), written and passed on unchanged.
    const input = latin1(ctx.stdin);
    let stdout = input;
    let stderr = "";
    let failed = false;
    let text: string | undefined;
    /** A copy into the streams passed the output limit: told once. */
    let streamsFull = false;
    // The shell's output limit applies to the streams tee fills itself: copies of the input into them
    // stop there (100 operands of /dev/stderr over 1 MiB held the isolate 13 s, hunt 119).
    const maxBytes = ctx.limits?.maxOutputSize ?? Number.POSITIVE_INFINITY;
    for (const file of files) {
      // The command's timeout or the run's abort: the rest of the operands are left (hunt 120: 3,000 ran 3x past it).
      if (ctx.signal?.aborted) break;
      try {
        const path = ctx.fs.resolvePath(ctx.cwd, file);
        // The command's own streams, as on a system where they are files (hunt 78: through the
        // filesystem the text came after the command's output, not into its pipe).
        if (path === "/dev/stdout" || path === "/dev/stderr") {
          // Past the limit this copy is left out, and the files after it are still written (hunt 123).
          if (stdout.length + stderr.length + input.length > maxBytes) {
            if (!streamsFull) stderr += `tee: ${file}: output limit exceeded (more than ${maxBytes} bytes): write the copies to files\n`;
            streamsFull = true;
            failed = true;
            continue;
          }
          if (path === "/dev/stdout") stdout += input;
          else stderr += text ??= new TextDecoder().decode(bytesOf(input));
        } else if (append) await ctx.fs.appendFile(path, input, "binary");
        else await ctx.fs.writeFile(path, input, "binary");
      } catch (err) {
        stderr += `tee: ${file}: ${(err as Error).message}\n`;
        failed = true;
      }
    }
    return { stdout, stderr, exitCode: failed ? 1 : 0, stdoutEncoding: "binary" };
  });
}

/** The bytes of a string of one char per byte. */
function bytesOf(latin1: string): Uint8Array {
  const bytes = new Uint8Array(latin1.length);
  for (let i = 0; i < latin1.length; i++) bytes[i] = latin1.charCodeAt(i);
  return bytes;
}

function usageError(message: string): ExecResult {
  return { stdout: "", stderr: `${message}\n`, exitCode: 1 };
}
