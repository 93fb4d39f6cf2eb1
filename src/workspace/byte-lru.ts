/** A least-recently-used cache bounded by the total size of its values, in bytes, as `sizeOf` counts them. */
export class SizedLru<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private total = 0;
  /** Bytes of `maxBytes` lent to other work (`reserve`). */
  private reserved = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
    /** Larger values are never cached (one big file should not evict everything). */
    private readonly maxEntryBytes = maxBytes / 4,
  ) {}

  get size(): number {
    return this.total;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry?.value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    const bytes = this.sizeOf(value);
    if (bytes > Math.min(this.maxEntryBytes, this.maxBytes - this.reserved)) return;
    this.entries.set(key, { value, bytes });
    this.total += bytes;
    this.evictPast(this.maxBytes - this.reserved);
  }

  /** Lends `bytes` of the budget to other work (0 gives it all back); the oldest entries leave until the rest fits. */
  reserve(bytes: number): void {
    this.reserved = Math.min(Math.max(0, bytes), this.maxBytes);
    this.evictPast(this.maxBytes - this.reserved);
  }

  private evictPast(limit: number): void {
    for (const [oldest, { bytes }] of this.entries) {
      if (this.total <= limit) break;
      this.entries.delete(oldest);
      this.total -= bytes;
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }
}

/** A least-recently-used cache of byte arrays, bounded by their total size in bytes. */
export class ByteLru extends SizedLru<Uint8Array> {
  constructor(maxBytes: number, maxEntryBytes = maxBytes / 4) {
    super(maxBytes, (value) => value.byteLength, maxEntryBytes);
  }
}
