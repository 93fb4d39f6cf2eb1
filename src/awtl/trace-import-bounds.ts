import { z } from "zod";
import {
  AttributionRecord,
  MAX_ATTRIBUTION_ACTION_IDS,
  MAX_CASE_MEMORY_READS,
  MAX_EVIDENCE_REF_CHARS,
  MAX_EVIDENCE_REFS,
  MAX_IMPORTED_TRACE_RECORD_BYTES,
  MAX_PATH_CHARS,
  MAX_TRACE_ARTIFACT_REFS,
  MAX_TRACE_ID_CHARS,
  nonBlank,
  type TraceRecord,
} from "../domain";

const id = nonBlank.max(MAX_TRACE_ID_CHARS);

/**
 * An imported `attribution` line: exactly the harness's own record, within the bounds the harness's
 * own attributions obey (`attribute`, `TraceSink`), so its export still imports whole while a foreign
 * line cannot carry unbounded lists or strings into one stored row.
 */
export const ImportedAttribution = AttributionRecord.extend({
  taskId: id,
  runId: id,
  attemptId: id,
  attributionId: id,
  failureEventId: id,
  failureTurnId: id.nullable(),
  // As an imported judge result's.
  judgeName: id,
  failureKind: nonBlank.max(100),
  sourceActionIds: z.array(id).max(MAX_ATTRIBUTION_ACTION_IDS),
  verifierActionId: id.nullable(),
  touchedActionIds: z.array(id).max(MAX_ATTRIBUTION_ACTION_IDS),
  memoryReadNodeIds: z.array(id).max(MAX_CASE_MEMORY_READS),
  // As a judgement names them: a path (or a ref with a scheme) at most a path long.
  artifactRefs: z.array(nonBlank.max(MAX_PATH_CHARS)).max(MAX_TRACE_ARTIFACT_REFS),
  evidenceRefs: z.array(nonBlank.max(MAX_EVIDENCE_REF_CHARS)).max(MAX_EVIDENCE_REFS),
  caseId: id.nullable(),
});

/** The JSON an imported record is stored as (one SQLite row: `ImportStore`). */
export function importedBody(record: TraceRecord): string {
  return JSON.stringify({ ...record, imported: true });
}

/**
 * Why a normalised record cannot be stored, or null: its JSON passes MAX_IMPORTED_TRACE_RECORD_BYTES.
 * A backstop behind the limits on each field: a row past 2 MB fails the import's whole transaction.
 */
export function oversizedRecord(record: TraceRecord): string | null {
  const json = importedBody(record);
  // A UTF-16 unit is at most 3 bytes of UTF-8 (JSON escapes lone surrogates): only long records are encoded.
  if (json.length * 3 <= MAX_IMPORTED_TRACE_RECORD_BYTES) return null;
  const bytes = new TextEncoder().encode(json).byteLength;
  if (bytes <= MAX_IMPORTED_TRACE_RECORD_BYTES) return null;
  return `the record takes ${bytes.toLocaleString("en-US")} bytes of JSON, over the ${MAX_IMPORTED_TRACE_RECORD_BYTES.toLocaleString("en-US")} one record may take`;
}
