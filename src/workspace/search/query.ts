import { trigramKeysOf } from "./trigrams";

/**
 * Which files can hold a match, as a condition on the trigrams a file contains. `all` is no
 * condition at all (a full scan). A query only ever narrows to a superset of the files that match;
 * the real matcher decides.
 */
export type SearchQuery =
  | { op: "all" }
  | { op: "trigram"; key: number }
  | { op: "and"; of: SearchQuery[] }
  | { op: "or"; of: SearchQuery[] };

export const ALL: SearchQuery = { op: "all" };

export function isAll(query: SearchQuery): boolean {
  return query.op === "all";
}

/**
 * Most parts an `and` or `or` keeps. A pattern of thousands of groups (`(ab|cd)` 2,340 times, in the
 * 16 Ki characters a grep pattern may hold) built queries of thousands of parts, in seconds. An `and`
 * past it drops the rest (fewer conditions: more files searched, none missed), an `or` becomes `all`.
 */
export const MAX_QUERY_PARTS = 256;

/** A query's identity, for telling equal parts apart: written once per query object (they are never changed). */
const ids = new WeakMap<SearchQuery, string>();
function idOf(query: SearchQuery): string {
  let id = ids.get(query);
  if (id === undefined) {
    id = query.op === "trigram" ? String(query.key) : query.op === "all" ? "*" : `${query.op}(${query.of.map(idOf).join(",")})`;
    ids.set(query, id);
  }
  return id;
}

/** Both conditions; `all` drops out, nested ands are flattened. */
export function and(...queries: SearchQuery[]): SearchQuery {
  const of: SearchQuery[] = [];
  const seen = new Set<string>();
  for (const query of queries) {
    for (const part of query.op === "and" ? query.of : [query]) {
      if (part.op === "all" || of.length === MAX_QUERY_PARTS) continue;
      const id = idOf(part);
      if (!seen.has(id)) {
        seen.add(id);
        of.push(part);
      }
    }
  }
  if (of.length === 0) return ALL;
  return of.length === 1 ? of[0]! : { op: "and", of };
}

/** Either condition; any `all` makes the whole `all`, nested ors are flattened. */
export function or(...queries: SearchQuery[]): SearchQuery {
  const of: SearchQuery[] = [];
  const seen = new Set<string>();
  for (const query of queries) {
    if (query.op === "all") return ALL;
    for (const part of query.op === "or" ? query.of : [query]) {
      const id = idOf(part);
      if (!seen.has(id)) {
        if (of.length === MAX_QUERY_PARTS) return ALL;
        seen.add(id);
        of.push(part);
      }
    }
  }
  if (of.length === 0) return ALL;
  return of.length === 1 ? of[0]! : { op: "or", of };
}

/** A file that contains `text` contains every one of its trigrams (`all` when it has none). */
export function containsText(text: string): SearchQuery {
  return and(...trigramKeysOf(text).map((key): SearchQuery => ({ op: "trigram", key })));
}

/** A file that contains one of `texts`. */
export function containsAnyText(texts: Iterable<string>): SearchQuery {
  return or(...[...texts].map(containsText));
}

/** Every trigram key the query mentions. */
export function queryKeys(query: SearchQuery, into = new Set<number>()): Set<number> {
  if (query.op === "trigram") into.add(query.key);
  else if (query.op === "and" || query.op === "or") for (const part of query.of) queryKeys(part, into);
  return into;
}
