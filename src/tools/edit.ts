import { createTwoFilesPatch, FILE_HEADERS_ONLY } from "diff";
import { z } from "zod";
import { MAX_FILE_BYTES, TOOL_OUTPUT_MAX_BYTES } from "../domain/limits";
import { resolveWorkspacePath } from "../workspace/paths";
import { decodeText, encodeText, hasUtf8Bom, isBinary } from "../workspace/text";
import { type Tool, ToolError } from "./tool";
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
    const path = resolveWorkspacePath(args.path);
    const bytes = await fs.readFile(path, signal);
    if (isBinary(bytes)) throw new ToolError("binary_file", `${path} is a binary file; edit changes text files only`);
    const bom = hasUtf8Bom(bytes);
    const raw = decodeText(bytes);
    const crlf = raw.includes("\r\n");
    const content = crlf ? raw.replaceAll("\r\n", "\n") : raw;
    const oldText = args.oldText.replaceAll("\r\n", "\n");
    const newText = args.newText.replaceAll("\r\n", "\n");

    const at = occurrences(content, oldText);
    if (at.length === 0) {
      throw new ToolError(
        "no_match",
        `Could not find oldText in ${path}. It must match the file exactly, including whitespace and indentation; read the file and copy the text to replace.`,
      );
    }
    if (at.length > 1) {
      const lines = at.map((i) => lineOf(content, i)).join(", ");
      throw new ToolError(
        "ambiguous_match",
        `Found ${at.length} occurrences of oldText in ${path} (at lines ${lines}). It must occur exactly once: add surrounding lines to oldText to make it unique.`,
      );
    }
    if (oldText === newText) throw new ToolError("no_change", `oldText and newText are identical; nothing to change in ${path}`);

    const start = at[0] ?? 0;
    const updated = content.slice(0, start) + newText + content.slice(start + oldText.length);
    await writeChecked(fs, path, encodeText(crlf ? updated.replaceAll("\n", "\r\n") : updated, bom));

    const patch = createTwoFilesPatch(`a/${path}`, `b/${path}`, content, updated, undefined, undefined, {
      context: EDIT_DIFF_CONTEXT_LINES,
      headerOptions: FILE_HEADERS_ONLY,
    });
    const diff = truncateHead(patch.trimEnd(), { maxBytes: EDIT_MAX_DIFF_BYTES });
    const notices = diff.truncated ? ["Diff truncated; read the file to see the result"] : [];
    return { text: withNotices(`Successfully replaced 1 block in ${path}.\n\n${diff.content}`, notices), error: false };
  },
};

/** Start offsets of the non-overlapping occurrences of `needle`. */
function occurrences(haystack: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + needle.length)) out.push(i);
  return out;
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}
