import { z } from "zod";
import { FailureClass, isoTime, MAX_PREVENTION_HINT_CHARS, nonBlank } from "../domain";

/**
 * A failed-turn case: a failure compressed to what the next run needs (a one-sentence hint and when
 * it applies) plus the refs that justify it. Strict: no extra properties, the failing turn named
 * twice and equal, at least one artifact and one evidence ref.
 */
export const CaseApplicability = z.strictObject({
  /** The tools involved. */
  tools: z.array(nonBlank),
  /** Workspace paths the case is about, as its artifacts named them (never read as patterns). */
  pathGlobs: z.array(nonBlank),
  failureClass: FailureClass,
  /**
   * When it applies: `paths` when a run names or touched a matching path; `denied_tools` when a run
   * is again denied one of `tools`; `retry` only for another attempt of the failed run.
   */
  scope: z.enum(["paths", "denied_tools", "retry"]),
});
export type CaseApplicability = z.infer<typeof CaseApplicability>;

export const FailedTurnCase = z
  .strictObject({
    schemaVersion: z.literal(1),
    caseId: nonBlank,
    turnId: nonBlank,
    failureTurnId: nonBlank,
    failureEventId: nonBlank,
    artifactRefs: z.array(nonBlank).min(1),
    memoryReadNodeIds: z.array(nonBlank),
    preventionHint: nonBlank.max(MAX_PREVENTION_HINT_CHARS),
    applicability: CaseApplicability,
    evidenceRefs: z.array(nonBlank).min(1),
    occurrences: z.number().int().positive(),
    firstSeenAt: isoTime,
    lastSeenAt: isoTime,
    /** Where it was last seen: the run a replay re-runs and a retry may name. */
    origin: z.strictObject({ sessionId: nonBlank, runId: nonBlank, judgeName: nonBlank, failureKind: nonBlank, builtIn: z.boolean() }),
    /** True when the case comes only from imported (foreign) traces: never promoted. */
    imported: z.boolean(),
  })
  .refine((c) => c.turnId === c.failureTurnId, { message: "turnId and failureTurnId must match", path: ["failureTurnId"] });
export type FailedTurnCase = z.infer<typeof FailedTurnCase>;

/** FNV-1a, 64 bits, as 16 hex digits: a stable content hash computed synchronously (inside a SQLite transaction). */
export function contentHash(text: string): string {
  let hash = 0xcbf29ce484222325n;
  const prime = 0x100000001b3n;
  for (const byte of new TextEncoder().encode(text)) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * prime);
  return hash.toString(16).padStart(16, "0");
}
