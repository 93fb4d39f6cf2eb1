import { MAX_CONCURRENT_INGESTS } from "../domain/limits";
import { POSTINGS_CACHE_BYTES, reservePostingLists, reserveWholeShards, WHOLE_SHARDS_CACHE_BYTES } from "./search/search-index";
import { SEARCH_TEXT_CACHE_BYTES, searchTextCache } from "./search/text-cache";
import { CACHE_BYTES, reserveFileCache, reserveSnapshotCache, SNAPSHOT_CACHE_BYTES } from "./snapshot";

/**
 * Splits an isolate's memory between its shared caches (decoded text, whole index shards, posting
 * lists, file bytes: up to 60 MiB; parsed snapshot indexes: 4 MiB of JSON, about 12 MB) and the
 * uploads it ingests (about 40 MB live each, 60 MB with garbage, for a 100 MB archive:
 * docs/benchmarks.md). Ingests run in stateless Worker isolates and most caches fill in session
 * objects' isolates, which are expected to be apart; nothing guarantees it, and the snapshot cache
 * fills in Worker isolates (the API's file route). So each running ingest takes back its share of
 * the caches (half of each with one, all of it with the maximum of two), and gives it back when it
 * ends; the caches refill from R2 on the next reads.
 */
export function ingestsRunning(running: number): void {
  const share = Math.min(1, running / MAX_CONCURRENT_INGESTS);
  searchTextCache.reserve(Math.ceil(SEARCH_TEXT_CACHE_BYTES * share));
  reserveWholeShards(Math.ceil(WHOLE_SHARDS_CACHE_BYTES * share));
  reservePostingLists(Math.ceil(POSTINGS_CACHE_BYTES * share));
  reserveFileCache(Math.ceil(CACHE_BYTES * share));
  reserveSnapshotCache(Math.ceil(SNAPSHOT_CACHE_BYTES * share));
}
