import { z } from "zod";
import { TOOL_OUTPUT_MAX_BYTES, TOOL_OUTPUT_MAX_LINES } from "../domain/limits";
import { WorkspaceError } from "../workspace/errors";
import { comparePaths, resolveWorkspacePath } from "../workspace/paths";
import { globFilter, hasCapital } from "./glob";
import { listPage, oneBasedOffset } from "./paging";
import { type OutputBudget, outputLimit, type Tool, throwIfAborted } from "./tool";
import { formatSize, withNotices } from "./truncate";
import { IgnoreRules, walkWorkspace } from "./workspace-walk";

export const FIND_DEFAULT_LIMIT = 1000;
/** A page is at most as many lines as any tool's output. */
export const FIND_MAX_LIMIT = TOOL_OUTPUT_MAX_LINES;
export const FIND_MAX_BYTES = TOOL_OUTPUT_MAX_BYTES;

export const FindParams = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe(
      "Glob, e.g. '*.ts', 'src/**/*.test.ts' or '**/README*'. Without '/' it matches names; with '/' the path relative to path or to the workspace root",
    ),
  path: z.string().optional().describe("Directory to search in, relative to the workspace root (default: the root)"),
  offset: oneBasedOffset("Number of the first result to show (1-based), to continue a cut list"),
  limit: z.number().int().min(1).max(FIND_MAX_LIMIT).default(FIND_DEFAULT_LIMIT).describe("Maximum number of results"),
});
export type FindParams = z.infer<typeof FindParams>;

/** find's description for a run whose results are cut at `maxOutputBytes` (see outputLimit). */
function findDescription(budget: OutputBudget): string {
  return (
    "Find files and directories by glob. A pattern without '/' matches names at any depth ('*.ts'); a pattern " +
    "with '/' matches the path relative to the search directory or to the workspace root ('src/**/*.test.ts' " +
    "finds the same with path 'src' or without). A pattern without capital letters matches in either case ('readme*' " +
    "finds README.md), one with a capital matches case exactly, as fd does. Results are paths relative to the workspace root, sorted, " +
    "directories suffixed with '/'. Skips .git/ and paths ignored by .gitignore (unless the search path itself is " +
    `ignored); includes dotfiles. At most ${FIND_DEFAULT_LIMIT} results by default (raise with limit, max ${FIND_MAX_LIMIT}) ` +
    `and ${formatSize(outputLimit(FIND_MAX_BYTES, budget))} of output; offset continues a cut list.`
  );
}

/** Finds files and directories by glob, like pi's find (fd --glob --hidden, .gitignore honoured). */
export const findTool: Tool<FindParams> = {
  name: "find",
  description: findDescription({}),
  describe: findDescription,
  parameters: FindParams,
  mutates: false,
  pathArgs: ["path"],
  async execute(args, ctx) {
    const { fs, signal } = ctx;
    const root = resolveWorkspacePath(args.path ?? ".");
    if (!fs.stat(root)) throw new WorkspaceError("not_found", `path '${args.path}' does not exist`);
    // Smart case, as fd's: a pattern without capitals matches names in either case ('readme*' finds README.md).
    const matches = globFilter(args.pattern, root, { ignoreCase: !hasCapital(args.pattern) });
    const rules = await IgnoreRules.load(fs, signal);
    throwIfAborted(signal);
    const { files, dirs } = walkWorkspace(fs, root, rules);

    const found = [
      ...files.filter(matches).map((p) => ({ key: p, shown: p })),
      ...dirs.filter(matches).map((p) => ({ key: p, shown: `${p}/` })),
    ].sort((a, b) => comparePaths(a.key, b.key));
    const notices = [rules.notice()].filter((notice) => notice !== null);
    if (found.length === 0) return { text: withNotices("No files found matching pattern", notices), error: false };
    const options = {
      maxBytes: outputLimit(FIND_MAX_BYTES, ctx),
      maxLimit: FIND_MAX_LIMIT,
      noun: "results",
      narrow: "narrow path or pattern",
      notices,
    };
    return {
      text: listPage(
        found.map((f) => f.shown),
        args,
        options,
      ),
      error: false,
    };
  },
};
