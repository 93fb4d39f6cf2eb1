import { createTwoFilesPatch, FILE_HEADERS_ONLY } from "diff";
import { z } from "zod";
import { MAX_FILE_BYTES, TOOL_OUTPUT_MAX_BYTES } from "../domain/limits";
import { encodeText, hasUtf8Bom, isBinary, textOf } from "../workspace/text";
import { listed, locate } from "./edit-match";
import { filePathArg, type Tool, ToolError } from "./tool";
import { formatSize, truncateHead, withNotices } from "./truncate";
import { writeChecked } from "./write";

/** Lines of unchanged context around each hunk of the diff shown after an edit. */
export const EDIT_DIFF_CONTEXT_LINES = 3;
export const EDIT_MAX_DIFF_BYTES = TOOL_OUTPUT_MAX_BYTES;

export const EditParams = z.strictObject({
  path: z.string().min(1).describe("Path of the file to edit, relative to the workspace root"),
  oldText: z.string().min(1).describe("Exact text to replace; must occur exactly once in the file"),
  newText: z.string().describe("Text to put in its place"),
});
export type EditParams = z.infer<typeof EditParams>;

/**
 * Replaces exactly one occurrence of `oldText`. Matching is done on LF-normalised text, so the
 * model need not reproduce CRLF; the file keeps its line endings and its BOM.
 */
export const editTool: Tool<EditParams> = {
  name: "edit",
  description:
    "Edit a file by replacing oldText with newText. oldText must match the file exactly (whitespace and indentation " +
    "included; line endings may be LF) and occur exactly once: include enough surrounding lines to make it unique, " +
    "but keep it small. The file's line endings (LF/CRLF) and BOM are preserved. Returns a unified diff of the change. " +
    `Changes go to this session's overlay. At most ${formatSize(MAX_FILE_BYTES)} per file.`,
  parameters: EditParams,
  mutates: true,
  pathArgs: ["path"],
  async execute(args, { fs, signal }) {
    const path = filePathArg(args.path, "edit");
    const bytes = await fs.readFile(path, signal);
    if (isBinary(bytes)) throw new ToolError("binary_file", `${path} is a binary file; edit changes text files only`);
    const bom = hasUtf8Bom(bytes);
    // Written back as UTF-8, a Latin-1 byte would become U+FFFD: the rest of the file must survive.
    const exact = textOf(bytes);
    if (exact === null) throw new ToolError("binary_file", `${path} is not UTF-8 text; edit changes UTF-8 text files only`);
    const raw = bom ? exact.slice(1) : exact;
    const content = raw.replaceAll("\r\n", "\n");
    const oldText = args.oldText.replaceAll("\r\n", "\n");
    const newText = args.newText.replaceAll("\r\n", "\n");

    const found = locate(content, oldText, path);
    if (oldText === newText) throw new ToolError("no_change", `oldText and newText are identical; nothing to change in ${path}`);

    const { start, end } = found;
    const updated = content.slice(0, start) + newText + content.slice(end);
    if (updated === content) throw new ToolError("no_change", `newText is the text already there; nothing to change in ${path}`);
    // Only the replaced text changes in the file: its other lines keep their own endings.
    const rawStart = rawOffset(raw, start);
    const rawEnd = rawOffset(raw, end);
    const eol = lineEnding(raw, rawStart, rawEnd);
    const written = raw.slice(0, rawStart) + newText.replaceAll("\n", eol) + raw.slice(rawEnd);
    await writeChecked(fs, path, encodeText(written, bom));

    const patch = createTwoFilesPatch(`a/${path}`, `b/${path}`, content, updated, undefined, undefined, {
      context: EDIT_DIFF_CONTEXT_LINES,
      headerOptions: FILE_HEADERS_ONLY,
    });
    const diff = truncateHead(patch.trimEnd(), { maxBytes: EDIT_MAX_DIFF_BYTES });
    const notices = diff.truncated ? ["Diff truncated; read the file to see the result"] : [];
    const how =
      found.normalised.length > 0
        ? ` oldText matched only after normalising ${listed(found.normalised)}; the rest of the file is unchanged.`
        : "";
    return { text: withNotices(`Successfully replaced 1 block in ${path}.${how}\n\n${diff.content}`, notices), error: false };
  },
};

/** Where the first `n` characters of `raw` with CRLF read as LF end in `raw`. */
function rawOffset(raw: string, n: number): number {
  let j = 0;
  for (let k = 0; k < n; k++) j += raw.charCodeAt(j) === 13 && raw.charCodeAt(j + 1) === 10 ? 2 : 1;
  return j;
}

/**
 * The line ending for the new text: the one the replaced text used, else that of the line the edit
 * is in (a last line without one: CRLF if the file uses only CRLF).
 */
function lineEnding(raw: string, start: number, end: number): string {
  const replaced = raw.slice(start, end);
  if (replaced.includes("\r\n")) return "\r\n";
  if (replaced.includes("\n")) return "\n";
  const next = raw.indexOf("\n", end);
  if (next >= 0) return raw.charCodeAt(next - 1) === 13 ? "\r\n" : "\n";
  return raw.includes("\r\n") && !/(^|[^\r])\n/.test(raw) ? "\r\n" : "\n";
}
