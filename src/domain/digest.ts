/** Lower-case hex of `bytes` (how every digest is written in records, keys and answers). */
export function hexOf(bytes: ArrayBuffer | Uint8Array): string {
  return Array.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Hex SHA-256 of a string's UTF-8 bytes, or of `bytes`. */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  return hexOf(await crypto.subtle.digest("SHA-256", typeof data === "string" ? new TextEncoder().encode(data) : data));
}
