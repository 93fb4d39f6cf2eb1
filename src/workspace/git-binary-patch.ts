import { zlibSync } from "fflate";
import { hexOf } from "../domain";

/** The blob id git uses for a side that does not exist (added or deleted file). */
export const NULL_BLOB_ID = "0".repeat(40);
/** Bytes of deflated data per base85 line, as git writes them. */
const BYTES_PER_LINE = 52;
/** Second zlib header byte as zlib writes it for level 1: FLEVEL 0, FCHECK making 0x7801 % 31 === 0. */
const ZLIB_LEVEL_1_FLAGS = 0x01;
const BASE85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/** Git's object id of `bytes` as a blob: hex SHA-1 of `blob <length>\0<bytes>`. */
export async function gitBlobId(bytes: Uint8Array): Promise<string> {
  const header = new TextEncoder().encode(`blob ${bytes.byteLength}\0`);
  const object = new Uint8Array(header.byteLength + bytes.byteLength);
  object.set(header);
  object.set(bytes, header.byteLength);
  return hexOf(await crypto.subtle.digest("SHA-1", object));
}

/**
 * The body of a binary change as `git diff --binary` writes it: `GIT binary patch`, the new content
 * as a `literal` block, then the old content as the reverse `literal` block (an absent side is
 * empty). git apply needs the full-length `index` line before it, which the caller writes. Git may
 * choose `delta` blocks instead; `literal` is always accepted.
 */
export function renderBinaryPatch(before: Uint8Array | null, after: Uint8Array | null): string {
  return `GIT binary patch\n${literalBlock(after ?? new Uint8Array(0))}${literalBlock(before ?? new Uint8Array(0))}`;
}

function literalBlock(bytes: Uint8Array): string {
  // Git deflates at level 1 (core.compression's default for patches); zlib labels that FLEVEL 0
  // (header 78 01) where fflate writes 78 5e. The label is informational; zlib's makes small
  // patches byte-identical to git's.
  const deflated = zlibSync(bytes, { level: 1 });
  deflated[1] = ZLIB_LEVEL_1_FLAGS;
  let out = `literal ${bytes.byteLength}\n`;
  for (let at = 0; at < deflated.byteLength; at += BYTES_PER_LINE) {
    const line = deflated.subarray(at, at + BYTES_PER_LINE);
    // The length prefix: 'A'..'Z' for 1-26 bytes, 'a'..'z' for 27-52.
    const length = line.byteLength <= 26 ? 64 + line.byteLength : 96 + line.byteLength - 26;
    out += `${String.fromCharCode(length)}${encodeBase85(line)}\n`;
  }
  return `${out}\n`;
}

/** Git's base85: each 4-byte big-endian group (the last zero-padded) becomes 5 characters. */
function encodeBase85(bytes: Uint8Array): string {
  let out = "";
  for (let at = 0; at < bytes.byteLength; at += 4) {
    let group = 0;
    for (let i = 0; i < 4; i++) group = group * 256 + (bytes[at + i] ?? 0);
    const chars = new Array<string>(5);
    for (let i = 4; i >= 0; i--) {
      chars[i] = BASE85[group % 85]!;
      group = Math.floor(group / 85);
    }
    out += chars.join("");
  }
  return out;
}
