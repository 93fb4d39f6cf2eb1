import { bashTool } from "../../src/tools/bash";
import { MemoryWorkspaceFs, toolContext } from "./memory-fs";

/** A shell command and what GNU bash and its tools gave for it (recorded by a hunt, `LC_ALL=C.UTF-8`). */
export interface ShellCase {
  name: string;
  command: string;
  files?: Record<string, string>;
  stdout: string;
  exitCode: number;
  stderrEmpty: boolean;
  /** Compared with the tool's result text instead (a top-level EXIT trap writes after the group's redirect). */
  raw?: boolean;
}

/**
 * Runs `c.command` through the bash tool over its files, its streams captured into files of the
 * workspace, and returns what to compare with the recording: stdout, the exit code, whether stderr was empty.
 */
export async function runShellCase(c: ShellCase): Promise<Pick<ShellCase, "stdout" | "exitCode" | "stderrEmpty">> {
  // The case's files and its current directory are w/; its streams go beside it, out of ls's and find's way.
  const fs = new MemoryWorkspaceFs(Object.fromEntries(Object.entries(c.files ?? {}).map(([path, content]) => [`w/${path}`, content])));
  const ctx = toolContext(fs, { allowWrite: true });
  if (c.raw) {
    const out = await bashTool.execute({ command: `mkdir -p w; cd w; ${c.command}` }, ctx);
    // The result text drops the final newline and adds a notice of a non-zero exit.
    return {
      stdout: `${out.text.replace(/\n\n\[Command exited with code \d+\]$/, "")}\n`,
      exitCode: out.exitCode ?? -1,
      stderrEmpty: true,
    };
  }
  const out = await bashTool.execute({ command: `mkdir -p w; cd w; { ${c.command}\n} >../__out 2>../__err` }, ctx);
  const text = (path: string) => (fs.stat(path) ? fs.text(path) : "");
  return { stdout: text("__out"), exitCode: out.exitCode ?? -1, stderrEmpty: text("__err") === "" };
}
