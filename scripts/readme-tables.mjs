// Rewrites the README's generated tables (errors, denial reasons, limits) and the bash tool's bounds from src/domain, which
// test/docs/readme.test.ts checks row for row. Run after adding an error code or a limit:
//   node scripts/readme-tables.mjs
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const out = join(tmpdir(), `domain-${process.pid}.mjs`);
await build({ entryPoints: ["src/domain/index.ts"], bundle: true, format: "esm", platform: "neutral", outfile: out, logLevel: "error" });
const { BASH_DETAILS, ERROR_REGISTRY, LIMITS_TABLE } = await import(pathToFileURL(out).href);
rmSync(out);

const codes = (kind) => Object.entries(ERROR_REGISTRY).filter(([, spec]) => spec.in.includes(kind));
const tables = [
  ["HTTP errors:", ["code", "status", "meaning"], codes("api").map(([code, s]) => [`\`${code}\``, String(s.status), s.meaning])],
  ["`agent_error` codes", ["code", "meaning"], codes("run").map(([code, s]) => [`\`${code}\``, s.meaning])],
  ["Tool denial reasons", ["reason", "meaning"], codes("tool").map(([code, s]) => [`\`${code}\``, s.meaning])],
  ["### Limits", ["what", "limit"], LIMITS_TABLE.map(([what, limit]) => [what, limit])],
];

let readme = readFileSync("README.md", "utf8");
for (const [heading, header, rows] of tables) {
  const at = readme.indexOf(heading);
  if (at < 0) throw new Error(`README has no '${heading}'`);
  const start = readme.indexOf("\n|", at) + 1;
  let end = start;
  while (readme.startsWith("|", end)) end = readme.indexOf("\n", end) + 1;
  const row = (cells) => `| ${cells.join(" | ")} |\n`;
  readme = readme.slice(0, start) + row(header) + row(header.map(() => "---")) + rows.map(row).join("") + readme.slice(end);
}
// The bash tool's bounds in detail: one bullet each, after their heading and its paragraph.
{
  const heading = "### The bash tool in detail";
  const at = readme.indexOf(heading);
  if (at < 0) throw new Error(`README has no '${heading}'`);
  const start = readme.indexOf("\n- ", at) + 1;
  let end = start;
  while (readme.startsWith("- ", end)) end = readme.indexOf("\n", end) + 1;
  readme = readme.slice(0, start) + BASH_DETAILS.map((line) => `- ${line}\n`).join("") + readme.slice(end);
}
writeFileSync("README.md", readme);
console.log(
  `README tables rewritten: ${tables.map(([h, , rows]) => `${h} ${rows.length}`).join(", ")}; bash details ${BASH_DETAILS.length}`,
);
