import { ok } from "../domain";
import { forgetExpiredKeys, prepareKeyedRows } from "./keyed-rows";
import type { SessionResult } from "./session-api";

/**
 * Judgements sent with an idempotency key (table `judge_requests`: key -> the answer). A repeat gets the
 * stored answer; a duplicate that arrives while the first is still being judged waits for it. So a
 * verdict sent twice is recorded once. Rows of keys the tenant has forgotten are deleted (`keyed-rows.ts`).
 */
export class JudgeRequests<T> {
  private readonly pending = new Map<string, Promise<SessionResult<T>>>();

  constructor(
    private readonly sql: SqlStorage,
    private readonly clock: () => number,
  ) {
    sql.exec(`CREATE TABLE IF NOT EXISTS judge_requests (key TEXT PRIMARY KEY, outcome TEXT NOT NULL, stored_at_ms INTEGER)`);
    prepareKeyedRows(sql, "judge_requests", clock());
  }

  async once(key: string, judge: () => Promise<SessionResult<T>>): Promise<SessionResult<T>> {
    const stored = this.sql.exec<{ outcome: string }>(`SELECT outcome FROM judge_requests WHERE key = ?`, key).toArray()[0];
    if (stored) return ok(JSON.parse(stored.outcome) as T);
    const running = this.pending.get(key);
    if (running) return running;
    const work = judge().then((result) => {
      if (result.ok) {
        const now = this.clock();
        forgetExpiredKeys(this.sql, "judge_requests", now);
        this.sql.exec(`INSERT INTO judge_requests (key, outcome, stored_at_ms) VALUES (?, ?, ?)`, key, JSON.stringify(result.value), now);
      }
      return result;
    });
    this.pending.set(key, work);
    try {
      return await work;
    } finally {
      this.pending.delete(key);
    }
  }
}
