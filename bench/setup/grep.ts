import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { copySourceTree } from "../fixtures/source-tree";

/**
 * Global setup for bench/grep.bench.ts, run in Node: copies .js/.ts source files from
 * node_modules into a temp tree until it holds at least MIN_SOURCE_BYTES, times ripgrep `rg -n`
 * (installed from Debian's packages when missing), GNU `grep -rn` and GNU `find` on that tree, and
 * serves a tar of it over a local HTTP server for the bench (in workerd) to ingest as a real snapshot.
 */
/**
 * The tree's size: 32 MiB, or `GREP_BENCH_MB` MiB (about 90 is what node_modules holds; a tree
 * larger than the isolate's text cache shows what a grep costs when part of it is always read from R2).
 */
const MIN_SOURCE_BYTES = treeMiB(process.env.GREP_BENCH_MB) * 1024 * 1024;
/** Files above this are left out so no search skips them (grep's own cap is 8 MB). */
const MAX_COPIED_FILE_BYTES = 4 * 1024 * 1024;
const SOURCE_FILE = /\.(m?js|cjs|[cm]?ts)$/;
const BASELINE_RUNS = 5;

export interface GrepBenchCase {
  label: string;
  /** Arguments of the grep tool. */
  args: { pattern: string; ignoreCase?: boolean; literal?: boolean };
  /** The GNU grep command line run on the unpacked tree (cwd = tree). */
  gnuCommand: string;
  gnuMs: number;
  /** Matching lines GNU grep printed. */
  gnuMatches: number;
  /** The same search with ripgrep, or null when ripgrep could not be had. */
  rg: { command: string; ms: number; matches: number } | null;
}

/** One of the patterns models write, timed with `rg -n` on the tree (bench/grep-patterns.bench.ts). */
export interface CommonPatternBaseline {
  pattern: string;
  rgMs: number;
  rgMatches: number;
}

export interface GrepBenchInput {
  baseUrl: string;
  files: number;
  sourceBytes: number;
  cases: GrepBenchCase[];
  /** Empty when ripgrep could not be had. */
  commonPatterns: CommonPatternBaseline[];
  find: { pattern: string; gnuCommand: string; gnuMs: number; gnuResults: number };
  /** `rg --version`'s first line, or why there is no ripgrep column. */
  rgVersion: string;
  grepVersion: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    grepBench: GrepBenchInput;
  }
}

const CASES: Omit<GrepBenchCase, "gnuMs" | "gnuMatches" | "gnuCommand" | "rg">[] = [
  { label: "literal, rare", args: { pattern: "deprecated", literal: true } },
  { label: "literal, common", args: { pattern: "return", literal: true } },
  { label: "regex", args: { pattern: "function [a-zA-Z]+\\(" } },
  { label: "regex, ignore case", args: { pattern: "todo|fixme", ignoreCase: true } },
  // Texts joined by .*, the regex models write most (found in order, not by V8's backtracking).
  { label: "texts joined by .*", args: { pattern: "return.*\\(.+\\);" } },
  // A class before the text: V8's scan tries it at every position; the text picks the lines instead.
  { label: "a class, then text", args: { pattern: "[a-zA-Z]+Error\\(" } },
  // Two .* around a class: ran on RE2 (hunt 70's neighbouring repetitions) until chains took classes (stop 48).
  { label: "two .* around a class", args: { pattern: 'import .* from ["@].*"' } },
];

function treeMiB(setting: string | undefined): number {
  if (setting === undefined || setting === "") return 32;
  const mib = Number(setting);
  if (!Number.isFinite(mib) || mib < 1) throw new Error(`GREP_BENCH_MB must be a number of MiB (1 or more), not '${setting}'`);
  return mib;
}

/**
 * Patterns of the shapes coding agents give grep (literals, identifiers after a keyword, calls,
 * anchored lines, classes, `.*` joins, alternations, case-insensitive), for a bench of many shapes
 * rather than a few. Left out: patterns whose count depends on "\r" before "\n" (`\s+$`), since
 * grep drops a line's trailing "\r" and rg keeps it.
 */
const COMMON_PATTERNS = [
  "TODO",
  "console\\.log",
  "export default",
  "export (const|function|class) \\w+",
  "function \\w+\\(",
  "class \\w+ extends \\w+",
  "import .* from ['\"]react['\"]",
  "require\\(['\"][^'\"]+['\"]\\)",
  "\\bPromise\\.all\\b",
  "async function",
  "throw new \\w+Error",
  "\\.then\\(",
  "process\\.env\\.\\w+",
  "module\\.exports\\s*=",
  "interface \\w+ \\{",
  "type \\w+ = ",
  "^import",
  "^export",
  "@deprecated",
  "new Map\\(",
  "\\w+\\.prototype\\.\\w+ = function",
  "if \\(.*\\) \\{",
  "catch \\((e|err|error)\\)",
  "setTimeout\\(",
  "JSON\\.parse\\(",
  '"version":\\s*"[^"]+"',
  "const \\w+ = require\\(",
  "(?i)license",
  "\\$\\{[^}]+\\}",
  "=>\\s*\\{",
  "[A-Z_]{10,}",
  "https?://[^\\s'\"]+",
  "\\bthis\\.\\w+\\s*=",
  "return\\s+null",
  "useEffect\\(",
  "for \\(let i = 0",
  "\\d{4}-\\d{2}-\\d{2}",
  "Object\\.keys\\(.*\\)\\.forEach",
  ".*Error.*",
  "function.*\\(.*\\).*\\{",
  "(?i)todo|fixme|hack|xxx",
  "\\bif\\s*\\(",
  "[a-z]+_[a-z]+",
  "^\\s*//",
  "^\\s*\\*",
  "\\w+\\(\\)",
  "\\.(map|filter|reduce)\\(",
  "\\bnull\\b",
  "\\w+Error\\b",
  "[0-9a-f]{8}-[0-9a-f]{4}",
  "\\b(get|set|has|delete)\\w*\\(",
  "(useState|useEffect|useMemo|useCallback|useRef|useContext)",
];

export default async function setup(project: TestProject) {
  const root = mkdtempSync(join(tmpdir(), "grep-bench-"));
  const tree = join(root, "tree");
  const modules = join(process.cwd(), "node_modules");
  const { files, sourceBytes } = copySourceTree(modules, tree, {
    dirs: [""],
    include: SOURCE_FILE,
    stopAtBytes: MIN_SOURCE_BYTES,
    minBytes: MIN_SOURCE_BYTES,
    maxFileBytes: MAX_COPIED_FILE_BYTES,
  });

  const sh = (command: string) => {
    const result = spawnSync("sh", ["-c", command], { cwd: tree, env: { ...process.env, LC_ALL: "C" }, maxBuffer: 1 << 30 });
    if (result.status !== 0 && result.status !== 1) throw new Error(`${command}: ${result.stderr}`);
    return result.stdout.toString("latin1");
  };
  const time = (command: string) => {
    const samples: number[] = [];
    for (let i = 0; i < BASELINE_RUNS; i++) {
      const start = performance.now();
      sh(command);
      samples.push(performance.now() - start);
    }
    return { ms: samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]! };
  };

  const rgVersion = ensureRipgrep();
  const hasRg = rgVersion.startsWith("ripgrep");
  // Output goes to a file: GNU grep stops at the first match when stdout is /dev/null.
  const out = join(root, "out.txt");
  const cases = CASES.map((c) => {
    const flags = ["-rn", c.args.literal ? "-F" : "-E", c.args.ignoreCase ? "-i" : ""].filter(Boolean).join(" ");
    const gnuCommand = `grep ${flags} '${c.args.pattern}' .`;
    const timed = time(`${gnuCommand} > '${out}'`);
    const gnuMatches = Number(sh(`wc -l < '${out}'`).trim());
    let rg: GrepBenchCase["rg"] = null;
    if (hasRg) {
      // --hidden: like the grep tool (and pi's rg call), files under dot-directories are searched too.
      const rgFlags = ["-n", "--hidden", c.args.literal ? "-F" : "", c.args.ignoreCase ? "-i" : ""].filter(Boolean).join(" ");
      const command = `rg ${rgFlags} '${c.args.pattern}' .`;
      const rgTimed = time(`${command} > '${out}'`);
      rg = { command, ms: rgTimed.ms, matches: Number(sh(`wc -l < '${out}'`).trim()) };
    }
    return { ...c, gnuCommand, gnuMs: timed.ms, gnuMatches, rg };
  });
  // Run without a shell: some of these hold both kinds of quote.
  const commonPatterns = hasRg
    ? COMMON_PATTERNS.map((pattern) => {
        const samples: number[] = [];
        for (let i = 0; i < BASELINE_RUNS; i++) {
          const fd = openSync(out, "w");
          const start = performance.now();
          const result = spawnSync("rg", ["-n", "--hidden", "-e", pattern, "."], { cwd: tree, stdio: ["ignore", fd, "pipe"] });
          samples.push(performance.now() - start);
          closeSync(fd);
          if (result.status !== 0 && result.status !== 1) throw new Error(`rg ${pattern}: ${result.stderr}`);
        }
        return {
          pattern,
          rgMs: samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!,
          rgMatches: Number(sh(`wc -l < '${out}'`).trim()),
        };
      })
    : [];
  const findCommand = "find . -name 'index.*'";
  const findTimed = time(`${findCommand} > '${out}'`);
  const findResults = Number(sh(`wc -l < '${out}'`).trim());

  spawnSync("tar", ["-cf", join(root, "tree.tar"), "-C", tree, "."]);
  const server = createServer((req, res) => {
    if (req.url !== "/tree.tar") return res.writeHead(404).end();
    const body = readFileSync(join(root, "tree.tar"));
    res.writeHead(200, { "content-type": "application/x-tar", "content-length": body.byteLength }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no server address");
  project.provide("grepBench", {
    baseUrl: `http://127.0.0.1:${address.port}`,
    files,
    sourceBytes,
    cases,
    commonPatterns,
    find: { pattern: "index.*", gnuCommand: findCommand, gnuMs: findTimed.ms, gnuResults: findResults },
    rgVersion,
    grepVersion: sh("grep --version").split("\n")[0] ?? "",
  });

  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(root, { recursive: true, force: true });
  };
}

/**
 * ripgrep's version line, installing Debian's package first when `rg` is missing; otherwise the
 * reason there is none (the bench then prints a notice and leaves the column out).
 */
function ensureRipgrep(): string {
  const version = () => spawnSync("rg", ["--version"]).stdout?.toString().split("\n")[0] ?? "";
  if (version().startsWith("ripgrep")) return version();
  const apt = (...args: string[]) =>
    spawnSync("apt-get", args, { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }, stdio: "ignore" });
  if (apt("install", "-y", "ripgrep").status !== 0) {
    apt("update");
    apt("install", "-y", "ripgrep");
  }
  return version().startsWith("ripgrep") ? version() : "no ripgrep: `apt-get install -y ripgrep` failed (not root, or no package source)";
}
