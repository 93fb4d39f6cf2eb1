import { z } from "zod";
import { TOOL_OUTPUT_MAX_BYTES, TOOL_OUTPUT_MAX_LINES } from "../domain/limits";
import { comparePaths, resolveWorkspacePath } from "../workspace/paths";
import { listPage, oneBasedOffset } from "./paging";
import { type OutputBudget, outputLimit, type Tool } from "./tool";
import { formatSize } from "./truncate";

export const LS_DEFAULT_LIMIT = 500;
/** A page is at most as many lines as any tool's output. */
export const LS_MAX_LIMIT = TOOL_OUTPUT_MAX_LINES;
export const LS_MAX_BYTES = TOOL_OUTPUT_MAX_BYTES;

export const LsParams = z.strictObject({
  path: z.string().optional().describe("Directory to list, relative to the workspace root (default: the root)"),
  offset: oneBasedOffset("Number of the first entry to show (1-based), to continue a cut listing"),
  limit: z.number().int().min(1).max(LS_MAX_LIMIT).default(LS_DEFAULT_LIMIT).describe("Maximum number of entries to return"),
});
export type LsParams = z.infer<typeof LsParams>;

/** ls's description for a run whose results are cut at `maxOutputBytes` (see outputLimit). */
function lsDescription(budget: OutputBudget): string {
  return (
    "List the entries of a directory in the workspace, sorted alphabetically (case-insensitive), directories " +
    "suffixed with '/'. Includes dotfiles and does not apply .gitignore (it shows what is there). " +
    `At most ${LS_DEFAULT_LIMIT} entries by default (raise with limit, max ${LS_MAX_LIMIT}) and ` +
    `${formatSize(outputLimit(LS_MAX_BYTES, budget))} of output; offset continues a cut listing.`
  );
}

/** Lists one directory like pi's ls: its alphabetical order, `/` after directories, dotfiles included. */
export const lsTool: Tool<LsParams> = {
  name: "ls",
  description: lsDescription({}),
  describe: lsDescription,
  parameters: LsParams,
  mutates: false,
  pathArgs: ["path"],
  async execute(args, ctx) {
    const { fs } = ctx;
    const dir = resolveWorkspacePath(args.path ?? ".");
    const entries = fs
      .readdir(dir)
      .sort((a, b) => alphabetical(a.name, b.name))
      .map((e) => (e.type === "dir" ? `${e.name}/` : e.name));
    if (entries.length === 0) return { text: "(empty directory)", error: false };
    const page = listPage(entries, args, { maxBytes: outputLimit(LS_MAX_BYTES, ctx), maxLimit: LS_MAX_LIMIT, noun: "entries" });
    return { text: page, error: false };
  },
};

/**
 * pi's order: names compared lower-cased as words (`localeCompare`: `été` between `e` and `f`, `dir`
 * before `dir.txt`), the workspace's own order between names that compare equal (hunt 79).
 */
function alphabetical(a: string, b: string): number {
  return a.toLowerCase().localeCompare(b.toLowerCase()) || comparePaths(a, b);
}
