import { createTwoFilesPatch, FILE_HEADERS_ONLY } from "diff";
import { z } from "zod";
import { MAX_EDITS_PER_CALL, MAX_FILE_BYTES, TOOL_OUTPUT_MAX_BYTES } from "../domain/limits";
import { encodeText, hasUtf8Bom, isBinary, textOf } from "../workspace/text";
import { FileTexts, listed, locate, type Normalisation } from "./edit-match";
import { filePathArg, type Tool, ToolError } from "./tool";
import { formatSize, truncateHead, withNotices } from "./truncate";
import { writeChecked } from "./write";

/** Lines of unchanged context around each hunk of the diff shown after an edit. */
export const EDIT_DIFF_CONTEXT_LINES = 3;
export const EDIT_MAX_DIFF_BYTES = TOOL_OUTPUT_MAX_BYTES;

const Replacement = z.strictObject({
  oldText: z.string().min(1).describe("Exact text to replace; must occur exactly once in the file as it was before this call"),
  newText: z.string().describe("Text to put in its place"),
});

export const EditParams = z.strictObject({
  path: z.string().min(1).describe("Path of the file to edit, relative to the workspace root"),
  edits: z
    .array(Replacement)
    .min(1)
    .max(MAX_EDITS_PER_CALL)
    .describe(`1-${MAX_EDITS_PER_CALL} replacements, each matched against the file as it was before this call; they must not overlap`),
});
export type EditParams = z.infer<typeof EditParams>;

/** A replacement found in the file: where its oldText is (in LF-normalised text) and what goes there. */
interface Placed {
  index: number;
  start: number;
  end: number;
  newText: string;
  normalised: readonly Normalisation[];
}

/**
 * Replaces text in one file: each of `edits` names one occurrence of its `oldText` in the file as it
 * was before the call, and the edits must not overlap (pi's edit; its older single `oldText`/`newText`
 * form is taken too). Matching is done on LF-normalised text, so the model need not reproduce CRLF;
 * the file keeps its line endings and its BOM.
 */
export const editTool: Tool<EditParams> = {
  name: "edit",
  description:
    "Edit a file by replacing text. Each edits[i].oldText must match the file exactly (whitespace and indentation " +
    "included; line endings may be LF) and occur exactly once in the file as it was before this call: include enough " +
    "surrounding lines to make it unique, but keep it small. For several changes to one file, send them as several " +
    "edits in one call; they must not overlap. The file's line endings (LF/CRLF) and BOM are preserved. Returns a " +
    `unified diff of the change. Changes go to this session's overlay. At most ${formatSize(MAX_FILE_BYTES)} per file.`,
  parameters: EditParams,
  prepareArguments: (args) => {
    let edits = args.edits;
    if (typeof edits === "string") {
      // Some models send the array as a JSON string.
      try {
        edits = JSON.parse(edits);
      } catch {
        return args;
      }
    }
    if (!("oldText" in args || "newText" in args)) return { ...args, edits };
    // The older single form, alone or beside an array (as pi takes it: one more edit).
    const { oldText, newText, ...rest } = args;
    if (edits === undefined) return { ...rest, edits: [{ oldText, newText }] };
    return Array.isArray(edits) ? { ...rest, edits: [...edits, { oldText, newText }] } : { ...args, edits };
  },
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
    // In a file whose every CR ends a CRLF, a CR in oldText or newText is a line break (a copy cut
    // between "\r" and "\n" matched nothing): the model's text read as pi reads it.
    const lineBreaks = /\r(?!\n)/.test(raw)
      ? (text: string) => text.replaceAll("\r\n", "\n")
      : (text: string) => text.replace(/\r\n?/g, "\n");

    const placed = placeEdits(content, args.edits, path, lineBreaks);
    // Only the replaced text changes in the file: its other lines keep their own endings.
    let updated = "";
    let written = "";
    let at = 0;
    let rawAt = 0;
    const toRaw = rawOffsets(raw);
    for (const edit of placed) {
      const rawStart = toRaw(edit.start);
      const rawEnd = toRaw(edit.end);
      updated += content.slice(at, edit.start) + edit.newText;
      written += raw.slice(rawAt, rawStart) + edit.newText.replaceAll("\n", lineEnding(raw, rawStart, rawEnd));
      at = edit.end;
      rawAt = rawEnd;
    }
    updated += content.slice(at);
    written += raw.slice(rawAt);
    if (updated === content) {
      const what = placed.length === 1 ? "newText is the text already there" : "the edits leave the text as it is";
      throw new ToolError("no_change", `${what}; nothing to change in ${path}`);
    }
    await writeChecked(fs, path, encodeText(written, bom));

    const patch = createTwoFilesPatch(`a/${path}`, `b/${path}`, content, updated, undefined, undefined, {
      context: EDIT_DIFF_CONTEXT_LINES,
      headerOptions: FILE_HEADERS_ONLY,
    });
    const diff = truncateHead(patch.trimEnd(), { maxBytes: EDIT_MAX_DIFF_BYTES });
    const notices = diff.truncated ? ["Diff truncated; read the file to see the result"] : [];
    const blocks = placed.length === 1 ? "1 block" : `${placed.length} blocks`;
    return {
      text: withNotices(`Successfully replaced ${blocks} in ${path}.${normalisedNote(placed)}\n\n${diff.content}`, notices),
      error: false,
    };
  },
};

/**
 * Where each edit's oldText is in `content` (LF-normalised), in file order. Refused: a single edit
 * that changes nothing, one whose oldText is missing or not unique, and edits that overlap. With
 * several edits, a refusal names the edit (`edits[i]`); one of them that changes nothing is taken
 * with the others, as pi does, and leaves its text as it is (the call is refused only when all of
 * them change nothing).
 */
function placeEdits(content: string, edits: EditParams["edits"], path: string, lineBreaks: (text: string) => string): Placed[] {
  const several = edits.length > 1;
  const file = new FileTexts(content);
  const placed = edits.map((edit, index): Placed => {
    const oldText = lineBreaks(edit.oldText);
    const newText = lineBreaks(edit.newText);
    try {
      const found = locate(file, oldText, path);
      if (oldText !== newText) return { index, start: found.start, end: found.end, newText, normalised: found.normalised };
      if (!several) throw new ToolError("no_change", `oldText and newText are identical; nothing to change in ${path}`);
      // One of several that changes nothing keeps the file's own text, also where it matched only after normalising (hunt 80).
      return { index, start: found.start, end: found.end, newText: content.slice(found.start, found.end), normalised: [] };
    } catch (err) {
      if (several && err instanceof ToolError) throw new ToolError(err.code, `edits[${index}]: ${err.message}`);
      throw err;
    }
  });
  placed.sort((a, b) => a.start - b.start || a.index - b.index);
  for (let i = 1; i < placed.length; i++) {
    const [before, after] = [placed[i - 1]!, placed[i]!];
    if (after.start < before.end) {
      const [first, second] = [Math.min(before.index, after.index), Math.max(before.index, after.index)];
      throw new ToolError(
        "overlapping_edits",
        `edits[${first}] and edits[${second}] overlap in ${path}: each edit must replace its own text; merge them into one edit`,
      );
    }
  }
  return placed;
}

/** What a fallback match overlooked, if any edit needed one. */
function normalisedNote(placed: readonly Placed[]): string {
  const overlooked = placed.filter((p) => p.normalised.length > 0);
  if (overlooked.length === 0) return "";
  const kinds = [...new Set(overlooked.flatMap((p) => p.normalised))];
  const which = placed.length === 1 ? "oldText" : `the oldText of ${overlooked.map((p) => `edits[${p.index}]`).join(", ")}`;
  return ` ${which} matched only after normalising ${listed(kinds)}; the rest of the file is unchanged.`;
}

/**
 * Where the first `n` characters of `raw` with CRLF read as LF end in `raw`, for `n` that never
 * decrease (the placed edits, in file order): the walk goes on from the last answer instead of from
 * the start (one walk per edit was most of 100 edits of a 15 MB file).
 */
function rawOffsets(raw: string): (n: number) => number {
  let k = 0;
  let j = 0;
  return (n) => {
    for (; k < n; k++) j += raw.charCodeAt(j) === 13 && raw.charCodeAt(j + 1) === 10 ? 2 : 1;
    return j;
  };
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
