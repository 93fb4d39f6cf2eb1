import { IDEMPOTENCY_TTL_MS } from "../domain";
import type { IdempotencyClaim } from "./tenant-api";

/**
 * A tenant's idempotency keys (table `idempotency_keys`): key -> the fingerprint of the request that
 * first used it and the caller's proposal (the ids it allocated for that request). A repeat gets the
 * same proposal back and redoes the work with the same ids; each creating operation is idempotent for
 * its ids (creating an existing session returns it, a prompt key replays its run), so a request that
 * died half-way is finished by its retry and never done twice. Keys expire after 24 h.
 */
export class IdempotencyStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS idempotency_keys (
      key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, proposal TEXT NOT NULL, claimed_at_ms INTEGER NOT NULL
    )`);
    sql.exec(`CREATE INDEX IF NOT EXISTS idempotency_keys_by_age ON idempotency_keys (claimed_at_ms)`);
  }

  /** A key's live claim, if any (for requests whose fingerprint is only known once their body is read). */
  find(key: string, nowMs: number): { fingerprint: string; proposal: string; claimedAtMs: number } | null {
    const row = this.sql
      .exec<{ fingerprint: string; proposal: string; claimed_at_ms: number }>(
        `SELECT fingerprint, proposal, claimed_at_ms FROM idempotency_keys WHERE key = ? AND claimed_at_ms > ?`,
        key,
        nowMs - IDEMPOTENCY_TTL_MS,
      )
      .toArray()[0];
    return row ? { fingerprint: row.fingerprint, proposal: row.proposal, claimedAtMs: row.claimed_at_ms } : null;
  }

  claim(key: string, fingerprint: string, proposal: string, nowMs: number): IdempotencyClaim {
    this.sql.exec(`DELETE FROM idempotency_keys WHERE claimed_at_ms <= ?`, nowMs - IDEMPOTENCY_TTL_MS);
    const row = this.sql
      .exec<{ fingerprint: string; proposal: string; claimed_at_ms: number }>(
        `SELECT fingerprint, proposal, claimed_at_ms FROM idempotency_keys WHERE key = ?`,
        key,
      )
      .toArray()[0];
    if (!row) {
      this.sql.exec(
        `INSERT INTO idempotency_keys (key, fingerprint, proposal, claimed_at_ms) VALUES (?, ?, ?, ?)`,
        key,
        fingerprint,
        proposal,
        nowMs,
      );
      return { state: "fresh", proposal, claimedAtMs: nowMs };
    }
    if (row.fingerprint !== fingerprint) return { state: "reused" };
    return { state: "repeat", proposal: row.proposal, claimedAtMs: row.claimed_at_ms };
  }
}
