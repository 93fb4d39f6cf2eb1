import { IDEMPOTENCY_TTL_MS } from "../domain";

/**
 * Rows a session keeps per idempotency key (`prompt_requests`, `judge_requests`). The tenant forgets a
 * key IDEMPOTENCY_TTL_MS after claiming it, and a repeat after that is claimed anew under a new session
 * key (`key@claimedAtMs`), so an older row can never be asked for again. Each insert deletes those.
 * A row is stored after its key was claimed; the hour's margin covers clocks of different machines.
 */
export const KEYED_ROW_LIFETIME_MS = IDEMPOTENCY_TTL_MS + 60 * 60 * 1000;

/** Adds `stored_at_ms` to a table made before it (its rows count from now) and the index the trim uses. */
export function prepareKeyedRows(sql: SqlStorage, table: "prompt_requests" | "judge_requests", nowMs: number): void {
  const columns = sql.exec<{ name: string }>(`PRAGMA table_info(${table})`).toArray();
  if (!columns.some((c) => c.name === "stored_at_ms")) {
    sql.exec(`ALTER TABLE ${table} ADD COLUMN stored_at_ms INTEGER`);
    sql.exec(`UPDATE ${table} SET stored_at_ms = ?`, nowMs);
  }
  sql.exec(`CREATE INDEX IF NOT EXISTS ${table}_by_age ON ${table} (stored_at_ms)`);
}

/** Deletes the rows whose keys the tenant has forgotten. */
export function forgetExpiredKeys(sql: SqlStorage, table: "prompt_requests" | "judge_requests", nowMs: number): void {
  sql.exec(`DELETE FROM ${table} WHERE stored_at_ms <= ?`, nowMs - KEYED_ROW_LIFETIME_MS);
}
