import { z } from "zod";
import { TOOL_OUTPUT_MAX_BYTES } from "../domain/limits";
import { comparePaths, resolveWorkspacePath } from "../workspace/paths";
import { outputLimit, type Tool } from "./tool";
import { formatSize, truncateHead, withNotices } from "./truncate";

export const LS_DEFAULT_LIMIT = 500;
export const LS_MAX_LIMIT = 10_000;
export const LS_MAX_BYTES = TOOL_OUTPUT_MAX_BYTES;

export const LsParams = z.strictObject({
  path: z.string().optional().describe("Directory to list, relative to the workspace root (default: the root)"),
  limit: z.number().int().min(1).max(LS_MAX_LIMIT).default(LS_DEFAULT_LIMIT).describe("Maximum number of entries to return"),
});
export type LsParams = z.infer<typeof LsParams>;

/** Lists one directory like pi's ls: case-insensitive order, `/` after directories, dotfiles included. */
export const lsTool: Tool<LsParams> = {
  name: "ls",
  description:
    "List the entries of a directory in the workspace, sorted alphabetically (case-insensitive), directories " +
    "suffixed with '/'. Includes dotfiles and does not apply .gitignore (it shows what is there). " +
    `At most ${LS_DEFAULT_LIMIT} entries by default (raise with limit) and ${formatSize(LS_MAX_BYTES)} of output.`,
  parameters: LsParams,
  mutates: false,
  pathArgs: ["path"],
  async execute(args, ctx) {
    const { fs } = ctx;
    const dir = resolveWorkspacePath(args.path ?? ".");
    const entries = fs
      .readdir(dir)
      .map((e) => (e.type === "dir" ? `${e.name}/` : e.name))
      .sort(caseInsensitive);
    if (entries.length === 0) return { text: "(empty directory)", error: false };

    const notices: string[] = [];
    const listed = entries.slice(0, args.limit);
    if (entries.length > args.limit) {
      notices.push(`${args.limit} entries limit reached. Use limit=${args.limit * 2} for more`);
    }
    const shown = truncateHead(listed.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: outputLimit(LS_MAX_BYTES, ctx) });
    if (shown.truncated) notices.push(`${formatSize(outputLimit(LS_MAX_BYTES, ctx))} limit reached`);
    return { text: withNotices(shown.content, notices), error: false };
  },
};

/** Names that differ only in case keep the workspace's own order between them. */
function caseInsensitive(a: string, b: string): number {
  return comparePaths(a.toLowerCase(), b.toLowerCase()) || comparePaths(a, b);
}
