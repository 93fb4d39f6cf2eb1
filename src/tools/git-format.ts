/**
 * How git writes paths and diff statistics, for the shell's `git` (bash-git.ts): its C-style
 * quoting of unusual names, paths relative to the current directory, and `--stat`'s columns and
 * scaled graph (git's diff.c `show_stats`, for output that is not a terminal: 80 columns).
 */

const encoder = new TextEncoder();
/** Escapes git writes with a letter (quote.c `cq_lookup`). */
const LETTER_ESCAPES: Readonly<Record<number, string>> = { 7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 34: '"', 92: "\\" };

/**
 * A path as git shows it (core.quotePath on): in double quotes with C escapes when it holds a control
 * character, `"`, `\` or a byte outside ASCII (octal); `quoteSpaces` also quotes one holding a space,
 * as `git status` does in its short forms.
 */
export function quotePath(path: string, quoteSpaces = false): string {
  const bytes = encoder.encode(path);
  const unusual = (b: number) => b < 0x20 || b === 0x22 || b === 0x5c || b >= 0x7f || (quoteSpaces && b === 0x20);
  if (!bytes.some(unusual)) return path;
  let out = '"';
  for (const b of bytes) {
    const letter = LETTER_ESCAPES[b];
    if (letter !== undefined) out += `\\${letter}`;
    else if (b < 0x20 || b >= 0x7f) out += `\\${b.toString(8).padStart(3, "0")}`;
    else out += String.fromCharCode(b);
  }
  return `${out}"`;
}

/** `path` (from the workspace root) as seen from directory `cwd` (from the root, "" for it): `../a`, `b/c`. */
export function relativePath(path: string, cwd: string): string {
  if (cwd === "") return path;
  const from = cwd.split("/");
  const to = path.split("/");
  let common = 0;
  while (common < from.length && common < to.length - 1 && from[common] === to[common]) common++;
  return [...from.slice(common).map(() => ".."), ...to.slice(common)].join("/");
}

/** One file of `--stat`: lines added and removed, or for a binary file its sizes before and after. */
export interface StatEntry {
  name: string;
  added: number;
  removed: number;
  binary?: { before: number; after: number };
}

/** Columns git gives `--stat` when its output is not a terminal. */
const STAT_WIDTH = 80;

const digits = (n: number) => String(n).length;

/** `git diff --stat`: a line per file (name, count, scaled + and - graph), then the summary. */
export function formatStat(entries: readonly StatEntry[]): string {
  let maxName = 0;
  let maxChange = 0;
  let binWidth = 0;
  let numberWidth = 0;
  for (const entry of entries) {
    maxName = Math.max(maxName, [...entry.name].length);
    if (entry.binary) {
      // "Bin XXX -> YYY bytes", its counts aligned with "Bin".
      binWidth = Math.max(binWidth, 14 + digits(entry.binary.after) + digits(entry.binary.before));
      numberWidth = 3;
    } else maxChange = Math.max(maxChange, entry.added + entry.removed);
  }
  numberWidth = Math.max(numberWidth, digits(maxChange));
  const width = Math.max(STAT_WIDTH, 16 + 6 + numberWidth);
  let graphWidth = maxChange + 4 > binWidth ? maxChange : binWidth - 4;
  let nameWidth = maxName;
  if (nameWidth + numberWidth + 6 + graphWidth > width) {
    if (graphWidth > Math.trunc((width * 3) / 8) - numberWidth - 6) graphWidth = Math.max(6, Math.trunc((width * 3) / 8) - numberWidth - 6);
    if (nameWidth > width - numberWidth - 6 - graphWidth) nameWidth = width - numberWidth - 6 - graphWidth;
    else graphWidth = width - numberWidth - 6 - nameWidth;
  }
  // At least one mark for any change: scaled as if the graph were a column shorter, plus one.
  const scale = (n: number) => (n === 0 ? 0 : 1 + Math.trunc((n * (graphWidth - 1)) / maxChange));
  let out = "";
  let insertions = 0;
  let deletions = 0;
  for (const entry of entries) {
    let prefix = "";
    let name = [...entry.name];
    let room = nameWidth;
    if (name.length > nameWidth) {
      // A long name loses its start, up to a slash where one is left: "...dir/file".
      prefix = "...";
      room = Math.max(0, room - 3);
      name = name.slice(name.length - room);
      const slash = name.indexOf("/");
      if (slash >= 0) name = name.slice(slash);
    }
    const shown = `${prefix}${name.join("")}${" ".repeat(Math.max(0, room - name.length))}`;
    if (entry.binary) {
      out += ` ${shown} | ${"Bin".padStart(numberWidth)}`;
      out += entry.binary.before || entry.binary.after ? ` ${entry.binary.before} -> ${entry.binary.after} bytes\n` : "\n";
      continue;
    }
    insertions += entry.added;
    deletions += entry.removed;
    const change = entry.added + entry.removed;
    let add = entry.added;
    let del = entry.removed;
    if (graphWidth <= maxChange) {
      let total = scale(change);
      if (total < 2 && add > 0 && del > 0) total = 2;
      if (add < del) {
        add = scale(add);
        del = total - add;
      } else {
        del = scale(del);
        add = total - del;
      }
    }
    out += ` ${shown} | ${String(change).padStart(numberWidth)}${change ? " " : ""}${"+".repeat(add)}${"-".repeat(del)}\n`;
  }
  return out + statSummary(entries.length, insertions, deletions);
}

/** `--shortstat`'s line (and `--stat`'s last): " 2 files changed, 3 insertions(+), 1 deletion(-)". */
export function statSummary(files: number, insertions: number, deletions: number): string {
  if (files === 0) return "";
  let out = ` ${files} file${files === 1 ? "" : "s"} changed`;
  // As git: a part that is 0 is left out, unless both are.
  if (insertions || deletions === 0) out += `, ${insertions} insertion${insertions === 1 ? "" : "s"}(+)`;
  if (deletions || insertions === 0) out += `, ${deletions} deletion${deletions === 1 ? "" : "s"}(-)`;
  return `${out}\n`;
}
