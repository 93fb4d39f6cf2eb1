import { z } from "zod";
import { TOOL_OUTPUT_MAX_BYTES } from "../domain/limits";
import { comparePaths, resolveWorkspacePath } from "../workspace/paths";
import { type OutputBudget, outputLimit, type Tool, ToolError } from "./tool";
import { cutToFit, formatSize, utf8Length, withNotices } from "./truncate";

export const LS_DEFAULT_LIMIT = 500;
export const LS_MAX_LIMIT = 10_000;
export const LS_MAX_BYTES = TOOL_OUTPUT_MAX_BYTES;

export const LsParams = z.strictObject({
  path: z.string().optional().describe("Directory to list, relative to the workspace root (default: the root)"),
  offset: z.number().int().min(1).optional().describe("Number of the first entry to show (1-based), to continue a cut listing"),
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

/** Lists one directory like pi's ls: case-insensitive order, `/` after directories, dotfiles included. */
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
      .map((e) => (e.type === "dir" ? `${e.name}/` : e.name))
      .sort(caseInsensitive);
    if (entries.length === 0) return { text: "(empty directory)", error: false };
    const page = listPage(entries, args, { maxBytes: outputLimit(LS_MAX_BYTES, ctx), maxLimit: LS_MAX_LIMIT, noun: "entries" });
    return { text: page, error: false };
  },
};

/** Names that differ only in case keep the workspace's own order between them. */
function caseInsensitive(a: string, b: string): number {
  return comparePaths(a.toLowerCase(), b.toLowerCase()) || comparePaths(a, b);
}

/**
 * One page of a sorted listing (ls, find): the `limit` items from number `offset` on (1-based), cut
 * at `maxBytes`. When items are left, the notice says which were shown and the offset that
 * continues; a larger limit only when the limit (not the byte cap) ended the page, the maximum
 * allows it, and the next item would fit.
 */
export function listPage(
  items: readonly string[],
  args: { offset?: number; limit: number },
  options: { maxBytes: number; maxLimit: number; noun: string; narrow?: string },
): string {
  const first = args.offset ?? 1;
  if (first > items.length) {
    throw new ToolError("offset_out_of_range", `Offset ${first} is beyond the last of the ${items.length} ${options.noun}`);
  }
  const listed = items.slice(first - 1, first - 1 + args.limit);
  let shown = linesWithin(listed, options.maxBytes);
  let text = listed.slice(0, shown.count).join("\n");
  // An item longer than the whole budget is shown cut: a page always moves the offset on.
  if (shown.count === 0) {
    text = cutToFit(listed[0]!, options.maxBytes);
    shown = { count: 1, bytes: utf8Length(text) };
  }
  const last = first - 1 + shown.count;
  if (last === items.length) return text;
  const cutByBytes = shown.count < listed.length;
  const more = Math.min(args.limit * 2, options.maxLimit);
  const raise = !cutByBytes && more > args.limit && shown.bytes + 1 + utf8Length(items[last]!) <= options.maxBytes;
  const cut = cutByBytes ? `${formatSize(options.maxBytes)} limit` : `limit=${args.limit}`;
  const notice = `Showing ${options.noun} ${first}-${last} of ${items.length} (${cut}). ${continuation(last + 1, raise ? more : null, options.narrow)}`;
  return withNotices(text, [notice]);
}

/**
 * How many of `lines` (from the first) fit in `maxBytes` joined by "\n", and their bytes. Counted per
 * item, not per "\n": a file name may hold a line break.
 */
export function linesWithin(lines: readonly string[], maxBytes: number): { count: number; bytes: number } {
  let bytes = 0;
  let count = 0;
  for (const line of lines) {
    const more = utf8Length(line) + (count > 0 ? 1 : 0);
    if (bytes + more > maxBytes) break;
    bytes += more;
    count++;
  }
  return { count, bytes };
}

/** "Use offset=N to continue, limit=M for more, or narrow ...": the ways on from a cut page. */
export function continuation(offset: number, limit: number | null, narrow: string | undefined): string {
  const ways = [`offset=${offset} to continue`];
  if (limit !== null) ways.push(`limit=${limit} for more`);
  if (narrow !== undefined) ways.push(narrow);
  return `Use ${ways.length === 1 ? ways[0] : `${ways.slice(0, -1).join(", ")}, or ${ways.at(-1)}`}`;
}
