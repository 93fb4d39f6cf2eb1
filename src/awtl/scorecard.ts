import { z } from "zod";
import { CASE_VALIDATION_MAX_AGE_MS, isoTime, nonBlank } from "../domain";

export const ScorecardStatus = z.enum(["pending", "passed", "stale", "blocked", "skipped", "unavailable", "denied"]);

/**
 * The last replay of a case: whether its failure still reproduces against the current tools and
 * workspace. `passed` = it reproduced (the case is real and current); `stale` = it did not;
 * `unavailable` = the recording could not be replayed; `pending` = an external judge has not ruled yet.
 */
export const Scorecard = z.strictObject({
  recordId: nonBlank,
  caseId: nonBlank,
  status: ScorecardStatus,
  decision: z.enum(["allow_brief_and_promotion", "allow_brief", "exclude"]),
  validatedBy: z.enum(["replay"]).nullable(),
  lastValidatedAt: isoTime.nullable(),
  riskLevel: z.enum(["low", "medium", "high"]),
  appliesTo: z.array(z.string()),
  doesNotApplyTo: z.array(z.string()),
  evidenceRefs: z.array(z.string()),
  /** The replay run, for an external judge's verdict to find. */
  replay: z.strictObject({ sessionId: nonBlank, runId: nonBlank }).nullable(),
});
export type Scorecard = z.infer<typeof Scorecard>;

const EXCLUDING: ReadonlySet<string> = new Set(["stale", "blocked", "skipped", "unavailable", "denied"]);

/** Whether a case must stay out of briefs: excluded status or decision, high risk, or a validation too old. */
export function isExcluded(card: Scorecard | null, now: number, maxAgeMs = CASE_VALIDATION_MAX_AGE_MS): boolean {
  if (!card) return false;
  if (EXCLUDING.has(card.status) || card.decision === "exclude" || card.riskLevel === "high") return true;
  return card.lastValidatedAt !== null && now - Date.parse(card.lastValidatedAt) > maxAgeMs;
}

/** The outcome of a replay as a scorecard's status, decision and risk. */
export function verdictOf(
  outcome: "reproduced" | "not_reproduced" | "unreplayable" | "pending",
): Pick<Scorecard, "status" | "decision" | "riskLevel"> {
  switch (outcome) {
    case "reproduced":
      return { status: "passed", decision: "allow_brief_and_promotion", riskLevel: "low" };
    case "not_reproduced":
      return { status: "stale", decision: "exclude", riskLevel: "low" };
    case "unreplayable":
      return { status: "unavailable", decision: "exclude", riskLevel: "medium" };
    case "pending":
      return { status: "pending", decision: "allow_brief", riskLevel: "medium" };
  }
}
