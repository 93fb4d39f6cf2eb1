import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { ingestWorkspace } from "../src/workspace/ingest";
import type { GrepBenchInput } from "./setup/grep";

/** Ingests the grep bench's tree (served by bench/setup/grep.ts) as `workspaceId`, all of it. */
export async function ingestGrepTree(input: GrepBenchInput, workspaceId: string, searchIndex = true): Promise<void> {
  const response = await fetch(`${input.baseUrl}/tree.tar`);
  expect(response.ok).toBe(true);
  const result = await ingestWorkspace(env.STORE, response.body!, {
    workspaceId,
    owner: null,
    contentType: "application/x-tar",
    searchIndex,
  });
  expect(result).toMatchObject({ files: input.files, bytes: input.sourceBytes, skipped: [] });
}

/** Matching lines the grep tool found: from its "Showing matches 1-100 of N" notice, or the lines it printed. */
export function totalMatches(text: string): number {
  const notice = /\n\n\[Showing matches \d+-\d+ of (\d+) \(/.exec(text);
  if (notice) return Number(notice[1]);
  if (text.startsWith("No matches found")) return 0;
  return (text.split("\n\n[")[0] ?? "").split("\n").length;
}
