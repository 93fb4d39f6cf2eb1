import { z } from "zod";
import { type AttributionRecord, isoTime, type JudgeVerdict, type Result } from "../domain";
import type { Brief, BriefContext } from "./brief";
import { CaseApplicability, type FailedTurnCase } from "./failed-turn-case";
import type { Scorecard } from "./scorecard";

/** Which project: its tenant (null when auth is off) and its id. The object's name derives from both. */
export interface ProjectRef {
  tenant: string | null;
  projectId: string;
  /**
   * The object's `epoch()` read before the request checked that the tenant has the project: an
   * import begun before a deletion is refused after it. Absent for a session's own deliveries.
   */
  epoch?: number;
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
  /** The cases the import added or saw again, all kept. */
  caseIds: z.array(z.string()),
  // Defaults: the summaries of imports stored before the bound have neither.
  casesNotKept: z.number().int().nonnegative().default(0).meta({
    description:
      "new cases the import found but did not keep: the project was full of its own runs' cases and cases it relies on (promoted, approved, verified or being replayed)",
  }),
  casesEvicted: z.number().int().nonnegative().default(0).meta({
    description: "imported cases of earlier imports, least recently seen first, that made room for this import's",
  }),
});
export type ImportSummary = z.infer<typeof ImportSummary>;

/** A verdict on a run, as the project needs to hear of it (to settle a replay's scorecard). */
export interface VerdictNotice {
  sessionId: string;
  runId: string;
  judgeName: string;
  result: JudgeVerdict;
}

/** A page of a project's cases, newest first; `next` is the listing position to continue after (null on the last page). */
export interface CasePage {
  cases: FailedTurnCase[];
  next: number | null;
}

/** A page of a project's quarantine, oldest first; `next` is the position to continue after (null on the last page). */
export interface QuarantinePage {
  quarantine: QuarantineEntry[];
  next: number | null;
}

/** The RPC methods of ProjectDO (types only). */
export interface ProjectRpc extends Rpc.DurableObjectBranded {
  recordAttribution(ref: ProjectRef, attribution: AttributionRecord, found: FailedTurnCase | null): Promise<void>;
  /** `after`: the `next` of the previous page. */
  listCases(limit: number, after: number | null): CasePage;
  /** A page of cases as the API's JSON, made as its client reads; marked at its end (`withEndMark`). */
  casesPage(limit: number, after: number | null): Promise<Result<ReadableStream<Uint8Array>>>;
  getCase(caseId: string): FailedTurnCase | null;
  /** Removes everything the project holds (cases, imports, memory, the R2 mirror); it starts empty, one epoch on. */
  destroy(ref: ProjectRef): Promise<void>;
  /** How many times `destroy` emptied the project. */
  epoch(): number;
  /** Removes the case, its scorecards, approvals and memory rule; false when there is no such case. */
  deleteCase(ref: ProjectRef, caseId: string): Promise<boolean>;
  /** Holds the case from eviction while a replay of it runs: the lease to end with `replayEnded`. */
  replayStarted(caseId: string): string;
  replayEnded(leaseId: string): void;
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
  approvals(caseId: string): Approval[];
  promote(ref: ProjectRef, caseId: string, write: boolean): Promise<Result<MemoryRule>>;
  memory(): MemoryRule[];
  /** `importId`: the id an Idempotency-Key allocated; an import already stored under it answers as it did. */
  importTraces(ref: ProjectRef, body: Uint8Array, importId?: string): Promise<Result<ImportSummary>>;
  /** `after`: the `next` of the previous page. */
  quarantine(limit: number, after: number | null): QuarantinePage;
}

/** The object name of a project: tenant and project id (project ids are only unique within a tenant). */
export function projectObjectName(ref: ProjectRef): string {
  return `${ref.tenant === null ? ":open" : `tenant:${ref.tenant}`}|${ref.projectId}`;
}

/** The project of a session that names none. */
export const DEFAULT_PROJECT_ID = "p_default";
