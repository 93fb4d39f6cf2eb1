/** Decoding workspace bytes as text, and telling text from binary, the same way for every tool and diff. */

/** Like git and GNU grep: a NUL byte among the first 8000 bytes makes a file binary. */
export const BINARY_SNIFF_BYTES = 8000;

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;

export function isBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.byteLength, BINARY_SNIFF_BYTES);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  return false;
}

export function hasUtf8Bom(bytes: Uint8Array): boolean {
  return bytes[0] === UTF8_BOM[0] && bytes[1] === UTF8_BOM[1] && bytes[2] === UTF8_BOM[2];
}

const decoder = new TextDecoder("utf-8");

/** UTF-8 text with a leading BOM removed; invalid sequences become U+FFFD rather than failing. */
export function decodeText(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The file as exact text, or null when it is binary: a NUL byte early on (`isBinary`) or not valid
 * UTF-8. A BOM is kept, so a diff of the text shows it. Stricter than `decodeText`, which the tools
 * use to read any non-binary file leniently.
 */
export function textOf(bytes: Uint8Array): string | null {
  if (isBinary(bytes)) return null;
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return null;
  }
}

export function encodeText(text: string, withBom = false): Uint8Array {
  const body = new TextEncoder().encode(text);
  if (!withBom) return body;
  const out = new Uint8Array(body.byteLength + 3);
  out.set(UTF8_BOM, 0);
  out.set(body, 3);
  return out;
}
