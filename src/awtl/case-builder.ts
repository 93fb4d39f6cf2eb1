import type { JudgeResult } from "../domain";
import { artifactPath } from "./artifacts";
import type { AttributionDraft } from "./attribution";
import { caseIdentityHint } from "./case-identity";
import { type CaseApplicability, contentHash, type FailedTurnCase } from "./failed-turn-case";
import { becomesCase, isPolicyCode, LIMIT_CODES } from "./failure-classes";
import { preventionHint } from "./prevention-hints";
import type { RunTraceView } from "./run-view";

/** Tools a run may be denied by its permissions. */
const PERMISSION_TOOLS: Record<string, string[]> = { write_not_allowed: ["write", "edit"], bash_not_allowed: ["bash"] };

/**
 * The case a failure becomes, or null for `environment`, `flaky` and `harness` failures (and for a
 * failure with no turn to point at). The id is a hash of what makes two failures "the same" (judge,
 * failure kind, tools, artifacts, hint), so a recurrence adds an occurrence instead of a case.
 */
export function buildCase(
  attribution: AttributionDraft,
  judge: JudgeResult,
  run: RunTraceView,
  opts: { sessionId: string; imported: boolean; now: string },
): FailedTurnCase | null {
  if (!becomesCase(attribution.classification) || attribution.failureTurnId === null) return null;
  const sources = attribution.sourceActionIds.map((id) => run.action(id)).filter((a) => a !== undefined);
  const tools = [...new Set(sources.filter((a) => a.actor === "tool").map((a) => a.tool))].sort();
  // A verdict that named none of the run's changes is about the files the run changed (see attribute).
  const named = attribution.rule === "wrote_in_run" ? sources.flatMap((a) => run.changed(a)) : attribution.artifactRefs.map(artifactPath);
  const paths = [...new Set(named.filter((p): p is string => p !== null && p !== ""))].sort();
  // Refs with a scheme (`ci:job-12`) name a sighting, not the failure: beside paths they are evidence,
  // so one failure seen by many CI jobs is one case (hunt 95: a case per job); alone they are all
  // that tells failures apart.
  const opaque = [...new Set(attribution.artifactRefs.filter((ref) => artifactPath(ref) === null))].sort();
  const facts = { judgeName: judge.judgeName, builtIn: judge.builtIn, failureKind: judge.failureKind, tool: tools[0] ?? null, paths };
  const hint = preventionHint(facts);
  const applicability = applicabilityOf(judge.failureKind, tools, paths, attribution.classification);
  const artifactRefs = paths.length > 0 ? paths : opaque.length > 0 ? opaque : tools.map((t) => `tool:${t}`);
  if (artifactRefs.length === 0) artifactRefs.push(`run:${judge.failureKind}`);
  // The frozen form of the hint, so that ids stay those of the cases already stored.
  const identity = JSON.stringify([judge.judgeName, judge.failureKind, applicability.tools, artifactRefs, caseIdentityHint(facts)]);
  return {
    schemaVersion: 1,
    caseId: `cs_${contentHash(identity)}`,
    turnId: attribution.failureTurnId,
    failureTurnId: attribution.failureTurnId,
    failureEventId: attribution.failureEventId,
    artifactRefs,
    memoryReadNodeIds: attribution.memoryReadNodeIds,
    preventionHint: hint,
    applicability,
    evidenceRefs: paths.length > 0 ? [...attribution.evidenceRefs, ...opaque] : attribution.evidenceRefs,
    occurrences: 1,
    firstSeenAt: opts.now,
    lastSeenAt: opts.now,
    origin: {
      sessionId: opts.sessionId,
      runId: judge.runId,
      judgeName: judge.judgeName,
      failureKind: judge.failureKind,
      builtIn: judge.builtIn,
    },
    imported: opts.imported,
  };
}

function applicabilityOf(
  kind: string,
  tools: string[],
  paths: string[],
  failureClass: CaseApplicability["failureClass"],
): CaseApplicability {
  const denied = PERMISSION_TOOLS[kind];
  if (denied) return { tools: denied, pathGlobs: [], failureClass, scope: "denied_tools" };
  if (LIMIT_CODES.has(kind) || (isPolicyCode(kind) && paths.length === 0)) return { tools, pathGlobs: [], failureClass, scope: "retry" };
  if (paths.length > 0) return { tools, pathGlobs: paths, failureClass, scope: "paths" };
  return { tools, pathGlobs: [], failureClass, scope: "retry" };
}
