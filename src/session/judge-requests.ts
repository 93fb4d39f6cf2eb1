import { ok } from "../domain";
import type { SessionResult } from "./session-api";

/**
 * Judgements sent with an idempotency key (table `judge_requests`: key -> the answer). A repeat gets the
 * stored answer; a duplicate that arrives while the first is still being judged waits for it. So a
 * verdict sent twice is recorded once.
 */
export class JudgeRequests<T> {
  private readonly pending = new Map<string, Promise<SessionResult<T>>>();

  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS judge_requests (key TEXT PRIMARY KEY, outcome TEXT NOT NULL)`);
  }

  async once(key: string, judge: () => Promise<SessionResult<T>>): Promise<SessionResult<T>> {
    const stored = this.sql.exec<{ outcome: string }>(`SELECT outcome FROM judge_requests WHERE key = ?`, key).toArray()[0];
    if (stored) return ok(JSON.parse(stored.outcome) as T);
    const running = this.pending.get(key);
    if (running) return running;
    const work = judge().then((result) => {
      if (result.ok) this.sql.exec(`INSERT INTO judge_requests (key, outcome) VALUES (?, ?)`, key, JSON.stringify(result.value));
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
