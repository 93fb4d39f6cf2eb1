/**
 * What the search index counts as a trigram: three consecutive bytes of a file, each mapped to a
 * 7-bit class. ASCII keeps its own class with letters folded to lower case (so one index serves
 * case-sensitive and case-insensitive searches); the other 128 byte values share the 26 classes that
 * upper-case letters left free. A key is therefore lossy for non-ASCII text: it can only widen the
 * set of candidate files, never drop a file that matches.
 */

export const TRIGRAM_KEY_BITS = 21;
/** Number of distinct trigram keys (2^21). */
export const TRIGRAM_KEYS = 1 << TRIGRAM_KEY_BITS;
export const TRIGRAM_KEY_MASK = TRIGRAM_KEYS - 1;

/** The class of every byte value. */
export const BYTE_CLASS: Uint8Array = (() => {
  const classes = new Uint8Array(256);
  for (let b = 0; b < 256; b++) {
    if (b >= 0x41 && b <= 0x5a) classes[b] = b + 0x20;
    else if (b < 0x80) classes[b] = b;
    else classes[b] = 0x41 + (b % 26);
  }
  return classes;
})();

const encoder = new TextEncoder();

/**
 * The trigram keys a file must contain if its decoded text contains `text`. The text is encoded
 * as UTF-8; it is first cut at characters that have no fixed bytes in the file: U+FFFD (decoding
 * turns invalid bytes into it) and lone surrogates (never produced by decoding, and not encodable).
 */
export function trigramKeysOf(text: string): number[] {
  const keys = new Set<number>();
  for (const piece of text.split(/\uFFFD|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/)) {
    const bytes = encoder.encode(piece);
    for (let i = 2; i < bytes.length; i++) {
      keys.add((BYTE_CLASS[bytes[i - 2]!]! << 14) | (BYTE_CLASS[bytes[i - 1]!]! << 7) | BYTE_CLASS[bytes[i]!]!);
    }
  }
  return [...keys];
}
