import { z } from "zod";
import { GREP_MAX_PATTERN_CHARS, SEARCH_MAX_FILE_BYTES, TOOL_OUTPUT_MAX_BYTES } from "../domain/limits";
import { WorkspaceError } from "../workspace/errors";
import { comparePaths, resolveWorkspacePath } from "../workspace/paths";
import { ALL } from "../workspace/search/query";
import { MissingPieceError } from "../workspace/search/search-text";
import type { SearchableText, WorkspaceFs } from "../workspace/workspace-fs";
import { globFilter } from "./glob";
import { formatFileMatches } from "./grep-format";
import { LineMatcher } from "./grep-matcher";
import { continuation, linesWithin, oneBasedOffset, outputCut } from "./paging";
import { READ_MAX_BYTES } from "./read";
import { type OutputBudget, outputLimit, type Tool, ToolError, throwIfAborted } from "./tool";
import { cutToFit, formatSize, GREP_MAX_LINE_CHARS, utf8Length, withNotices } from "./truncate";
import { IgnoreRules, walkWorkspace } from "./workspace-walk";

export const GREP_DEFAULT_LIMIT = 100;
export const GREP_MAX_LIMIT = 1000;
export const GREP_MAX_CONTEXT_LINES = 20;
export const GREP_MAX_BYTES = TOOL_OUTPUT_MAX_BYTES;
/** Larger files (minified bundles, data dumps) are skipped and counted in a notice. */
export const GREP_MAX_FILE_BYTES = SEARCH_MAX_FILE_BYTES;

export const GrepParams = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .max(GREP_MAX_PATTERN_CHARS)
    .describe(
      "JavaScript regular expression (or literal text with literal=true); also takes POSIX classes such as [[:space:]] and a leading (?i)",
    ),
  path: z.string().optional().describe("Directory or file to search, relative to the workspace root (default: the root)"),
  glob: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Only search files matching this glob. Without '/' it matches file names ('*.ts'); with '/' the path relative to path or to the workspace root ('src/**/*.ts')",
    ),
  ignoreCase: z.boolean().optional().describe("Case-insensitive search"),
  literal: z.boolean().optional().describe("Treat pattern as literal text, not a regular expression"),
  context: z.number().int().min(0).max(GREP_MAX_CONTEXT_LINES).optional().describe("Lines of context before and after each match"),
  offset: oneBasedOffset("Number of the first match to show (1-based), to continue a cut result"),
  limit: z.number().int().min(1).max(GREP_MAX_LIMIT).default(GREP_DEFAULT_LIMIT).describe("Maximum number of matches"),
});
export type GrepParams = z.infer<typeof GrepParams>;

/** The files a grep under `root` searches, and those it skips for their size. */
function searchedFiles(fs: WorkspaceFs, root: string, inGlob: (path: string) => boolean, rules: IgnoreRules) {
  const candidates: string[] = [];
  const oversized: string[] = [];
  for (const path of walkWorkspace(fs, root, rules).files) {
    if (!inGlob(path)) continue;
    if ((fs.stat(path)?.size ?? 0) > GREP_MAX_FILE_BYTES) oversized.push(path);
    else candidates.push(path);
  }
  return { candidates, oversized };
}

/**
 * Prepares the files a grep of the whole workspace would search (`WorkspaceFs.warmSearchTexts`):
 * over a snapshot, their text is then cached before the first grep asks for it. False when it did
 * not start (another warm-up was running in the isolate).
 */
export async function warmGrep(fs: WorkspaceFs, signal: AbortSignal): Promise<boolean> {
  const rules = await IgnoreRules.load(fs, signal);
  signal.throwIfAborted();
  return fs.warmSearchTexts(searchedFiles(fs, "", () => true, rules).candidates, signal);
}

/** grep's description for a run whose results are cut at `maxOutputBytes` (see outputLimit). */
function grepDescription(budget: OutputBudget): string {
  return (
    "Search file contents with a JavaScript regular expression (or literal text). Output lines are " +
    "'path:line: text' (context lines 'path-line- text', groups separated by '--'), paths relative to the workspace root, " +
    "sorted by path. Skips .git/, paths ignored by .gitignore (unless the search path itself is ignored), " +
    `binary files and files over ${formatSize(GREP_MAX_FILE_BYTES)}. At most ${GREP_DEFAULT_LIMIT} matches by default ` +
    `(raise with limit, max ${GREP_MAX_LIMIT}), lines cut at ${GREP_MAX_LINE_CHARS} characters, ` +
    `${formatSize(outputLimit(GREP_MAX_BYTES, budget))} of output; offset continues a cut result.`
  );
}

/**
 * Searches file contents line by line, like pi's grep (ripgrep with .gitignore honoured). Output is
 * sorted by path, then line. The scan counts every match (for the notice), then formats the first
 * `limit` matches, re-reading only the few files it prints. Over a snapshot, the search index
 * narrows the files to read and their decoded text stays cached between calls; the result is the
 * same as reading every file.
 */
export const grepTool: Tool<GrepParams> = {
  name: "grep",
  description: grepDescription({}),
  describe: grepDescription,
  parameters: GrepParams,
  mutates: false,
  pathArgs: ["path"],
  async execute(args, ctx) {
    const { fs, signal } = ctx;
    const maxBytes = outputLimit(GREP_MAX_BYTES, ctx);
    const root = resolveWorkspacePath(args.path ?? ".");
    if (!fs.stat(root)) throw new WorkspaceError("not_found", `path '${args.path}' does not exist`);
    const matcher = new LineMatcher(args.pattern, args);
    const inGlob = args.glob === undefined ? () => true : globFilter(args.glob, root);
    const rules = await IgnoreRules.load(fs, signal);
    throwIfAborted(signal);

    const { candidates, oversized } = searchedFiles(fs, root, inGlob, rules);

    // Pass 1: count matching lines per file, in whatever order storage reads fastest.
    const counts = new Map<string, number>();
    let total = 0;
    for await (const { path, text, pieces } of fs.searchTexts(candidates, matcher.query, signal)) {
      throwIfAborted(signal);
      let n = 0;
      // Only the pieces that can hold a match: no line spans two pieces.
      for (const piece of text.selected(pieces)) n += matcher.countMatchingLines(piece);
      if (n > 0) {
        counts.set(path, n);
        total += n;
      }
    }
    throwIfAborted(signal);
    const notices: string[] = [];
    const ignoreNotice = rules.notice();
    if (total === 0) {
      if (oversized.length > 0) notices.push(skippedNotice(oversized));
      if (ignoreNotice) notices.push(ignoreNotice);
      return { text: withNotices("No matches found", notices), error: false };
    }

    // Pass 2: format `limit` matches from number `offset` on, in path order.
    const first = args.offset ?? 1;
    if (first > total) throw new ToolError("offset_out_of_range", `Offset ${first} is beyond the last of the ${total} matches`);
    const printed = await formatMatches(fs, counts, matcher, args, signal);
    let shown = linesWithin(printed.lines, maxBytes);
    let lines = printed.lines.slice(0, shown.count);
    // A first match line (or its context) longer than the whole budget: that match alone, cut, so
    // that the page always moves the offset on.
    if (!printed.matchLines.some((line) => line < shown.count)) {
      lines = [cutToFit(printed.lines[printed.matchLines[0]!]!, maxBytes)];
      shown = { count: printed.matchLines[0]! + 1, bytes: utf8Length(lines[0]!) };
    }
    const last = first - 1 + printed.matchLines.filter((line) => line < shown.count).length;
    const cutByBytes = shown.count < printed.lines.length;
    if (last < total) {
      const cut = cutByBytes ? outputCut(shown.count, maxBytes) : null;
      notices.push(pageNotice(first, last, total, args.limit, shown.bytes, maxBytes, cut));
    }
    // read shows a line whole only up to its own byte limit (of a longer one, its first part).
    if (printed.linesCut) {
      const readable = formatSize(outputLimit(READ_MAX_BYTES, ctx));
      notices.push(`Some lines truncated to ${GREP_MAX_LINE_CHARS} chars. Use read tool to see lines of up to ${readable} in full`);
    }
    if (oversized.length > 0) notices.push(skippedNotice(oversized));
    if (ignoreNotice) notices.push(ignoreNotice);
    return { text: withNotices(lines.join("\n"), notices), error: false };
  },
};

/**
 * Which matches a cut result shows and how to go on. A larger limit is suggested only when the limit
 * ended it (not the output limits: `outputCut` null), the maximum allows it, and another match as long
 * as the average printed one would fit in `maxBytes` after the `bytes` printed.
 */
function pageNotice(
  first: number,
  last: number,
  total: number,
  limit: number,
  bytes: number,
  maxBytes: number,
  outputCut: string | null,
): string {
  const more = Math.min(limit * 2, GREP_MAX_LIMIT);
  const raise = outputCut === null && more > limit && bytes + bytes / (last - first + 1) <= maxBytes;
  const cut = outputCut ?? `limit=${limit}`;
  return `Showing matches ${first}-${last} of ${total} (${cut}). ${continuation(last + 1, raise ? more : null, "narrow pattern, path or glob")}`;
}

async function formatMatches(
  fs: WorkspaceFs,
  counts: ReadonlyMap<string, number>,
  matcher: LineMatcher,
  args: GrepParams,
  signal: AbortSignal,
): Promise<{ lines: string[]; matchLines: number[]; linesCut: boolean }> {
  // Pass 1 counted each file's matches: the files printed are the first ones in path order from
  // match `offset` on until `limit` matches, read together (a few range reads, not one round trip
  // per file), and of a snapshot's files only the pieces that can match and, for context, their
  // neighbours.
  const printed: string[] = [];
  const skips = new Map<string, number>();
  let skip = (args.offset ?? 1) - 1;
  let needed = args.limit;
  for (const path of [...counts.keys()].sort(comparePaths)) {
    const n = counts.get(path)!;
    if (skip >= n) {
      skip -= n;
      continue;
    }
    if (needed <= 0) break;
    printed.push(path);
    skips.set(path, skip);
    needed -= n - skip;
    skip = 0;
  }
  const out: string[] = [];
  const matchLines: number[] = [];
  let remaining = args.limit;
  let linesCut = false;
  const context = args.context ?? 0;
  for (const batch of batches(fs, printed)) {
    const texts = new Map<string, SearchableText>();
    for await (const file of fs.searchTexts(batch, matcher.query, signal, { neighbours: context > 0 })) texts.set(file.path, file);
    for (const path of batch) {
      throwIfAborted(signal);
      const options = { context, limit: remaining, separate: out.length > 0, skip: skips.get(path) ?? 0 };
      let file: ReturnType<typeof formatFileMatches>;
      try {
        const found = texts.get(path) ?? (await wholeText(fs, path, signal));
        file = formatFileMatches(path, found.text, matcher, { ...options, pieces: found.pieces });
      } catch (error) {
        // Context reached past the neighbouring pieces (lines longer than a piece): read it all.
        if (!(error instanceof MissingPieceError)) throw error;
        file = formatFileMatches(path, (await wholeText(fs, path, signal)).text, matcher, options);
      }
      for (const line of file.matchLines) matchLines.push(out.length + line);
      out.push(...file.lines);
      remaining -= file.matches;
      linesCut ||= file.linesCut;
    }
  }
  return { lines: out, matchLines, linesCut };
}

/** Files read together while printing: runs of at most this many bytes (one file at least). */
const PRINT_BATCH_BYTES = 16 * 1024 * 1024;

function* batches(fs: WorkspaceFs, paths: readonly string[]): Generator<string[]> {
  let batch: string[] = [];
  let bytes = 0;
  for (const path of paths) {
    const size = fs.stat(path)?.size ?? 0;
    if (batch.length > 0 && bytes + size > PRINT_BATCH_BYTES) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(path);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}

/** A file pass 1 found matches in, every piece of it. */
async function wholeText(fs: WorkspaceFs, path: string, signal: AbortSignal): Promise<SearchableText> {
  for await (const file of fs.searchTexts([path], ALL, signal)) return file;
  throw new WorkspaceError("not_found", `no file at '${path}'`);
}

function skippedNotice(paths: readonly string[]): string {
  const shown = paths.slice(0, 5).join(", ");
  const more = paths.length > 5 ? `, and ${paths.length - 5} more` : "";
  return `Skipped ${paths.length} file(s) larger than ${formatSize(GREP_MAX_FILE_BYTES)}: ${shown}${more}`;
}
