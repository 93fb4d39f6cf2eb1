import { z } from "zod";
import { MAX_FILE_BYTES } from "../domain/limits";
import { writeRefusal } from "../workspace/paths";
import { encodeText } from "../workspace/text";
import type { WorkspaceFs } from "../workspace/workspace-fs";
import { filePathArg, type Tool, ToolError } from "./tool";
import { formatSize } from "./truncate";

/** Largest file write or edit result; the overlay keeps whole files, so keep them modest. */

export const WriteParams = z.strictObject({
  path: z.string().min(1).describe("Path of the file to write, relative to the workspace root"),
  content: z.string().describe("The complete new content of the file"),
});
export type WriteParams = z.infer<typeof WriteParams>;

/** Creates or overwrites a file in the session overlay; the snapshot itself never changes. */
export const writeTool: Tool<WriteParams> = {
  name: "write",
  description:
    "Create or overwrite a file with the given content (UTF-8). Parent directories are created as needed. " +
    `Changes go to this session's overlay, never to the uploaded snapshot. At most ${formatSize(MAX_FILE_BYTES)} per file.`,
  parameters: WriteParams,
  mutates: true,
  pathArgs: ["path"],
  async execute(args, { fs }) {
    const path = filePathArg(args.path, "write");
    const bytes = encodeText(args.content);
    await writeChecked(fs, path, bytes);
    return { text: `Successfully wrote ${bytes.byteLength} bytes to ${path}`, error: false };
  },
};

/** Writes a file after the checks every writer needs: size, not a directory, no file in the way. */
export async function writeChecked(fs: WorkspaceFs, path: string, bytes: Uint8Array): Promise<void> {
  if (bytes.byteLength > MAX_FILE_BYTES) {
    throw new ToolError(
      "content_too_large",
      `${path} would be ${formatSize(bytes.byteLength)}; the limit is ${formatSize(MAX_FILE_BYTES)} per file`,
    );
  }
  const refusal = writeRefusal(path, (p) => fs.stat(p)?.type ?? null);
  if (refusal) throw refusal;
  await fs.writeFile(path, bytes);
}
