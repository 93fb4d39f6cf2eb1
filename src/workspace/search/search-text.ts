/**
 * A file's decoded text as grep searches it, in pieces that each end with "\n" (the last one may
 * not): joined, they are exactly `decodeText(bytes)`, and no line spans two pieces. Pieces matter
 * for memory: V8 stores a string at 1 byte per character only when all of it fits in one byte, so a
 * single "—" in a comment would double a whole file in the cache; in pieces, only the pieces with
 * wide characters pay for them. (Measured on 33.9 MB of .js/.ts from node_modules: 49.6 MB as whole
 * strings, 60 % of it in two-byte files; 36.8 MB in pieces.) They are also what the search index
 * narrows to (its postings name runs of pieces, not files), so a search reads, decodes and scans only
 * the pieces that can hold a match: a text may be partial, holding only the pieces searched so far.
 * A partial text numbers its lines from the index's count of lines before each piece; `line` throws
 * `MissingPieceError` for a line in a piece not read.
 */
export class SearchText {
  /** `linesBefore[k]`: lines in pieces 0..k-1, known for k <= `counted` (filled in as lines are asked for). */
  private readonly linesBefore: Uint32Array;
  private counted = 0;
  private missing: number;
  /** The last `lineNumber` answer (piece, offset, line), to count on from. */
  private askedPiece = -1;
  private askedOffset = 0;
  private askedLine = 0;

  constructor(
    /** Every piece, or undefined for a piece not read yet. */
    readonly pieces: (string | undefined)[],
    /** Bytes V8 needs for the pieces' characters. */
    private size: number,
    /** Lines before each piece, when known without reading them all (from the search index). */
    linesBefore?: Uint32Array,
  ) {
    this.linesBefore = new Uint32Array(pieces.length + 1);
    if (linesBefore) {
      this.linesBefore.set(linesBefore);
      this.counted = Math.max(0, pieces.length - 1);
    }
    this.missing = 0;
    for (const piece of pieces) if (piece === undefined) this.missing++;
  }

  /** A text of `linesBefore.length` pieces with none read yet. */
  static partial(linesBefore: Uint32Array): SearchText {
    return new SearchText(new Array<string | undefined>(linesBefore.length).fill(undefined), 0, linesBefore);
  }

  get bytes(): number {
    return this.size;
  }

  get complete(): boolean {
    return this.missing === 0;
  }

  /** True when every piece of `pieces` has been read. */
  holds(pieces: PieceSet): boolean {
    if (pieces === "all") return this.missing === 0;
    for (const k of pieces) if (this.pieces[k] === undefined) return false;
    return true;
  }

  /** The pieces `pieces` names (each must have been read). */
  selected(pieces: PieceSet): string[] {
    const out: string[] = [];
    if (pieces === "all") for (const piece of this.pieces) out.push(piece!);
    else for (const k of pieces) out.push(this.pieces[k]!);
    return out;
  }

  /** Adds piece `k`, decoded by `decodePiece`. */
  fill(k: number, piece: DecodedPiece): void {
    if (this.pieces[k] !== undefined) return;
    this.pieces[k] = piece.text;
    this.size += piece.bytes;
    this.missing--;
  }

  /**
   * The 0-based number of the line that holds `offset` of piece `k`. Asked in ascending order within
   * a piece (the matches of a search), each answer counts on from the last: one pass over the piece,
   * not one per match (hunt 72: paging 400,000 matches deep into a file of short lines took minutes).
   */
  lineNumber(k: number, offset: number): number {
    const onward = this.askedPiece === k && this.askedOffset <= offset;
    const from = onward ? this.askedOffset : 0;
    this.askedLine = (onward ? this.askedLine : this.lineBase(k)) + countNewlines(this.pieces[k]!, from, offset);
    this.askedPiece = k;
    this.askedOffset = offset;
    return this.askedLine;
  }

  /** Line `n` (0-based) without its "\n" and a trailing "\r", as `lines()` splits; undefined past the last line. */
  line(n: number): string | undefined {
    // The piece holding line n: the last one with at most n lines before it.
    let k = 0;
    while (k + 1 < this.pieces.length && this.lineBase(k + 1) <= n) k++;
    if (k < this.pieces.length && this.pieces[k] === undefined) throw new MissingPieceError(k);
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

/** A line was asked of a partial text, in a piece it does not hold. */
export class MissingPieceError extends Error {
  constructor(readonly piece: number) {
    super(`piece ${piece} of the text was not read`);
  }
}

function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let at = text.indexOf("\n", from); at >= 0 && at < to; at = text.indexOf("\n", at + 1)) n++;
  return n;
}

/** Which pieces of a file a search looks at: all of them, or these (ascending) piece numbers. */
export type PieceSet = "all" | Uint32Array;

/**
 * Files are cut into pieces of about this many bytes, at a line break: a piece ends after the first
 * "\n" at or after byte `start + SEARCH_PIECE_BYTES - 1` of the file (or at its end). The search
 * index cuts files with the same rule (and records this size in its directory).
 */
export const SEARCH_PIECE_BYTES = 16 * 1024;

const NEWLINE = 0x0a;
/** Drops a leading BOM, as `decodeText` does. */
const first = new TextDecoder("utf-8");
/** Keeps a U+FEFF that starts a later piece: it is text there, not a BOM. */
const rest = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

export interface DecodedPiece {
  text: string;
  /** Bytes V8 needs for its characters. */
  bytes: number;
}

/**
 * One piece's text from its bytes (`first`: it starts the file). A piece ends after a "\n" byte,
 * which is never inside a UTF-8 sequence: decoding in pieces gives the same characters as decoding
 * the whole. Invalid UTF-8 becomes U+FFFD, as in `decodeText`.
 */
export function decodePiece(bytes: Uint8Array, isFirst: boolean): DecodedPiece {
  const text = (isFirst ? first : rest).decode(bytes);
  // As many characters as bytes and no U+FFFD standing for an invalid byte: ASCII, 1 byte each.
  const oneByte = (text.length === bytes.byteLength && !text.includes("\uFFFD")) || !/[^\0-\xff]/.test(text);
  return { text, bytes: oneByte ? text.length : text.length * 2 };
}

/** The search text of a (non-binary) file's bytes, every piece read. */
export function searchTextOf(bytes: Uint8Array): SearchText {
  const pieces: string[] = [];
  let size = 0;
  for (let start = 0; start < bytes.byteLength; ) {
    const newline = bytes.indexOf(NEWLINE, start + SEARCH_PIECE_BYTES - 1);
    const end = newline < 0 ? bytes.byteLength : newline + 1;
    const piece = decodePiece(bytes.subarray(start, end), start === 0);
    pieces.push(piece.text);
    size += piece.bytes;
    start = end;
  }
  return new SearchText(pieces, size);
}
