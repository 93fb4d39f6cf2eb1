import { expect, it } from "vitest";
import { LineMatcher } from "../src/tools/grep-matcher";
import { median } from "./median";

/**
 * grep's matcher on inputs a model can pick to make the shortcuts slow (hunt 87), next to the plain
 * ways in the same run: `indexOf` for a plain text (linear), one `gm` scan for a regex. The finder
 * searches from a text's rarest character and checks the text where that occurs, and a regex's lines
 * are picked by a text every match holds: where that character or text comes at nearly every place,
 * both must give way before they cost more than the plain way. Median of RUNS.
 */
const RUNS = 5;

function time(run: () => number): { ms: number; result: number } {
  const samples: number[] = [];
  let result = 0;
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    result = run();
    samples.push(performance.now() - start);
  }
  return { ms: median(samples), result };
}

/** Lines a `gm` scan finds a match in, as grep counts them (one per line). */
function scanCount(source: string, text: string): number {
  const scan = new RegExp(source, "gm");
  let n = 0;
  for (let found = scan.exec(text); found; found = scan.exec(text)) {
    n++;
    const end = text.indexOf("\n", found.index);
    if (end < 0) break;
    scan.lastIndex = end + 1;
  }
  return n;
}

function indexOfCount(needle: string, text: string): number {
  let n = 0;
  for (let at = text.indexOf(needle); at >= 0; ) {
    n++;
    const end = text.indexOf("\n", at);
    if (end < 0) break;
    at = text.indexOf(needle, end + 1);
  }
  return n;
}

it("grep's matcher on adversarial input, next to indexOf and a gm scan", () => {
  const MiB = 1024 * 1024;
  const tildes = `${"~".repeat(5 * MiB)}x`;
  const equalsLines = `${"=".repeat(79)}\n`.repeat((5 * MiB) / 80);
  const abLines = "ab\n".repeat(2_000_000);
  const returns = "  return foo(bar);\n".repeat(300_000);
  const cases = [
    { label: "plain text of 1,000 `~` and `x`, one 5 MiB line of `~`", pattern: `${"~".repeat(1000)}x`, text: tildes, plain: true },
    { label: "plain text of 100 `=`, 5 MiB of 79-character `=` lines", pattern: "=".repeat(100), text: equalsLines, plain: true },
    { label: "`[0-9]?` then 1,000 `~` and `x`, one 5 MiB line of `~`", pattern: `[0-9]?${"~".repeat(1000)}x`, text: tildes, plain: false },
    { label: "`[0-9]+ab`, 2,000,000 lines of `ab`", pattern: "[0-9]+ab", text: abLines, plain: false },
    { label: "`return [a-z]+;`, 300,000 lines of `  return foo(bar);`", pattern: "return [a-z]+;", text: returns, plain: false },
  ];
  const rows: string[] = [];
  for (const c of cases) {
    const grep = time(() => new LineMatcher(c.pattern, { literal: c.plain }).countMatchingLines(c.text));
    const plain = time(() => (c.plain ? indexOfCount(c.pattern, c.text) : scanCount(c.pattern, c.text)));
    expect(grep.result).toBe(plain.result);
    rows.push(
      `| ${c.label} | ${grep.result} | ${grep.ms.toFixed(0)} ms | ${c.plain ? "indexOf" : "gm scan"} ${plain.ms.toFixed(0)} ms | ${(grep.ms / Math.max(plain.ms, 1)).toFixed(1)}x |`,
    );
  }
  console.log(
    `\nAdversarial grep bench, median of ${RUNS}\n| input | matching lines | grep's matcher | plain way | ratio (plain way at 1 ms at least) |\n| --- | --- | --- | --- | --- |\n${rows.join("\n")}`,
  );
});
