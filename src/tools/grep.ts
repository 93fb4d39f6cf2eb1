import { z } from "zod";
import { TOOL_OUTPUT_MAX_BYTES } from "../domain/limits";
import { WorkspaceError } from "../workspace/errors";
import { comparePaths, resolveWorkspacePath } from "../workspace/paths";
import { decodeText, isBinary } from "../workspace/text";
import type { WorkspaceFs } from "../workspace/workspace-fs";
import { compileGlob, relativeTo } from "./glob";
import { outputLimit, type Tool, ToolError, throwIfAborted } from "./tool";
import { formatSize, GREP_MAX_LINE_CHARS, truncateHead, truncateLine, withNotices } from "./truncate";
import { IgnoreRules, walkWorkspace } from "./workspace-walk";

export const GREP_DEFAULT_LIMIT = 100;
export const GREP_MAX_LIMIT = 1000;
export const GREP_MAX_CONTEXT_LINES = 20;
export const GREP_MAX_BYTES = TOOL_OUTPUT_MAX_BYTES;
/** Larger files (minified bundles, data dumps) are skipped and counted in a notice. */
export const GREP_MAX_FILE_BYTES = 8 * 1024 * 1024;

export const GrepParams = z.strictObject({
  pattern: z.string().min(1).describe("JavaScript regular expression (or literal text with literal=true)"),
  path: z.string().optional().describe("Directory or file to search, relative to the workspace root (default: the root)"),
  glob: z.string().min(1).optional().describe("Only search files matching this glob, e.g. '*.ts' or 'src/**/*.ts'"),
  ignoreCase: z.boolean().optional().describe("Case-insensitive search"),
  literal: z.boolean().optional().describe("Treat pattern as literal text, not a regular expression"),
  context: z.number().int().min(0).max(GREP_MAX_CONTEXT_LINES).optional().describe("Lines of context before and after each match"),
  limit: z.number().int().min(1).max(GREP_MAX_LIMIT).default(GREP_DEFAULT_LIMIT).describe("Maximum number of matches"),
});
export type GrepParams = z.infer<typeof GrepParams>;

/**
 * Searches file contents line by line, like pi's grep (ripgrep with .gitignore honoured). Output is
 * sorted by path, then line. The scan counts every match (for the notice), then formats the first
 * `limit` matches, re-reading only the few files it prints.
 */
export const grepTool: Tool<GrepParams> = {
  name: "grep",
  description:
    "Search file contents with a JavaScript regular expression (or literal text). Output lines are " +
    "'path:line: text' (context lines 'path-line- text', groups separated by '--'), paths relative to the workspace root, " +
    "sorted by path. Skips .git/, paths ignored by .gitignore (unless the search path itself is ignored), " +
    `binary files and files over ${formatSize(GREP_MAX_FILE_BYTES)}. At most ${GREP_DEFAULT_LIMIT} matches by default ` +
    `(raise with limit), lines cut at ${GREP_MAX_LINE_CHARS} characters, ${formatSize(GREP_MAX_BYTES)} of output.`,
  parameters: GrepParams,
  mutates: false,
  pathArgs: ["path"],
  async execute(args, ctx) {
    const { fs, signal } = ctx;
    const maxBytes = outputLimit(GREP_MAX_BYTES, ctx);
    const root = resolveWorkspacePath(args.path ?? ".");
    if (!fs.stat(root)) throw new WorkspaceError("not_found", `path '${args.path}' does not exist`);
    const matcher = new LineMatcher(args.pattern, args);
    const inGlob = args.glob === undefined ? () => true : compileGlob(args.glob);
    const rules = await IgnoreRules.load(fs, signal);
    throwIfAborted(signal);

    const candidates: string[] = [];
    const oversized: string[] = [];
    for (const path of walkWorkspace(fs, root, rules).files) {
      if (!inGlob(relativeTo(root, path))) continue;
      if ((fs.stat(path)?.size ?? 0) > GREP_MAX_FILE_BYTES) oversized.push(path);
      else candidates.push(path);
    }

    // Pass 1: count matching lines per file, in whatever order storage reads fastest.
    const counts = new Map<string, number>();
    let total = 0;
    for await (const { path, bytes } of fs.readFiles(candidates, signal)) {
      throwIfAborted(signal);
      if (isBinary(bytes)) continue;
      const n = matcher.countMatchingLines(decodeText(bytes));
      if (n > 0) {
        counts.set(path, n);
        total += n;
      }
    }
    throwIfAborted(signal);
    const notices: string[] = [];
    if (total === 0) {
      if (oversized.length > 0) notices.push(skippedNotice(oversized));
      return { text: withNotices("No matches found", notices), error: false };
    }

    // Pass 2: format the first `limit` matches in path order.
    const printed = await formatMatches(fs, [...counts.keys()].sort(comparePaths), matcher, args, signal);
    if (total > args.limit) {
      notices.push(
        `${args.limit} matches limit reached (${total} in total). Use limit=${Math.min(args.limit * 2, GREP_MAX_LIMIT)} for more, or refine pattern`,
      );
    }
    const shown = truncateHead(printed.text, { maxLines: Number.MAX_SAFE_INTEGER, maxBytes });
    if (shown.truncated) notices.push(`${formatSize(maxBytes)} limit reached`);
    if (printed.linesCut) notices.push(`Some lines truncated to ${GREP_MAX_LINE_CHARS} chars. Use read tool to see full lines`);
    if (oversized.length > 0) notices.push(skippedNotice(oversized));
    return { text: withNotices(shown.content, notices), error: false };
  },
};

/** Matches one line at a time; lines are split on "\n" with a trailing "\r" removed. */
export class LineMatcher {
  private readonly line: RegExp;
  /** Whole-file pre-check with `m`: a file it rejects has no matching line, so most files skip the split. */
  private readonly file: RegExp | null;

  constructor(pattern: string, options: { literal?: boolean; ignoreCase?: boolean }) {
    const source = options.literal ? escapeRegExp(pattern) : pattern;
    const flags = options.ignoreCase ? "i" : "";
    try {
      this.line = new RegExp(source, flags);
    } catch (err) {
      throw new ToolError(
        "invalid_regex",
        `invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message}. Fix the pattern, or pass literal=true to search for the text as written`,
      );
    }
    // Lookarounds can see across a line break in the whole text, so they get no pre-check.
    this.file = /\(\?<?[=!]/.test(source) ? null : new RegExp(source, `${flags}m`);
  }

  matches(line: string): boolean {
    return this.line.test(line);
  }

  countMatchingLines(text: string): number {
    if (this.file && !text.includes("\r") && !this.file.test(text)) return 0;
    let n = 0;
    for (const line of lines(text)) if (this.line.test(line)) n++;
    return n;
  }
}

async function formatMatches(
  fs: WorkspaceFs,
  paths: readonly string[],
  matcher: LineMatcher,
  args: GrepParams,
  signal: AbortSignal,
): Promise<{ text: string; linesCut: boolean }> {
  const context = args.context ?? 0;
  const out: string[] = [];
  let remaining = args.limit;
  let linesCut = false;
  for (const path of paths) {
    if (remaining === 0) break;
    throwIfAborted(signal);
    const all = lines(decodeText(await fs.readFile(path, signal)));
    let lastPrinted = -1; // index of the last line printed for this file
    for (let i = 0; i < all.length && remaining > 0; i++) {
      if (!matcher.matches(all[i] ?? "")) continue;
      remaining--;
      const from = Math.max(0, i - context, lastPrinted + 1);
      if (context > 0 && out.length > 0 && (lastPrinted < 0 || from > lastPrinted + 1)) out.push("--");
      let to = Math.min(all.length - 1, i + context);
      for (let j = from; j <= to; j++) {
        const isMatch = j === i || (j > i && matcher.matches(all[j] ?? ""));
        if (j > i && isMatch) {
          // A later match inside this block is printed when the loop reaches it.
          to = j - 1;
          break;
        }
        const cut = truncateLine(all[j] ?? "");
        linesCut ||= cut.truncated;
        out.push(j === i ? `${path}:${j + 1}: ${cut.text}` : `${path}-${j + 1}- ${cut.text}`);
      }
      lastPrinted = to;
    }
  }
  return { text: out.join("\n"), linesCut };
}

function lines(text: string): string[] {
  const all = text.split("\n");
  if (all[all.length - 1] === "") all.pop();
  if (!text.includes("\r")) return all;
  for (let i = 0; i < all.length; i++) {
    const line = all[i] ?? "";
    if (line.endsWith("\r")) all[i] = line.slice(0, -1);
  }
  return all;
}

function skippedNotice(paths: readonly string[]): string {
  const shown = paths.slice(0, 5).join(", ");
  const more = paths.length > 5 ? `, and ${paths.length - 5} more` : "";
  return `Skipped ${paths.length} file(s) larger than ${formatSize(GREP_MAX_FILE_BYTES)}: ${shown}${more}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
