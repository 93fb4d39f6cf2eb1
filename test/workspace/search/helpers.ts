import type { SearchQuery } from "../../../src/workspace/search/query";
import { BYTE_CLASS, CLASS_BITS, TRIGRAM_KEY_MASK, trigramKeysOf } from "../../../src/workspace/search/trigrams";

/** The trigram keys the index records for a file's bytes, written plainly (the builder inlines this). */
export function fileKeys(bytes: Uint8Array): Set<number> {
  const keys = new Set<number>();
  let key = 0;
  for (const b of bytes) {
    key = ((key << CLASS_BITS) | BYTE_CLASS[b]!) & TRIGRAM_KEY_MASK;
    keys.add(key);
  }
  return keys;
}

/** Whether a file with these trigram keys passes `query`. */
export function holds(query: SearchQuery, keys: Set<number>): boolean {
  switch (query.op) {
    case "all":
      return true;
    case "trigram":
      return keys.has(query.key);
    case "and":
      return query.of.every((q) => holds(q, keys));
    case "or":
      return query.of.some((q) => holds(q, keys));
  }
}

/** For each class, the first byte value (as a character) that maps to it. */
const CLASS_CHAR = new Map<number, string>();
for (let b = 255; b >= 0; b--) CLASS_CHAR.set(BYTE_CLASS[b]!, String.fromCharCode(b >= 0x41 && b <= 0x5a ? b + 0x20 : b));

/** The query as readable text: each trigram key shown as a character of each of its classes. */
export function show(query: SearchQuery): string {
  switch (query.op) {
    case "all":
      return "ALL";
    case "trigram":
      return JSON.stringify([2, 1, 0].map((i) => CLASS_CHAR.get((query.key >> (i * CLASS_BITS)) & ((1 << CLASS_BITS) - 1))).join(""));
    case "and":
      return `(${query.of.map(show).join(" & ")})`;
    case "or":
      return `(${query.of.map(show).join(" | ")})`;
  }
}

/** `show` of the plain AND of `text`'s trigrams, to write expectations. */
export function trigramsOf(text: string): string[] {
  return trigramKeysOf(text).map((key) => show({ op: "trigram", key }));
}

/** A small deterministic generator (mulberry32). */
export function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = ["a", "b", "c", "ab", "abc", "A", "B", "x", "é", "É", "ß", "😀", " ", "\t", "(", ")", "_", "1", "-", ".", "\r", "\u2028"];
const ATOMS = [
  "a",
  "b",
  "c",
  "A",
  "x",
  "é",
  "É",
  "ß",
  "😀",
  " ",
  "\\(",
  "\\.",
  ".",
  "\\w",
  "\\s",
  "\\d",
  "[ab]",
  "[a-c]",
  "[^a]",
  "[éÉ]",
  "\\x61",
  "\\u00e9",
  "\\b",
  "^",
  "$",
  "(?=a)",
  "(?!b)",
  "(?<=a)",
  "\\1",
  "\\r",
  "\\n",
  "[\\s\\S]",
];
const QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,2}", "{0,}", "+?"];

export function randomPattern(next: () => number, depth = 0): string {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  let out = "";
  const terms = 1 + Math.floor(next() * 6);
  for (let i = 0; i < terms; i++) {
    const roll = next();
    // Groups get no unbounded quantifier: nested ones backtrack exponentially on lines that do not match.
    if (roll < 0.15 && depth < 2) out += `(${randomPattern(next, depth + 1)})${pick(["", "?", "{2}"])}`;
    else if (roll < 0.22 && depth < 2) out += `(?:${randomPattern(next, depth + 1)}|${randomPattern(next, depth + 1)})${pick(["", "?"])}`;
    else {
      const atom = pick(ATOMS);
      out += atom + (/^[\^$]|^\\b|^\(\?[=!<]/.test(atom) ? "" : pick(QUANTIFIERS));
    }
  }
  return next() < 0.2 ? `${out}|${randomPattern(next, depth + 1)}` : out;
}

export function randomFile(next: () => number): Uint8Array {
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [];
  if (next() < 0.1) parts.push(new Uint8Array([0xef, 0xbb, 0xbf]));
  const n = Math.floor(next() * 40);
  for (let i = 0; i < n; i++) {
    const roll = next();
    if (roll < 0.05) parts.push(new Uint8Array([0xff]));
    else if (roll < 0.08) parts.push(new Uint8Array([0xc3]));
    else if (roll < 0.15) parts.push(encoder.encode("\n"));
    else parts.push(encoder.encode(PIECES[Math.floor(next() * PIECES.length)]!));
  }
  const out = new Uint8Array(parts.reduce((sum, p) => sum + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
