import { ALL, and, containsAnyText, MAX_QUERY_PARTS, or, type SearchQuery } from "./query";
import { parseRegex, type RegexNode } from "./regex-parser";

/**
 * The trigram query for a regular expression: a condition every file holding a match meets. It
 * follows Russ Cox's "Regular Expression Matching with a Trigram Index" (the analysis behind Google
 * Code Search and zoekt): for each part of the pattern, track the exact strings it can match while
 * there are few, else the possible prefixes and suffixes, plus a query that any text containing a
 * match satisfies. Every step only loses information, so the query never excludes a matching file.
 * A pattern with no required literal of three bytes or more gives `all` (search every file).
 */
export function regexQuery(source: string, options: { ignoreCase?: boolean; unicodeFolding?: boolean } = {}): SearchQuery {
  let info: Info;
  try {
    info = simplify(analyze(parseRegex(source, options.ignoreCase ?? false, options.unicodeFolding)));
  } catch {
    // Unexpected syntax, or groups nested deeper than the stack holds (both recurse).
    return ALL;
  }
  if (info.exact) return and(info.match, containsAnyText(info.exact));
  return and(info.match, containsAnyText(info.prefix), containsAnyText(info.suffix));
}

/** Exact sets larger than this become prefix/suffix sets. */
const MAX_EXACT = 16;
/** Prefix and suffix sets larger than this say nothing (the empty string). */
const MAX_SET = 32;
/** Prefixes and suffixes are cut to this many code units: enough to form trigrams across a boundary. */
const EDGE_UNITS = 2;

interface Info {
  /** Every string the part can match (ASCII folded), when known and small; else null. */
  exact: Set<string> | null;
  /** When `exact` is null: every match starts with one of these. */
  prefix: Set<string>;
  /** When `exact` is null: every match ends with one of these. */
  suffix: Set<string>;
  /** Holds for every text that contains a match. */
  match: SearchQuery;
}

const NOTHING_KNOWN = (): Info => ({ exact: null, prefix: new Set([""]), suffix: new Set([""]), match: ALL });
const exactly = (strings: Iterable<string>): Info => ({ exact: new Set(strings), prefix: new Set(), suffix: new Set(), match: ALL });

function analyze(node: RegexNode): Info {
  switch (node.kind) {
    case "empty":
      return exactly([""]);
    case "char":
      return node.chars ? exactly(node.chars) : NOTHING_KNOWN();
    case "unknown":
      return NOTHING_KNOWN();
    case "concat":
      return node.items.reduce((info, item) => simplify(concat(info, analyze(item))), exactly([""]));
    case "alt":
      return simplify(alternateAll(node.branches.map(analyze)));
    case "repeat": {
      if (node.max === 0) return exactly([""]);
      const once = analyze(node.node);
      if (node.min === 0) return node.max === 1 ? simplify(alternateAll([once, exactly([""])])) : NOTHING_KNOWN();
      if (node.max === 1) return once;
      // At least once: a match starts like one repetition and ends like one, and contains one.
      const inexact = withoutExact(once);
      return simplify({ exact: null, prefix: inexact.prefix, suffix: inexact.suffix, match: inexact.match });
    }
  }
}

function concat(x: Info, y: Info): Info {
  if (x.exact && y.exact && x.exact.size * y.exact.size <= MAX_EXACT) {
    return { ...exactly(cross(x.exact, y.exact)), match: and(x.match, y.match) };
  }
  // Strings a match must contain where the two parts meet.
  const left = x.exact ?? x.suffix;
  const right = y.exact ?? y.prefix;
  const boundary = left.size * right.size <= MAX_SET ? containsAnyText(cross(left, right)) : ALL;
  const match = and(withoutExact(x).match, withoutExact(y).match, boundary);
  const prefix = x.exact ? crossOrSelf(x.exact, right) : x.prefix;
  const suffix = y.exact ? crossOrSelf(left, y.exact, true) : y.suffix;
  return { exact: null, prefix, suffix, match };
}

/**
 * Any of the branches (an alternation, or an optional part and nothing), joined at once: pair by pair,
 * each step simplified the sets so far again, and 2,048 branches (`[ab]000|[ab]001|...`) took seconds.
 */
function alternateAll(branches: Info[]): Info {
  let exactStrings = 0;
  for (const branch of branches) exactStrings += branch.exact ? branch.exact.size : Number.POSITIVE_INFINITY;
  if (exactStrings <= MAX_EXACT) {
    return { ...exactly(branches.flatMap((branch) => [...branch.exact!])), match: or(...branches.map((branch) => branch.match)) };
  }
  // Past MAX_QUERY_PARTS branches their `or` says nothing (`all`): their conditions are not built.
  const wide = branches.length > MAX_QUERY_PARTS;
  const inexact = branches.map((branch) => withoutExact(branch, !wide));
  return {
    exact: null,
    prefix: new Set(inexact.flatMap((branch) => [...branch.prefix])),
    suffix: new Set(inexact.flatMap((branch) => [...branch.suffix])),
    match: wide ? ALL : or(...inexact.map((branch) => branch.match)),
  };
}

/**
 * The same knowledge without an exact set: its strings go into the match query (unless `withMatch`
 * is false: the caller drops it), their edges into prefix/suffix.
 */
function withoutExact(info: Info, withMatch = true): Info {
  if (!info.exact) return info;
  const strings = [...info.exact];
  return {
    exact: null,
    prefix: new Set(strings.map((s) => s.slice(0, EDGE_UNITS))),
    suffix: new Set(strings.map((s) => s.slice(-EDGE_UNITS))),
    match: withMatch ? and(info.match, containsAnyText(strings)) : ALL,
  };
}

/** Keeps the sets small: long prefixes/suffixes give their trigrams to the match query and are cut to their edges. */
function simplify(info: Info): Info {
  if (info.exact) return info.exact.size > MAX_EXACT ? simplify(withoutExact(info)) : info;
  const match = and(info.match, containsAnyText(info.prefix), containsAnyText(info.suffix));
  return { exact: null, prefix: edges(info.prefix, false), suffix: edges(info.suffix, true), match };
}

function edges(set: Set<string>, fromEnd: boolean): Set<string> {
  const cut = new Set([...set].map((s) => (fromEnd ? s.slice(-EDGE_UNITS) : s.slice(0, EDGE_UNITS))));
  return cut.size > MAX_SET ? new Set([""]) : cut;
}

function cross(a: Iterable<string>, b: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const x of a) for (const y of b) out.add(x + y);
  return out;
}

/** `a x b` when small; else the side that is exact on its own (`a` for prefixes, `b` for suffixes). */
function crossOrSelf(a: Set<string>, b: Set<string>, keepRight = false): Set<string> {
  if (a.size * b.size <= MAX_SET) return cross(a, b);
  return keepRight ? b : a;
}
