import { sliceWhole } from "../domain/json";
import { ToolError } from "./tool";

// How edit finds the text to replace: exactly, else after normalising (with a map back to the
// file's offsets); and, when nothing matches, the file line nearest to what the model sent.

/** Where oldText is in the file, and what the match had to overlook (nothing for an exact match). */
export interface Located {
  start: number;
  end: number;
  normalised: readonly Normalisation[];
}

/**
 * Finds the one place oldText names: exactly, else (as pi's edit does) after normalising both
 * texts, with whitespace at line ends dropped and typographic quotes, Unicode dashes and spaces
 * read as their ASCII lookalikes, else with both composed as well (NFC; pi compares NFKC). Unlike
 * pi, only the matched span of the file is replaced; the rest keeps its characters.
 */
export function locate(file: FileTexts, oldText: string, path: string): Located {
  const { content } = file;
  const exact = occurrences(content, oldText);
  const first = exact.first[0];
  if (exact.count === 1 && first !== undefined) return { start: first, end: first + oldText.length, normalised: [] };
  if (exact.count > 1) throw ambiguous(path, content, exact, ".");

  const needle = normalise(oldText);
  const haystack = file.normalised;
  const near = needle === "" ? { count: 0, first: [] } : occurrences(haystack, needle);
  const at = near.first[0];
  if (near.count > 1) throw ambiguous(path, haystack, near, `, ignoring ${listed(NORMALISATIONS)}; none matches exactly.`);
  if (at === undefined) {
    const composed = locateComposed(file, oldText, needle, path);
    if (composed) return composed;
    throw new ToolError(
      "no_match",
      `Could not find oldText in ${path}. It must match the file exactly, including whitespace and indentation; read the file and copy the text to replace.${nearMissHint(content, haystack, oldText)}`,
    );
  }
  const start = file.originalOffset(at);
  const last = file.originalOffset(at + needle.length - 1);
  return { start, end: last + 1, normalised: overlooked(content.slice(start, last + 1), oldText) };
}

/**
 * The match of the last resort: the texts compared composed (NFC), so an é written as one character
 * in one and as e and a combining accent in the other (as macOS writes names and text) is the same
 * é. Null when composing changes neither text or still nothing matches.
 */
function locateComposed(file: FileTexts, oldText: string, needle: string, path: string): Located | null {
  const { content, normalised: haystack } = file;
  const composedNeedle = needle.normalize("NFC");
  const composedHaystack = file.composed;
  if (composedNeedle === needle && composedHaystack === haystack) return null;
  const found = composedNeedle === "" ? { count: 0, first: [] } : occurrences(composedHaystack, composedNeedle);
  const at = found.first[0];
  if (found.count > 1) {
    throw ambiguous(
      path,
      composedHaystack,
      found,
      `, ignoring ${listed([...NORMALISATIONS, "Unicode composition"])}; none matches exactly.`,
    );
  }
  if (at === undefined) return null;
  // A match that starts or ends inside what one character and its marks compose to (a mark NFC leaves
  // apart, e + U+0301 + U+0331 -> é + U+0331) has no span of its own in the file: none is taken.
  const from = file.normalisedOffset(at);
  const to = file.normalisedOffset(at + composedNeedle.length);
  if (from === null || to === null) return null;
  const start = file.originalOffset(from);
  const last = file.originalOffset(to - 1);
  const matched = content.slice(start, last + 1);
  return { start, end: last + 1, normalised: [...overlooked(matched.normalize("NFC"), oldText.normalize("NFC")), "Unicode composition"] };
}

/** A character and the marks (or Hangul jamo) composing with it. */
const COMPOSING_SEGMENT = /[\s\S][\p{M}\u1160-\u11ff]*/gu;

/** Where in `line` its composed text's offset `offset` falls: a segment's start, the line's end, or null inside a segment. */
function lineOffset(line: string, composedLine: string, offset: number): number | null {
  if (composedLine === line) return offset;
  let k = 0;
  for (const segment of line.matchAll(COMPOSING_SEGMENT)) {
    if (offset === k) return segment.index;
    if (offset < k) return null;
    k += segment[0].normalize("NFC").length;
  }
  return offset === k ? line.length : null;
}

/**
 * A file's text as each pass compares it, and where each line starts in each, made once for all the
 * edits of a call: 100 edits of a 15 MB file normalised it 100 times (52 s, hunt 80), then walked
 * its lines once per edit to map a match back (13-20 s in Node).
 */
export class FileTexts {
  private normalisedText?: string;
  private composedText?: string;
  /** Per line (the text split at "\n"), where it starts in `content` and in `normalised`. */
  private lineStarts?: { original: Int32Array; normalised: Int32Array };
  /** Per line, where it starts in `composed`. */
  private composedStarts?: Int32Array;

  constructor(readonly content: string) {}

  /** As the second pass compares it (`normalise`). */
  get normalised(): string {
    if (this.normalisedText === undefined) {
      const lines = this.content.split("\n");
      const kept = lines.map(trimBlanksEnd);
      this.lineStarts = { original: startsOf(lines), normalised: startsOf(kept) };
      this.normalisedText = asciiLookalikes(kept.join("\n"));
    }
    return this.normalisedText;
  }

  /**
   * As the last pass compares it: normalised, then composed (NFC). Composition never crosses a line
   * break ("\n" composes with nothing), so each line is composed on its own and keeps its number.
   */
  get composed(): string {
    if (this.composedText === undefined) {
      const lines = this.normalised.split("\n").map((line) => line.normalize("NFC"));
      this.composedStarts = startsOf(lines);
      this.composedText = lines.join("\n");
    }
    return this.composedText;
  }

  /** The offset in `content` of the character at `at` in `normalised` (a line's "\n" is after its blanks). */
  originalOffset(at: number): number {
    const normalised = this.normalised;
    const starts = this.lineStarts!;
    const line = lineAt(starts.normalised, at);
    const kept = lineEnd(starts.normalised, line, normalised.length) - starts.normalised[line]!;
    const into = at - starts.normalised[line]!;
    return starts.original[line]! + (into < kept ? into : lineEnd(starts.original, line, this.content.length) - starts.original[line]!);
  }

  /**
   * The offset in `normalised` that composes to the offset `at` of `composed`: a character's start,
   * a line's end, or null when `at` falls inside what one character and its marks compose to.
   */
  normalisedOffset(at: number): number | null {
    const composed = this.composed;
    const normalised = this.normalised;
    const starts = this.composedStarts!;
    const normalisedStarts = this.lineStarts!.normalised;
    const line = lineAt(starts, at);
    const from = normalisedStarts[line]!;
    const within = lineOffset(
      normalised.slice(from, lineEnd(normalisedStarts, line, normalised.length)),
      composed.slice(starts[line]!, lineEnd(starts, line, composed.length)),
      at - starts[line]!,
    );
    return within === null ? null : from + within;
  }
}

/** Where each of `lines` starts in their text joined by "\n". */
function startsOf(lines: readonly string[]): Int32Array {
  const starts = new Int32Array(lines.length);
  for (let i = 1; i < lines.length; i++) starts[i] = starts[i - 1]! + lines[i - 1]!.length + 1;
  return starts;
}

/** The last line starting at or before `offset`. */
function lineAt(starts: Int32Array, offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >>> 1;
    if (starts[mid]! <= offset) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** Where line `line` ends (its "\n", or the text's end). */
function lineEnd(starts: Int32Array, line: number, textLength: number): number {
  return line + 1 < starts.length ? starts[line + 1]! - 1 : textLength;
}

/** Names the lines of the first occurrences (a one-letter oldText can occur 100,000 times in a file). */
function ambiguous(path: string, text: string, found: Occurrences, how: string): ToolError {
  const lines = [...new Set(found.first.map((offset) => lineOf(text, offset)))];
  const more = found.count > found.first.length ? ", ..." : "";
  const count = found.count > MAX_COUNTED_OCCURRENCES ? `more than ${MAX_COUNTED_OCCURRENCES}` : String(found.count);
  return new ToolError(
    "ambiguous_match",
    `Found ${count} occurrences of oldText in ${path} (at line${lines.length === 1 && !more ? "" : "s"} ${lines.join(", ")}${more})${how} It must occur exactly once: add surrounding lines to oldText to make it unique.`,
  );
}

/** What the fallback match overlooks, in the order messages name them (composition last, as its own pass). */
export type Normalisation = "trailing whitespace" | "typographic quotes" | "Unicode dashes" | "Unicode spaces" | "Unicode composition";
const NORMALISATIONS: readonly Normalisation[] = ["trailing whitespace", "typographic quotes", "Unicode dashes", "Unicode spaces"];

/** Non-breaking and other Unicode spaces. */
const UNICODE_SPACES = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000";
const UNICODE_SPACE = new RegExp(`[${UNICODE_SPACES}]`, "g");

/** Characters the fallback match reads as an ASCII one, by kind. */
const LOOKALIKES = [
  { kind: "typographic quotes", ascii: "'", chars: "‘’‚‛′" },
  { kind: "typographic quotes", ascii: '"', chars: "“”„‟″" },
  { kind: "Unicode dashes", ascii: "-", chars: "‐‑‒–—―−" },
  { kind: "Unicode spaces", ascii: " ", chars: UNICODE_SPACES },
].map((l) => ({ ...l, kind: l.kind as Normalisation, pattern: new RegExp(`[${l.chars}]`, "g") }));

/** The kind of a lookalike character, else undefined. */
function lookalikeKind(c: string): Normalisation | undefined {
  return c.length === 1 ? LOOKALIKES.find((l) => l.chars.includes(c))?.kind : undefined;
}

function asciiLookalikes(text: string): string {
  let out = text;
  for (const { ascii, pattern } of LOOKALIKES) out = out.replace(pattern, ascii);
  return out;
}

/** A space, a tab, or a Unicode space (read as a space). */
function isBlank(c: string | undefined): boolean {
  return c === " " || c === "\t" || (c?.length === 1 && UNICODE_SPACES.includes(c));
}

/** `line` without its trailing blanks. */
function trimBlanksEnd(line: string): string {
  let end = line.length;
  while (end > 0 && isBlank(line[end - 1])) end--;
  return line.slice(0, end);
}

/** The text the fallback match compares: blanks at line ends dropped, lookalikes made ASCII. */
function normalise(text: string): string {
  return asciiLookalikes(text.split("\n").map(trimBlanksEnd).join("\n"));
}

/** What differs between the matched span of the file and oldText (both normalise to the same text). */
function overlooked(span: string, oldText: string): Normalisation[] {
  const kinds = new Set<Normalisation>();
  // Lookalikes are one character for one: what is left after mapping them is the line ends' blanks.
  if (asciiLookalikes(span) !== asciiLookalikes(oldText)) kinds.add("trailing whitespace");
  const a = span.split("\n").map(trimBlanksEnd).join("\n");
  const b = oldText.split("\n").map(trimBlanksEnd).join("\n");
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] ?? "";
    const y = b[i] ?? "";
    if (x === y) continue;
    const kind = lookalikeKind(x) ?? lookalikeKind(y);
    if (kind) kinds.add(kind);
  }
  return NORMALISATIONS.filter((k) => kinds.has(k));
}

/** "a", "a and b", "a, b and c". */
export function listed(items: readonly string[]): string {
  return items.length < 2 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** Below this similarity (Dice coefficient of character pairs) no file line is named as the nearest. */
const NEAR_MISS_MIN_SIMILARITY = 0.5;
/** Of the lines equally similar to oldText's first line, at most this many are followed further. */
const NEAR_MISS_MAX_CANDIDATES = 50;
/**
 * A candidate's agreement with oldText is followed for at most this many characters of oldText: 50
 * candidates walked through a 2 MB oldText held the isolate 18 s (hunt 70). Candidates that agree
 * this far tie, and the first is taken.
 */
const NEAR_MISS_MAX_AGREE_CHARS = 64 * 1024;
/** A line a hint quotes is cut to this many characters. */
const NEAR_MISS_SHOWN_CHARS = 120;

/**
 * For a failed match: the file line nearest to oldText's first non-blank line (the one whose
 * following lines agree with oldText longest, the first of those), then the first line from
 * there on that differs from oldText, quoted, with what differs when it is only whitespace or
 * lookalike characters. Empty when no line is similar enough.
 */
function nearMissHint(content: string, haystack: string, oldText: string): string {
  const wanted = oldText.split("\n");
  const k = wanted.findIndex((line) => line.trim() !== "");
  const lines = content.split("\n");
  const anchor = k < 0 ? null : nearestLine(haystack.split("\n"), wanted, k);
  if (anchor === null) return "";
  for (let j = k; j < wanted.length; j++) {
    const want = wanted[j] ?? "";
    const have = lines[anchor + j - k];
    if (have === undefined)
      return ` oldText's line ${k + 1} is nearest to line ${anchor + 1} of the file, but oldText goes on past the file's end.`;
    if (sameLine(have, want, j === k, j === wanted.length - 1)) continue;
    const differs = lineDifferences(have, want);
    const how = differs.length > 0 ? ` (they differ in ${listed(differs)})` : "";
    return ` Nearest: line ${anchor + j - k + 1} of the file is ${quoted(have)}; oldText has ${quoted(want)}${how}.`;
  }
  return "";
}

/** Whether a file line holds oldText's line: its first line may start mid-line, its last end mid-line. */
function sameLine(have: string, want: string, first: boolean, last: boolean): boolean {
  if (first && last) return have.includes(want);
  if (first) return have.endsWith(want);
  if (last) return have.startsWith(want);
  return have === want;
}

/** `lines`: the file's lines normalised (they keep their places). */
function nearestLine(lines: readonly string[], wanted: readonly string[], k: number): number | null {
  const target = new PairCounts(loose(wanted[k] ?? ""));
  let best = NEAR_MISS_MIN_SIMILARITY;
  let candidates: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const score = target.similarity(collapsed(lines[i] ?? ""), best);
    if (score > best) [best, candidates] = [score, []];
    if (score >= best && candidates.length < NEAR_MISS_MAX_CANDIDATES) candidates.push(i);
  }
  let nearest: number | null = null;
  let longest = -1;
  for (const i of candidates) {
    let agree = 0;
    for (let chars = 0; k + agree + 1 < wanted.length && chars < NEAR_MISS_MAX_AGREE_CHARS; agree++) {
      const want = wanted[k + agree + 1] ?? "";
      if (loose(lines[i + agree + 1] ?? "") !== loose(want)) break;
      chars += want.length + 1;
    }
    if (agree > longest) [nearest, longest] = [i, agree];
  }
  return nearest;
}

/** A line as the near-miss search compares it: lookalikes made ASCII, whitespace runs as one space, trimmed. */
function loose(line: string): string {
  return collapsed(asciiLookalikes(line));
}

function collapsed(line: string): string {
  return line.replace(/\s+/g, " ").trim();
}

/** The pairs of adjacent characters of a text, to score other texts against it (Dice coefficient). */
class PairCounts {
  /** Each distinct pair (as one number) and its slot in `counts`. */
  private readonly slots = new Map<number, number>();
  private readonly counts: number[] = [];
  /** Per slot, how many of its pairs the text being scored has used, valid where `seen` is `round`. */
  private readonly used: number[] = [];
  private readonly seen: number[] = [];
  private round = 0;

  constructor(readonly text: string) {
    for (let i = 0; i + 1 < text.length; i++) {
      const pair = text.charCodeAt(i) * 0x10000 + text.charCodeAt(i + 1);
      const slot = this.slots.get(pair) ?? this.slots.set(pair, this.counts.push(0) - 1).get(pair) ?? 0;
      this.counts[slot] = (this.counts[slot] ?? 0) + 1;
    }
  }

  /** 0 to 1, 1 for the same text; 0 as soon as it cannot reach `atLeast` (the shorter text bounds it). */
  similarity(other: string, atLeast: number): number {
    if (other === this.text) return 1;
    const mine = Math.max(0, this.text.length - 1);
    const theirs = Math.max(0, other.length - 1);
    if (mine + theirs === 0 || (2 * Math.min(mine, theirs)) / (mine + theirs) < atLeast) return 0;
    this.round++;
    let common = 0;
    for (let i = 0; i + 1 < other.length; i++) {
      const slot = this.slots.get(other.charCodeAt(i) * 0x10000 + other.charCodeAt(i + 1));
      if (slot === undefined) continue;
      if (this.seen[slot] !== this.round) [this.seen[slot], this.used[slot]] = [this.round, 0];
      if ((this.used[slot] ?? 0) < (this.counts[slot] ?? 0)) {
        this.used[slot] = (this.used[slot] ?? 0) + 1;
        common++;
      }
    }
    return (2 * common) / (mine + theirs);
  }
}

/** What differs between two lines that are the same but for whitespace and lookalikes; else nothing. */
function lineDifferences(have: string, want: string): string[] {
  if (loose(have) !== loose(want)) return [];
  const lead = (s: string) => s.slice(0, s.length - s.trimStart().length);
  const trail = (s: string) => s.slice(s.trimEnd().length);
  const innerRuns = (s: string) => asciiLookalikes(s.trim()).match(/\s+/g)?.join("|") ?? "";
  const unicodeSpaces = (s: string) => s.match(UNICODE_SPACE)?.join("") ?? "";
  const out: string[] = [];
  if (lead(have) !== lead(want)) out.push("indentation");
  if (trail(have) !== trail(want)) out.push("trailing whitespace");
  if (innerRuns(have) !== innerRuns(want)) out.push("spaces inside the line");
  // With whitespace runs made one space, the lines line up character for character.
  const a = have.trim().replace(/\s+/g, " ");
  const b = want.trim().replace(/\s+/g, " ");
  const kinds = new Set<Normalisation>();
  for (let i = 0; i < a.length; i++) {
    const kind = a[i] === b[i] ? undefined : (lookalikeKind(a[i] ?? "") ?? lookalikeKind(b[i] ?? ""));
    if (kind) kinds.add(kind);
  }
  if (unicodeSpaces(have) !== unicodeSpaces(want)) kinds.add("Unicode spaces");
  return [...out, ...NORMALISATIONS.filter((k) => k !== "trailing whitespace" && kinds.has(k))];
}

/** A line for a hint: JSON-quoted (tabs show as \t), Unicode spaces as \u escapes, cut when long. */
function quoted(line: string): string {
  const cut = line.length > NEAR_MISS_SHOWN_CHARS ? `${sliceWhole(line, NEAR_MISS_SHOWN_CHARS)}...` : line;
  return JSON.stringify(cut).replace(UNICODE_SPACE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Occurrences of oldText named in an `ambiguous_match`, and how far they are counted. */
const SHOWN_OCCURRENCES = 10;
const MAX_COUNTED_OCCURRENCES = 1000;

interface Occurrences {
  /** How many, up to one past MAX_COUNTED_OCCURRENCES. */
  count: number;
  /** Where the first SHOWN_OCCURRENCES start. */
  first: number[];
}

/**
 * The occurrences of `needle`, overlapping ones included ("xx" occurs twice in "xxx": either could
 * be meant). Counting stops past MAX_COUNTED_OCCURRENCES: one is all a match needs, more than one
 * is a refusal either way.
 */
function occurrences(haystack: string, needle: string): Occurrences {
  const first: number[] = [];
  let count = 0;
  for (let i = haystack.indexOf(needle); i >= 0 && count <= MAX_COUNTED_OCCURRENCES; i = haystack.indexOf(needle, i + 1)) {
    if (first.length < SHOWN_OCCURRENCES) first.push(i);
    count++;
  }
  return { count, first };
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}
