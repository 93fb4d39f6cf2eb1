import { expect, it } from "vitest";
import { MAX_EDITS_PER_CALL } from "../src/domain/limits";
import { editTool } from "../src/tools/edit";
import { MemoryWorkspaceFs, toolContext } from "../test/helpers/memory-fs";

/**
 * The edit tool at its bounds: one call of MAX_EDITS_PER_CALL edits on a 15 MB file, each edit on its
 * own line. Baseline: the same call with every oldText exact (the first pass alone: one scan of the
 * file per edit). Next to it: oldTexts that match only after normalising (ASCII quotes for the
 * file's curly ones: the second pass) and only after composing (a composed é for the file's e and
 * combining accent: the third pass). Same run, same file size; median of RUNS calls.
 */
const FILE_CHARS = 15_000_000;
const RUNS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

type Kind = "exact" | "quotes" | "composed";

function fileOf(kind: Kind): { text: string; lines: number } {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < FILE_CHARS; i++) {
    const line =
      kind === "composed" ? `  const cafe\u0301_${i} = "re\u0301sume\u0301 ${i}";   ` : `  const value_${i} = \u2018item ${i}\u2019;   `;
    lines.push(line);
    size += line.length + 1;
  }
  return { text: `${lines.join("\n")}\n`, lines: lines.length };
}

function oldTextOf(kind: Kind, line: number): string {
  if (kind === "exact") return `const value_${line} = \u2018item ${line}\u2019;`;
  if (kind === "quotes") return `const value_${line} = 'item ${line}';`;
  return `const caf\u00e9_${line} = "r\u00e9sum\u00e9 ${line}";`;
}

async function timeCall(kind: Kind): Promise<number> {
  const { text, lines } = fileOf(kind);
  const step = Math.floor(lines / MAX_EDITS_PER_CALL);
  const edits = Array.from({ length: MAX_EDITS_PER_CALL }, (_, k) => ({ oldText: oldTextOf(kind, k * step + 7), newText: `edited ${k}` }));
  const samples: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const fs = new MemoryWorkspaceFs({ "big.txt": text });
    const start = performance.now();
    const out = await editTool.execute({ path: "big.txt", edits }, toolContext(fs, { allowWrite: true }));
    samples.push(performance.now() - start);
    expect(out.text.split("\n")[0]!.startsWith(`Successfully replaced ${MAX_EDITS_PER_CALL} blocks in big.txt.`)).toBe(true);
    expect(fs.text("big.txt").split("edited ").length).toBe(MAX_EDITS_PER_CALL + 1);
  }
  return median(samples);
}

it("edit: 100 edits of a 15 MB file, exact vs matched after normalising vs after composing", async () => {
  const rows: string[] = [];
  const exact = await timeCall("exact");
  for (const kind of ["exact", "quotes", "composed"] as const) {
    const ms = kind === "exact" ? exact : await timeCall(kind);
    rows.push(`| ${kind} | ${ms.toFixed(0)} ms | ${(ms / exact).toFixed(2)}x |`);
  }
  console.log(
    `\nedit: ${MAX_EDITS_PER_CALL} edits in one call on a ${FILE_CHARS / 1e6} M-character file, median of ${RUNS}\n` +
      `| oldText | one call | / exact |\n| --- | --- | --- |\n${rows.join("\n")}\n`,
  );
});
