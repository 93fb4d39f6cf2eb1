/**
 * What the search index counts as a trigram: three consecutive bytes of a file, each mapped to one
 * of 64 classes, so a trigram is an 18-bit key. Letters (folded to lower case, so one index serves
 * case-sensitive and case-insensitive searches) and digits keep a class each, as do the punctuation
 * marks code is made of; rarer marks share classes, and other bytes (UTF-8 sequences) fall into 8
 * classes by their low bits. A key can therefore stand for several trigrams: it only ever widens
 * the set of candidate files, never drops a file that matches. The small key space keeps the
 * builder's tables in the CPU cache, which is what makes indexing cheap enough to do while ingesting.
 */

export const TRIGRAM_KEY_BITS = 18;
/** Number of distinct trigram keys (2^18). */
export const TRIGRAM_KEYS = 1 << TRIGRAM_KEY_BITS;
export const TRIGRAM_KEY_MASK = TRIGRAM_KEYS - 1;
/** Bits of one byte's class in a key. */
export const CLASS_BITS = 6;

/** Classes of ASCII characters that do not have one of their own (everything else maps by itself). */
const SHARED_CLASSES: readonly string[] = ["\t ", "[]", "\"'`", "/\\", "*+-", "<>", "!#%&?@^|~"];
const OWN_CLASSES = "\n_$.(){};,:=";

/** The class of every byte value. */
export const BYTE_CLASS: Uint8Array = (() => {
  const classes = new Uint8Array(256); // 0: control characters (and "\r")
  let next = 1;
  const assign = (chars: string) => {
    for (const c of chars) classes[c.charCodeAt(0)] = next;
    next++;
  };
  for (const c of OWN_CLASSES) assign(c);
  for (const group of SHARED_CLASSES) assign(group);
  for (let c = 0; c < 26; c++) assign(String.fromCharCode(0x61 + c) + String.fromCharCode(0x41 + c));
  for (let d = 0; d < 10; d++) assign(String(d));
  // 1 + 12 + 7 + 26 + 10 = 56 classes so far: bytes >= 0x80 take the last 8.
  for (let b = 0x80; b < 0x100; b++) classes[b] = next + (b & 7);
  return classes;
})();

/**
 * The classes of two consecutive bytes read as one 16-bit word in the platform's byte order:
 * `(class(first) << CLASS_BITS) | class(second)`. Lets the index builder take two bytes per step.
 */
export const PAIR_CLASS: Uint16Array = (() => {
  const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  const pairs = new Uint16Array(1 << 16);
  for (let word = 0; word < 1 << 16; word++) {
    const [first, second] = littleEndian ? [word & 0xff, word >>> 8] : [word >>> 8, word & 0xff];
    pairs[word] = (BYTE_CLASS[first]! << CLASS_BITS) | BYTE_CLASS[second]!;
  }
  return pairs;
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
      keys.add((BYTE_CLASS[bytes[i - 2]!]! << (2 * CLASS_BITS)) | (BYTE_CLASS[bytes[i - 1]!]! << CLASS_BITS) | BYTE_CLASS[bytes[i]!]!);
    }
  }
  return [...keys];
}
