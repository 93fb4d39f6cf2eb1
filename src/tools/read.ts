import { z } from "zod";
import { TOOL_OUTPUT_MAX_BYTES, TOOL_OUTPUT_MAX_LINES } from "../domain/limits";
import { decodeText, isBinary } from "../workspace/text";
import { filePathArg, outputLimit, type Tool, ToolError } from "./tool";
import { formatSize, splitLines, truncateHead, utf8Length, withNotices } from "./truncate";

export const READ_MAX_LINES = TOOL_OUTPUT_MAX_LINES;
export const READ_MAX_BYTES = TOOL_OUTPUT_MAX_BYTES;

export const ReadParams = z.strictObject({
  path: z.string().min(1).describe("Path of the file to read, relative to the workspace root"),
  offset: z.number().int().min(1).optional().describe("Line number to start reading from (1-based)"),
  limit: z.number().int().min(1).optional().describe("Maximum number of lines to read"),
});
export type ReadParams = z.infer<typeof ReadParams>;

/**
 * Reads a text file, as pi's read does: raw text without line numbers, head-truncated with a notice
 * that names the offset to continue from. CRLF is shown as LF and a BOM is dropped.
 */
export const readTool: Tool<ReadParams> = {
  name: "read",
  description:
    `Read the contents of a text file in the workspace. Output is truncated to ${READ_MAX_LINES} lines or ` +
    `${formatSize(READ_MAX_BYTES)} (whichever is hit first); the notice at the end says which offset to continue from. ` +
    "Use offset/limit for large files. Binary files are refused.",
  parameters: ReadParams,
  mutates: false,
  pathArgs: ["path"],
  async execute(args, ctx) {
    const { fs, signal } = ctx;
    const maxBytes = outputLimit(READ_MAX_BYTES, ctx);
    const path = filePathArg(args.path, "read");
    const bytes = await fs.readFile(path, signal);
    if (isBinary(bytes)) {
      throw new ToolError("binary_file", `${path} is a binary file (${formatSize(bytes.byteLength)}); read shows text files only`);
    }
    const lines = splitLines(decodeText(bytes).replaceAll("\r\n", "\n"));
    const total = lines.length;
    const start = (args.offset ?? 1) - 1;
    if (total === 0 && start === 0) return { text: "(empty file)", error: false };
    if (start >= total) {
      throw new ToolError("offset_out_of_range", `Offset ${args.offset} is beyond end of file (${total} lines total)`);
    }
    const end = args.limit === undefined ? total : Math.min(start + args.limit, total);
    const shown = truncateHead(lines.slice(start, end).join("\n"), { maxLines: READ_MAX_LINES, maxBytes });
    const first = start + 1;

    if (shown.firstLineExceedsLimit) {
      const size = formatSize(utf8Length(lines[start] ?? ""));
      const text = `[Line ${first} is ${size}, exceeds ${formatSize(maxBytes)} limit. Use bash: sed -n '${first}p' ${path} | head -c ${maxBytes}]`;
      return { text, error: false };
    }
    if (shown.truncated) {
      const last = start + shown.outputLines;
      const limit = shown.truncatedBy === "bytes" ? ` (${formatSize(maxBytes)} limit)` : "";
      const notice = `Showing lines ${first}-${last} of ${total}${limit}. Use offset=${last + 1} to continue.`;
      return { text: withNotices(shown.content, [notice]), error: false };
    }
    if (end < total) {
      const notice = `${total - end} more lines in file. Use offset=${end + 1} to continue.`;
      return { text: withNotices(shown.content, [notice]), error: false };
    }
    return { text: shown.content, error: false };
  },
};
