/**
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320): the checksum a zip stores for the
 * uncompressed data of every entry. fflate computes it internally but does not export it.
 */

const TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

/**
 * The CRC-32 of `bytes` continued from `crc`, the CRC-32 of everything before them (0 for none),
 * so a stream is checked chunk by chunk: `crc = crc32(chunk, crc)`. Returns an unsigned 32-bit number.
 */
export function crc32(bytes: Uint8Array, crc = 0): number {
  let c = ~crc;
  for (let i = 0; i < bytes.length; i++) c = TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
