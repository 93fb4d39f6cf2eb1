import { z } from "zod";
import { TOOL_OUTPUT_MAX_BYTES, TOOL_OUTPUT_MAX_LINES } from "../domain/limits";
import { WorkspaceError } from "../workspace/errors";
import { decodeText, hasUtf8Bom, isBinary, textOf } from "../workspace/text";
import { oneBasedOffset } from "./paging";
import { filePathArg, type OutputBudget, outputLimit, type Tool, ToolError } from "./tool";
import { CUT_MARK, formatSize, headBytes, linesFrom, occurrences, truncateHead, utf8Length, withNotices } from "./truncate";

export const READ_MAX_LINES = TOOL_OUTPUT_MAX_LINES;
export const READ_MAX_BYTES = TOOL_OUTPUT_MAX_BYTES;

export const ReadParams = z.strictObject({
  path: z.string().min(1).describe("Path of the file to read, relative to the workspace root"),
  offset: oneBasedOffset("Line number to start reading from (1-based)"),
  limit: z.number().int().min(1).optional().describe("Maximum number of lines to read"),
});
export type ReadParams = z.infer<typeof ReadParams>;

/** read's description for a run whose results are cut at `maxOutputBytes` (see outputLimit). */
function readDescription(budget: OutputBudget): string {
  return (
    `Read the contents of a text file in the workspace. Output is truncated to ${READ_MAX_LINES} lines or ` +
    `${formatSize(outputLimit(READ_MAX_BYTES, budget))} (whichever is hit first); the notice at the end says which offset to continue from. ` +
    "Use offset/limit for large files. Binary files are refused."
  );
}

/**
 * Reads a text file, as pi's read does: raw text without line numbers, head-truncated with a notice
 * that names the offset to continue from. CRLF is shown as LF and a BOM is dropped, with a notice
 * that says so (pi shows them; a model that writes back what it read would drop them unawares).
 */
export const readTool: Tool<ReadParams> = {
  name: "read",
  description: readDescription({}),
  describe: readDescription,
  parameters: ReadParams,
  mutates: false,
  pathArgs: ["path"],
  async execute(args, ctx) {
    const { fs, signal } = ctx;
    const maxBytes = outputLimit(READ_MAX_BYTES, ctx);
    const path = await withListHint(() => filePathArg(args.path, "read"));
    const bytes = await withListHint(() => fs.readFile(path, signal));
    if (isBinary(bytes)) {
      throw new ToolError("binary_file", `${path} is a binary file (${formatSize(bytes.byteLength)}); read shows text files only`);
    }
    // One copy of the file's text, never split whole: a file of millions of short lines made
    // hundreds of MB of line strings (hunt 72).
    const text = decodeText(bytes);
    // The model would write U+FFFD back where the file has other bytes; edit refuses such a file.
    // (Text without U+FFFD decoded without a replacement: it is valid UTF-8.)
    const notUtf8 = text.includes("\ufffd") && textOf(bytes) === null ? [invalidUtf8Notice(path, text, bytes)] : [];
    const start = (args.offset ?? 1) - 1;
    // One line past what can be shown: enough for the truncation to see that there is more.
    const { lines, total } = linesFrom(text, start, Math.min(args.limit ?? Number.POSITIVE_INFINITY, READ_MAX_LINES + 1), {
      crlfAsLf: true,
    });
    // Every line but an unfinished last one ends with a "\n".
    const newlines = total - (text === "" || text.endsWith("\n") ? 0 : 1);
    const hidden = hiddenBytesNotice(path, hasUtf8Bom(bytes), occurrences(text, "\r\n"), newlines);
    if (hidden) notUtf8.push(hidden);
    if (total === 0 && start === 0) return { text: "(empty file)", error: false };
    if (start >= total) {
      throw new ToolError("offset_out_of_range", `Offset ${args.offset} is beyond end of file (${total} lines total)`);
    }
    const end = args.limit === undefined ? total : Math.min(start + args.limit, total);
    const shown = truncateHead(lines.join("\n"), { maxLines: READ_MAX_LINES, maxBytes });
    const first = start + 1;

    if (shown.firstLineExceedsLimit) {
      const line = lines[0] ?? "";
      const head = headBytes(line, maxBytes);
      const rest = ctx.allowBash ? `, bash can: ${restOfLineCommand(path, first, head, maxBytes)}` : "";
      const next = first < total ? ` Use offset=${first + 1} to continue.` : "";
      const notice =
        `Line ${first} is ${formatSize(utf8Length(line))}, over the ${formatSize(maxBytes)} limit: showing its first ` +
        `${formatSize(utf8Length(head))}; read cannot show the rest of this line${rest}.${next}`;
      return { text: withNotices(`${head}${CUT_MARK}`, [...notUtf8, notice]), error: false };
    }
    if (shown.truncated) {
      const last = start + shown.outputLines;
      const limit = shown.truncatedBy === "bytes" ? ` (${formatSize(maxBytes)} limit)` : "";
      const notice = `Showing lines ${first}-${last} of ${total}${limit}. Use offset=${last + 1} to continue.`;
      return { text: withNotices(shown.content, [...notUtf8, notice]), error: false };
    }
    if (end < total) {
      const notice = `${total - end} more lines in file. Use offset=${end + 1} to continue.`;
      return { text: withNotices(shown.content, [...notUtf8, notice]), error: false };
    }
    return { text: withNotices(shown.content, notUtf8), error: false };
  },
};

/** A directory given to read gets the tool that lists it named in the error. */
async function withListHint<T>(step: () => T | Promise<T>): Promise<Awaited<T>> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof WorkspaceError && err.code === "is_directory")
      throw new WorkspaceError("is_directory", `${err.message}; use ls to list it`);
    throw err;
  }
}

/** The next `maxBytes` of line `lineNumber` after `head`, in the shell's words (its `cut -c` counts characters). */
function restOfLineCommand(path: string, lineNumber: number, head: string, maxBytes: number): string {
  const from = [...head].length + 1;
  return `sed -n '${lineNumber}p' ${shellQuote(path)} | cut -c ${from}- | head -c ${maxBytes}`;
}

/** `path` as one shell word: single-quoted, a `'` inside written as `'\''`. */
export function shellQuote(path: string): string {
  return `'${path.replaceAll("'", "'\\''")}'`;
}

/**
 * Says what the text shown leaves out: a UTF-8 BOM, CRLF line endings (`crlf` of them). Null when
 * neither: the text is the file's.
 */
function hiddenBytesNotice(path: string, bom: boolean, crlf: number, newlines: number): string | null {
  if (!bom && crlf === 0) return null;
  const endings = crlf === 0 ? "" : crlf === newlines ? "CRLF line endings" : `CRLF line endings on ${crlf} of ${newlines} lines`;
  const what = [bom ? "a UTF-8 BOM" : "", endings].filter(Boolean).join(" and ");
  const shown = [bom ? "without the BOM" : "", crlf > 0 ? "with LF endings" : ""].filter(Boolean).join(" and ");
  return `${path} has ${what}, shown here ${shown}: edit keeps ${crlf > 0 ? "them" : "it"}; write writes exactly the text it is given`;
}

/** Says how many invalid sequences `text` shows as U+FFFD (a valid EF BF BD in the file is U+FFFD itself). */
function invalidUtf8Notice(path: string, text: string, bytes: Uint8Array): string {
  let replaced = 0;
  for (let i = text.indexOf("\ufffd"); i >= 0; i = text.indexOf("\ufffd", i + 1)) replaced++;
  for (let i = bytes.indexOf(0xef); i >= 0 && i + 2 < bytes.byteLength; i = bytes.indexOf(0xef, i + 1)) {
    if (bytes[i + 1] === 0xbf && bytes[i + 2] === 0xbd) replaced--;
  }
  const what = replaced === 1 ? "1 invalid byte sequence is" : `${replaced} invalid byte sequences are`;
  return `${path} is not valid UTF-8: ${what} shown as U+FFFD; writing this text back would replace them, and edit refuses this file`;
}
