import { MAX_CONCURRENT_INGESTS } from "../domain/limits";
import { reserveWholeShards, WHOLE_SHARDS_CACHE_BYTES } from "./search/search-index";
import { SEARCH_TEXT_CACHE_BYTES, searchTextCache } from "./search/text-cache";

/**
 * Splits an isolate's memory between its shared search caches (decoded text, whole index shards:
 * up to 48 MiB) and the uploads it ingests (about 40 MB live each, 60 MB with garbage, for a 100 MB
 * archive: docs/benchmarks.md). Ingests run in stateless Worker isolates and the caches fill in
 * session objects' isolates, which are expected to be apart; nothing guarantees it, and both full
 * in one 128 MB isolate would not fit. So each running ingest takes back its share of the caches
 * (half of each with one, all of it with the maximum of two), and gives it back when it ends; the
 * caches refill from R2 on the next searches.
 */
export function ingestsRunning(running: number): void {
  const share = Math.min(1, running / MAX_CONCURRENT_INGESTS);
  searchTextCache.reserve(Math.ceil(SEARCH_TEXT_CACHE_BYTES * share));
  reserveWholeShards(Math.ceil(WHOLE_SHARDS_CACHE_BYTES * share));
}
