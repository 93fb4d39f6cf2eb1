import { z } from "zod";
import { TOOL_OUTPUT_MAX_BYTES } from "../domain/limits";
import { WorkspaceError } from "../workspace/errors";
import { comparePaths, resolveWorkspacePath } from "../workspace/paths";
import { compileGlob, relativeTo } from "./glob";
import { outputLimit, type Tool, throwIfAborted } from "./tool";
import { formatSize, truncateHead, withNotices } from "./truncate";
import { IgnoreRules, walkWorkspace } from "./workspace-walk";

export const FIND_DEFAULT_LIMIT = 1000;
export const FIND_MAX_LIMIT = 20_000;
export const FIND_MAX_BYTES = TOOL_OUTPUT_MAX_BYTES;

export const FindParams = z.strictObject({
  pattern: z.string().min(1).describe("Glob, e.g. '*.ts', 'src/**/*.test.ts' or '**/README*'"),
  path: z.string().optional().describe("Directory to search in, relative to the workspace root (default: the root)"),
  limit: z.number().int().min(1).max(FIND_MAX_LIMIT).default(FIND_DEFAULT_LIMIT).describe("Maximum number of results"),
});
export type FindParams = z.infer<typeof FindParams>;

/** Finds files and directories by glob, like pi's find (fd --glob --hidden, .gitignore honoured). */
export const findTool: Tool<FindParams> = {
  name: "find",
  description:
    "Find files and directories by glob. A pattern without '/' matches names at any depth ('*.ts'); a pattern " +
    "with '/' matches the path relative to the search directory ('src/**/*.test.ts'). Results are paths relative " +
    "to the workspace root, sorted, directories suffixed with '/'. Skips .git/ and paths ignored by .gitignore " +
    `(unless the search path itself is ignored); includes dotfiles. At most ${FIND_DEFAULT_LIMIT} results by default ` +
    `(raise with limit) and ${formatSize(FIND_MAX_BYTES)} of output.`,
  parameters: FindParams,
  mutates: false,
  pathArgs: ["path"],
  async execute(args, ctx) {
    const { fs, signal } = ctx;
    const root = resolveWorkspacePath(args.path ?? ".");
    if (!fs.stat(root)) throw new WorkspaceError("not_found", `path '${args.path}' does not exist`);
    const matches = compileGlob(args.pattern);
    const rules = await IgnoreRules.load(fs, signal);
    throwIfAborted(signal);
    const { files, dirs } = walkWorkspace(fs, root, rules);

    const found = [
      ...files.filter((p) => matches(relativeTo(root, p))).map((p) => ({ key: p, shown: p })),
      ...dirs.filter((p) => matches(relativeTo(root, p))).map((p) => ({ key: p, shown: `${p}/` })),
    ].sort((a, b) => comparePaths(a.key, b.key));
    if (found.length === 0) return { text: "No files found matching pattern", error: false };

    const notices: string[] = [];
    if (found.length > args.limit) {
      notices.push(`${args.limit} results limit reached. Use limit=${args.limit * 2} for more, or refine pattern`);
    }
    const listed = found.slice(0, args.limit).map((f) => f.shown);
    const shown = truncateHead(listed.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: outputLimit(FIND_MAX_BYTES, ctx) });
    if (shown.truncated) notices.push(`${formatSize(outputLimit(FIND_MAX_BYTES, ctx))} limit reached`);
    return { text: withNotices(shown.content, notices), error: false };
  },
};
