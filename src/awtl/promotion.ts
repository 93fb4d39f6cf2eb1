import type { FailedTurnCase } from "./failed-turn-case";
import { becomesCase } from "./failure-classes";
import type { Scorecard } from "./scorecard";

export type PromotionRefusal =
  | "promotion_write_flag_required"
  | "promotion_not_verified"
  | "promotion_imported_only"
  | "promotion_class_not_allowed";

/**
 * Whether a case may become project memory: only with the explicit write flag, never for imported
 * (or trace-only) material, never for environment/flaky/harness failures, and only after a replay
 * that reproduced it or a human approval. The first rule that refuses names its code.
 */
export function promotionRefusal(
  c: FailedTurnCase,
  evidence: { write: boolean; scorecard: Scorecard | null; approved: boolean },
): { code: PromotionRefusal; message: string } | null {
  if (!evidence.write)
    return { code: "promotion_write_flag_required", message: 'promotion writes project memory: send {"write": true} to confirm' };
  if (c.imported)
    return { code: "promotion_imported_only", message: `case ${c.caseId} comes only from imported traces; it cannot be promoted` };
  if (!becomesCase(c.applicability.failureClass)) {
    return {
      code: "promotion_class_not_allowed",
      message:
        c.applicability.failureClass === "flaky"
          ? `case ${c.caseId} is flaky (a replay passed where it had failed); a flaky failure is never promoted, whatever later replays show`
          : `case ${c.caseId} is a ${c.applicability.failureClass} failure; only agent and policy failures are promoted`,
    };
  }
  const replayed = evidence.scorecard?.status === "passed";
  if (!replayed && !evidence.approved) {
    return { code: "promotion_not_verified", message: `case ${c.caseId} needs a passed replay or a human approval before promotion` };
  }
  return null;
}
