import { SEARCH_MAX_FILE_BYTES } from "../../domain/limits";
import type { SearchText } from "./search-text";

/**
 * Decoded text of snapshot files, shared by every object in the isolate. Snapshots never change, so
 * an entry is valid for as long as it is kept. Shared rather than per object because objects of one
 * class may share an isolate and its 128 MB; the budget leaves most of that to runs (history, model
 * streams, tool output, the shell's buffers). Measured in bytes of string storage (`SearchText.bytes`).
 */
export const SEARCH_TEXT_CACHE_BYTES = 40 * 1024 * 1024;
/**
 * Most files cached at once. An entry costs about 600 bytes beside its text (its key, a SearchText and
 * its arrays), which the byte budget does not see: 250,000 tiny files held 72 MB (hunt 47). Real source
 * files average a few KB, so the byte budget fills first.
 */
export const SEARCH_TEXT_CACHE_ENTRIES = 16_384;
/** One file above this is not cached (grep skips larger files anyway). */
export const MAX_ENTRY_BYTES = SEARCH_MAX_FILE_BYTES;

interface Entry {
  /** null: the file is binary (grep never searches it). */
  text: SearchText | null;
  bytes: number;
  /** The search that last used it. */
  search: number;
}

/**
 * Least recently used first out, except that a search never evicts what it has used itself: a
 * search over more text than fits keeps what is cached and leaves the rest uncached, instead of
 * cycling everything through the cache and finding none of it the next time.
 */
export class SearchTextCache {
  private readonly entries = new Map<string, Entry>();
  private total = 0;
  private searches = 0;
  /** Bytes of `maxBytes` lent to other work in the isolate (`reserve`). */
  private reserved = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly maxEntries = SEARCH_TEXT_CACHE_ENTRIES,
  ) {}

  get bytes(): number {
    return this.total;
  }

  /** What the cache may hold now. */
  get capacity(): number {
    return this.maxBytes - this.reserved;
  }

  /** Bytes that can be added without evicting anything. */
  get room(): number {
    return Math.max(0, this.capacity - this.total);
  }

  /**
   * Lends `bytes` of the budget to other work in the isolate (0 gives it all back): the oldest
   * entries leave until the rest fits, whichever search used them (a search holds what it uses).
   */
  reserve(bytes: number): void {
    this.reserved = Math.min(Math.max(0, bytes), this.maxBytes);
    for (const [oldest, entry] of this.entries) {
      if (this.total <= this.capacity) break;
      this.entries.delete(oldest);
      this.total -= entry.bytes;
    }
  }

  /** Starts a search: entries it uses from now on are protected from its own inserts. */
  beginSearch(): number {
    return ++this.searches;
  }

  /** The cached text (null = binary), or undefined when not cached; not counted as a use. */
  peek(key: string): SearchText | null | undefined {
    return this.entries.get(key)?.text;
  }

  /** The cached text (null = binary), or undefined when not cached. */
  get(key: string, search: number): SearchText | null | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    entry.search = search;
    this.entries.set(key, entry);
    return entry.text;
  }

  /**
   * Caches a file's text (null for a binary file), or counts again the text already cached under
   * `key` after pieces were added to it, or replaces a partial text with a fuller one.
   */
  set(key: string, text: SearchText | null, search: number): void {
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.total -= previous.bytes;
    }
    const bytes = text?.bytes ?? 0;
    if (bytes > MAX_ENTRY_BYTES) return;
    for (const [oldest, entry] of this.entries) {
      if (this.total + bytes <= this.capacity && this.entries.size < this.maxEntries) break;
      if (entry.search === search) return;
      this.entries.delete(oldest);
      this.total -= entry.bytes;
    }
    if (this.total + bytes > this.capacity || this.entries.size >= this.maxEntries) return;
    this.entries.set(key, { text, bytes, search });
    this.total += bytes;
  }

  /**
   * Caches a text ahead of any search (a warm-up) only if it fits in the room left, replacing what
   * is cached under `key`: it never evicts another entry, so text a search used stays. False when
   * the room left is too small for it (a text over the entry limit is left out, as `set` does).
   */
  addIfRoom(key: string, text: SearchText | null): boolean {
    const bytes = text?.bytes ?? 0;
    if (bytes > MAX_ENTRY_BYTES) return true;
    const previous = this.entries.get(key)?.bytes;
    if (previous === undefined && this.entries.size >= this.maxEntries) return false;
    if (this.total - (previous ?? 0) + bytes > this.capacity) return false;
    this.entries.delete(key);
    this.entries.set(key, { text, bytes, search: 0 });
    this.total += bytes - (previous ?? 0);
    return true;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }
}

/** The isolate's cache. */
export const searchTextCache = new SearchTextCache(SEARCH_TEXT_CACHE_BYTES);
