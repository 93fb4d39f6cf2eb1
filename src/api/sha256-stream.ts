import { hexOf } from "../domain";

/**
 * SHA-256 of bytes that arrive in pieces (a request body read as it comes): `add` each piece,
 * `finish()` after the last, then `hex` resolves. `abort()` after a refusal; `hex` then rejects,
 * which nobody has to observe.
 */
export class Sha256Stream {
  private readonly digest = new crypto.DigestStream("SHA-256");
  private readonly writer = this.digest.getWriter();
  readonly hex: Promise<string> = this.digest.digest.then(hexOf);

  constructor() {
    this.hex.catch(() => {});
  }

  add(piece: Uint8Array): Promise<void> {
    return this.writer.write(piece);
  }

  finish(): Promise<void> {
    return this.writer.close();
  }

  abort(reason?: unknown): Promise<void> {
    return this.writer.abort(reason).catch(() => {});
  }
}
