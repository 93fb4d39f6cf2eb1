import {
  clipText,
  MAX_CASE_BYTES,
  MAX_CASE_MEMORY_READS,
  MAX_EVIDENCE_REF_CHARS,
  MAX_EVIDENCE_REFS,
  MAX_TRACE_ARTIFACT_REFS,
  MAX_TRACE_ID_CHARS,
} from "../domain";
import type { FailedTurnCase } from "./failed-turn-case";

/** A case as it is stored: bounded, and its JSON with its size in bytes. */
export interface SizedCase {
  case: FailedTurnCase;
  body: string;
  bytes: number;
}

/**
 * A case within MAX_CASE_BYTES of JSON, or null when even its smallest form is larger (the bounds
 * below make that unreachable: ids, hint and origin are bounded upstream). Kept: the newest
 * MAX_CASE_MEMORY_READS brief case ids, MAX_EVIDENCE_REFS evidence refs (its first and latest) each
 * clipped to MAX_EVIDENCE_REF_CHARS, and its first artifact refs (with the path globs among them)
 * that fit, at least one. Its id is made before (`buildCase`), so a bounded case is still the same case.
 */
export function boundCase(c: FailedTurnCase): SizedCase | null {
  const bounded: FailedTurnCase = {
    ...c,
    memoryReadNodeIds: c.memoryReadNodeIds.filter((id) => id.length <= MAX_TRACE_ID_CHARS).slice(-MAX_CASE_MEMORY_READS),
    evidenceRefs: firstAndLatest(c.evidenceRefs, MAX_EVIDENCE_REFS).map((ref) => clipText(ref, MAX_EVIDENCE_REF_CHARS)),
  };
  const withRefs = (n: number): SizedCase => {
    const refs = c.artifactRefs.slice(0, n);
    const kept = new Set(refs);
    const sized = { ...bounded, artifactRefs: refs };
    if (n < c.artifactRefs.length)
      sized.applicability = { ...c.applicability, pathGlobs: c.applicability.pathGlobs.filter((p) => kept.has(p)) };
    const body = JSON.stringify(sized);
    return { case: sized, body, bytes: utf8Bytes(body) };
  };
  // The most refs that fit: a binary search, a few encodings even for hundreds of long paths.
  let low = 1;
  let high = Math.max(1, Math.min(c.artifactRefs.length, MAX_TRACE_ARTIFACT_REFS));
  let best = withRefs(high);
  if (best.bytes <= MAX_CASE_BYTES) return best;
  best = withRefs(low);
  if (best.bytes > MAX_CASE_BYTES) return null;
  while (high - low > 1) {
    const mid = (low + high) >> 1;
    const tried = withRefs(mid);
    if (tried.bytes <= MAX_CASE_BYTES) {
      low = mid;
      best = tried;
    } else high = mid;
  }
  return best;
}

/** A list cut to `max`: its first half and its latest half (a case seen many times keeps both ends). */
export function firstAndLatest<T>(all: readonly T[], max: number): T[] {
  return all.length <= max ? [...all] : [...all.slice(0, Math.ceil(max / 2)), ...all.slice(-Math.floor(max / 2))];
}

export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}
