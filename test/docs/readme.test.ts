import { describe, expect, it } from "vitest";
import { BASH_DETAILS, ERROR_REGISTRY, type ErrorCode, LIMITS_TABLE } from "../../src/domain";

const README = (import.meta.glob("../../README.md", { query: "?raw", import: "default", eager: true }) as Record<string, string>)[
  "../../README.md"
]!;

/** The rows of the markdown table that follows `heading` (a line of text), as arrays of cells. */
function tableAfter(heading: string): string[][] {
  const start = README.indexOf(heading);
  expect(start).toBeGreaterThanOrEqual(0);
  const lines = README.slice(start).split("\n");
  const first = lines.findIndex((l) => l.startsWith("|"));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .split("|")
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

const codesIn = (kind: "api" | "run" | "tool") =>
  (Object.entries(ERROR_REGISTRY) as [ErrorCode, (typeof ERROR_REGISTRY)[ErrorCode]][]).filter(([, spec]) =>
    (spec.in as readonly string[]).includes(kind),
  );

describe("README error tables match the registry, row for row", () => {
  it("HTTP errors: code, status, meaning", () => {
    expect(tableAfter("HTTP errors:")).toEqual(codesIn("api").map(([code, spec]) => [`\`${code}\``, String(spec.status), spec.meaning]));
  });

  it("agent_error codes", () => {
    expect(tableAfter("`agent_error` codes")).toEqual(codesIn("run").map(([code, spec]) => [`\`${code}\``, spec.meaning]));
  });

  it("tool denial reasons", () => {
    expect(tableAfter("Tool denial reasons")).toEqual(codesIn("tool").map(([code, spec]) => [`\`${code}\``, spec.meaning]));
  });
});

describe("README names every code of the registry", () => {
  it("in a table or in the text", () => {
    expect(Object.keys(ERROR_REGISTRY).filter((code) => !README.includes(`\`${code}\``))).toEqual([]);
  });
});

describe("README limits table matches src/domain/limits.ts", () => {
  it("row for row", () => {
    expect(tableAfter("### Limits")).toEqual(LIMITS_TABLE.map(([what, limit]) => [what, limit]));
  });

  it("and the bash tool's bounds in detail, bullet for bullet, where the table's bash row points", () => {
    const start = README.indexOf("### The bash tool in detail\n");
    expect(start).toBeGreaterThanOrEqual(0);
    const lines = README.slice(start).split("\n");
    const first = lines.findIndex((line) => line.startsWith("- "));
    const bullets = lines.slice(first, lines.indexOf("", first)).map((line) => line.slice(2));
    expect(bullets).toEqual([...BASH_DETAILS]);
    expect(LIMITS_TABLE.find(([what]) => what === "`bash`")?.[1]).toMatch(/\[The bash tool in detail\]\(#the-bash-tool-in-detail\)$/);
  });
});
