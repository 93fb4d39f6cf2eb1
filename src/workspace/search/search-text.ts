/**
 * A file's decoded text as grep searches it, in pieces that each end with "\n" (the last one may
 * not): joined, they are exactly `decodeText(bytes)`, and no line spans two pieces. Pieces matter
 * for memory: V8 stores a string at 1 byte per character only when all of it fits in one byte, so a
 * single "—" in a comment would double a whole file in the cache; in pieces, only the pieces with
 * wide characters pay for them. (Measured on 33.9 MB of .js/.ts from node_modules: 49.6 MB as whole
 * strings, 60 % of it in two-byte files; 36.8 MB in pieces.) They also let grep print a match deep
 * in a large file without counting every line before it (`PiecedLines`).
 */
export class SearchText {
  /** `linesBefore[k]`: lines in pieces 0..k-1, known for k <= `counted` (filled in as lines are asked for). */
  private readonly linesBefore: Uint32Array;
  private counted = 0;

  constructor(
    readonly pieces: readonly string[],
    /** Bytes V8 needs for the pieces' characters. */
    readonly bytes: number,
  ) {
    this.linesBefore = new Uint32Array(pieces.length + 1);
  }

  /** The 0-based number of the line that holds `offset` of piece `k`. */
  lineNumber(k: number, offset: number): number {
    return this.lineBase(k) + countNewlines(this.pieces[k]!, 0, offset);
  }

  /** Line `n` (0-based) without its "\n" and a trailing "\r", as `lines()` splits; undefined past the last line. */
  line(n: number): string | undefined {
    // The piece holding line n: the last one with at most n lines before it.
    let k = 0;
    while (k + 1 < this.pieces.length && this.lineBase(k + 1) <= n) k++;
    const piece = this.pieces[k];
    if (piece === undefined) return undefined;
    let start = 0;
    for (let skip = n - this.lineBase(k); skip > 0; skip--) {
      const newline = piece.indexOf("\n", start);
      if (newline < 0) return undefined;
      start = newline + 1;
    }
    if (start >= piece.length) return undefined;
    let end = piece.indexOf("\n", start);
    if (end < 0) end = piece.length;
    return end > start && piece.charCodeAt(end - 1) === 13 ? piece.slice(start, end - 1) : piece.slice(start, end);
  }

  private lineBase(k: number): number {
    while (this.counted < k) {
      const piece = this.pieces[this.counted]!;
      this.linesBefore[this.counted + 1] = this.linesBefore[this.counted]! + countNewlines(piece, 0, piece.length);
      this.counted++;
    }
    return this.linesBefore[k]!;
  }
}

function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let at = text.indexOf("\n", from); at >= 0 && at < to; at = text.indexOf("\n", at + 1)) n++;
  return n;
}

/** Files are cut into pieces of about this many bytes, at a line break. */
export const SEARCH_PIECE_BYTES = 16 * 1024;

const NEWLINE = 0x0a;
/** Drops a leading BOM, as `decodeText` does. */
const first = new TextDecoder("utf-8");
/** Keeps a U+FEFF that starts a later piece: it is text there, not a BOM. */
const rest = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** The search text of a (non-binary) file's bytes. Invalid UTF-8 becomes U+FFFD, as in `decodeText`. */
export function searchTextOf(bytes: Uint8Array): SearchText {
  const pieces: string[] = [];
  let size = 0;
  for (let start = 0; start < bytes.byteLength; ) {
    // A piece ends after a "\n" byte, which is never inside a UTF-8 sequence: decoding in pieces
    // gives the same characters as decoding the whole.
    const newline = bytes.indexOf(NEWLINE, start + SEARCH_PIECE_BYTES - 1);
    const end = newline < 0 ? bytes.byteLength : newline + 1;
    const piece = (start === 0 ? first : rest).decode(bytes.subarray(start, end));
    pieces.push(piece);
    // As many characters as bytes and no U+FFFD standing for an invalid byte: ASCII, 1 byte each.
    const oneByte = (piece.length === end - start && !piece.includes("\uFFFD")) || !/[^\0-\xff]/.test(piece);
    size += oneByte ? piece.length : piece.length * 2;
    start = end;
  }
  return new SearchText(pieces, size);
}
