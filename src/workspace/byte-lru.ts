/** A least-recently-used cache of byte arrays, bounded by their total size in bytes. */
export class ByteLru {
  private readonly entries = new Map<string, Uint8Array>();
  private total = 0;
  /** Bytes of `maxBytes` lent to other work (`reserve`). */
  private reserved = 0;

  constructor(
    private readonly maxBytes: number,
    /** Larger values are never cached (one big file should not evict everything). */
    private readonly maxEntryBytes = maxBytes / 4,
  ) {}

  get size(): number {
    return this.total;
  }

  get(key: string): Uint8Array | undefined {
    const value = this.entries.get(key);
    if (value) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: Uint8Array): void {
    this.delete(key);
    if (value.byteLength > Math.min(this.maxEntryBytes, this.maxBytes - this.reserved)) return;
    this.entries.set(key, value);
    this.total += value.byteLength;
    this.evictPast(this.maxBytes - this.reserved);
  }

  /** Lends `bytes` of the budget to other work (0 gives it all back); the oldest entries leave until the rest fits. */
  reserve(bytes: number): void {
    this.reserved = Math.min(Math.max(0, bytes), this.maxBytes);
    this.evictPast(this.maxBytes - this.reserved);
  }

  private evictPast(limit: number): void {
    for (const [oldest, bytes] of this.entries) {
      if (this.total <= limit) break;
      this.entries.delete(oldest);
      this.total -= bytes.byteLength;
    }
  }

  delete(key: string): void {
    const value = this.entries.get(key);
    if (!value) return;
    this.entries.delete(key);
    this.total -= value.byteLength;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }
}
