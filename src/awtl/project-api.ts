import { z } from "zod";
import { type AttributionRecord, isoTime, type JudgeVerdict, type Result } from "../domain";
import type { Brief, BriefContext } from "./brief";
import { CaseApplicability, type FailedTurnCase } from "./failed-turn-case";
import type { Scorecard } from "./scorecard";

/** Which project: its tenant (null when auth is off) and its id. The object's name derives from both. */
export interface ProjectRef {
  tenant: string | null;
  projectId: string;
}

/** A case promoted to project memory, mirrored to R2 as JSONL. */
export const MemoryRule = z.strictObject({
  caseId: z.string(),
  rule: z.string(),
  applicability: CaseApplicability,
  promotedAt: isoTime,
  verifiedBy: z.enum(["replay", "human"]),
  evidenceRefs: z.array(z.string()),
});
export type MemoryRule = z.infer<typeof MemoryRule>;

export const Approval = z.strictObject({ caseId: z.string(), approvedBy: z.string(), note: z.string(), approvedAt: isoTime });
export type Approval = z.infer<typeof Approval>;

export const QuarantineEntry = z.strictObject({
  importId: z.string(),
  line: z.number().int().positive(),
  sha256: z.string(),
  reason: z.string(),
  quarantinedAt: isoTime,
});
export type QuarantineEntry = z.infer<typeof QuarantineEntry>;

export const ImportSummary = z.strictObject({
  importId: z.string(),
  imported: z.number().int().nonnegative(),
  quarantined: z.number().int().nonnegative(),
  caseIds: z.array(z.string()),
});
export type ImportSummary = z.infer<typeof ImportSummary>;

/** A verdict on a run, as the project needs to hear of it (to settle a replay's scorecard). */
export interface VerdictNotice {
  sessionId: string;
  runId: string;
  judgeName: string;
  result: JudgeVerdict;
}

/** The RPC methods of ProjectDO (types only). */
export interface ProjectRpc extends Rpc.DurableObjectBranded {
  recordAttribution(ref: ProjectRef, attribution: AttributionRecord, found: FailedTurnCase | null): Promise<void>;
  listCases(): FailedTurnCase[];
  getCase(caseId: string): FailedTurnCase | null;
  brief(context: BriefContext): Brief | null;
  replayPassed(runId: string, judgeName: string): boolean;
  recordScorecard(
    ref: ProjectRef,
    card: Scorecard,
    outcome: { originRunId: string; judgeName: string; reproduced: boolean } | null,
  ): Promise<void>;
  scorecard(caseId: string): Scorecard | null;
  judgedScorecard(caseId: string): Scorecard | null;
  replaySessionDeleted(ref: ProjectRef, sessionId: string): Promise<void>;
  verdict(ref: ProjectRef, notice: VerdictNotice): Promise<Scorecard | null>;
  approve(ref: ProjectRef, caseId: string, approvedBy: string, note: string): Promise<Result<Approval>>;
  promote(ref: ProjectRef, caseId: string, write: boolean): Promise<Result<MemoryRule>>;
  memory(): MemoryRule[];
  /** `importId`: the id an Idempotency-Key allocated; an import already stored under it answers as it did. */
  importTraces(ref: ProjectRef, body: Uint8Array, importId?: string): Promise<ImportSummary>;
  quarantine(): QuarantineEntry[];
}

/** The object name of a project: tenant and project id (project ids are only unique within a tenant). */
export function projectObjectName(ref: ProjectRef): string {
  return `${ref.tenant === null ? ":open" : `tenant:${ref.tenant}`}|${ref.projectId}`;
}

/** The project of a session that names none. */
export const DEFAULT_PROJECT_ID = "p_default";
