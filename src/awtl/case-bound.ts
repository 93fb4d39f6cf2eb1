import { MAX_PROJECT_CASE_BYTES, MAX_PROJECT_CASES, MAX_RUN_TIMEOUT_MS } from "../domain";

/** How long a replay holds its case from eviction: its run's longest timeout, and time to fork and judge. */
const REPLAY_LEASE_MS = MAX_RUN_TIMEOUT_MS + 5 * 60_000;

/** Which cases a new case may push out. */
export interface EvictionScope {
  /** Only imported cases (an import's), or any (a case of the project's own runs). */
  importedOnly: boolean;
  /** Cases that stay whatever their age (those the same import has just added or seen). */
  keep: ReadonlySet<string>;
}

/**
 * The bound on a project's cases (MAX_PROJECT_CASES, MAX_PROJECT_CASE_BYTES of JSON) and which cases
 * make room for a new one. Never evicted: a case in project memory, an approved one, one a replay
 * verified (its judged scorecard passed), one whose replay awaits a verdict or is running (a lease
 * the replay route holds). Of the others, imported cases go first, then the least recently seen.
 * A case of the project's own runs may evict any of them; an import only imported ones, so a foreign
 * upload never pushes out what the project's runs taught it.
 */
export class CaseBound {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS replay_leases (lease_id TEXT PRIMARY KEY, case_id TEXT NOT NULL, until_ms INTEGER NOT NULL)`);
    sql.exec(`CREATE INDEX IF NOT EXISTS replay_leases_by_case ON replay_leases (case_id)`);
    sql.exec(`CREATE INDEX IF NOT EXISTS approvals_by_case ON approvals (case_id)`);
    // Eviction order, and the count and bytes of all cases without reading their bodies.
    sql.exec(`CREATE INDEX IF NOT EXISTS cases_by_eviction ON cases (imported DESC, last_seen_at, case_id, bytes)`);
  }

  /**
   * Room for new cases within the bound: for one case of the project's runs, or for all the new cases
   * of an import (one transaction; the eviction order is read once, when room first runs out).
   */
  room(scope: EvictionScope, nowMs = Date.now()): CaseRoom {
    const total = this.sql.exec<{ n: number; bytes: number }>(`SELECT COUNT(*) AS n, IFNULL(SUM(bytes), 0) AS bytes FROM cases`).one();
    const evictable = () =>
      this.sql
        .exec<{ case_id: string; bytes: number }>(
          `SELECT c.case_id, c.bytes FROM cases c
           WHERE ${scope.importedOnly ? "c.imported = 1 AND" : ""}
             NOT EXISTS (SELECT 1 FROM memory m WHERE m.case_id = c.case_id)
             AND NOT EXISTS (SELECT 1 FROM approvals a WHERE a.case_id = c.case_id)
             AND NOT EXISTS (SELECT 1 FROM scorecards s WHERE s.case_id = c.case_id
               AND (json_extract(s.body, '$.status') = 'pending' OR json_extract(s.judged, '$.status') = 'passed'))
             AND NOT EXISTS (SELECT 1 FROM replay_leases r WHERE r.case_id = c.case_id AND r.until_ms > ?)
           ORDER BY c.imported DESC, c.last_seen_at, c.case_id`,
          nowMs,
        )
        // Read whole: a cursor left open slows every later write to its table.
        .toArray();
    return new CaseRoom(total.n, total.bytes, evictable, scope.keep);
  }

  /** Holds a case from eviction while a replay of it runs; the lease ends by `release`, or by itself after REPLAY_LEASE_MS. */
  lease(caseId: string, nowMs = Date.now()): string {
    this.sql.exec(`DELETE FROM replay_leases WHERE until_ms <= ?`, nowMs);
    const leaseId = crypto.randomUUID();
    this.sql.exec(`INSERT INTO replay_leases (lease_id, case_id, until_ms) VALUES (?, ?, ?)`, leaseId, caseId, nowMs + REPLAY_LEASE_MS);
    return leaseId;
  }

  release(leaseId: string): void {
    this.sql.exec(`DELETE FROM replay_leases WHERE lease_id = ?`, leaseId);
  }

  /** A case deleted or evicted: its leases go with it. */
  forget(caseId: string): void {
    this.sql.exec(`DELETE FROM replay_leases WHERE case_id = ?`, caseId);
  }
}

/** The count and bytes of a project's cases as new ones are added or grow, and the cases they push out. */
export class CaseRoom {
  private order: { case_id: string; bytes: number }[] | null = null;
  private next = 0;
  /** Cases resized since `order` was read: their size now (an eviction frees what they take now). */
  private readonly resized = new Map<string, number>();

  constructor(
    private count: number,
    private bytes: number,
    private readonly evictable: () => { case_id: string; bytes: number }[],
    private readonly keep: ReadonlySet<string>,
  ) {}

  /**
   * The cases to evict so that one more case of `bytes` fits (often none), or null when it cannot
   * fit: everything it could push out is relied on, or it is bigger than the budget on its own.
   * The caller removes them and adds the case.
   */
  take(bytes: number): string[] | null {
    return this.admit(1, bytes, bytes, null);
  }

  /**
   * The cases to evict so that case `caseId`, stored in `from` bytes, may take `to` (none when it does
   * not grow or the bound has room), as a new case would; never the case itself. Null when it cannot:
   * the caller then keeps a smaller form of it. The caller removes them and stores the case.
   */
  grow(caseId: string, from: number, to: number): string[] | null {
    let victims: string[] | null = [];
    if (to > from) victims = this.admit(0, to - from, to, caseId);
    else this.bytes += to - from;
    if (victims !== null) this.resized.set(caseId, to);
    return victims;
  }

  /** Makes room for `added` more cases and `bytes` more bytes (`whole`: the largest case among them), sparing `self`. */
  private admit(added: number, bytes: number, whole: number, self: string | null): string[] | null {
    let count = this.count + added;
    let size = this.bytes + bytes;
    const fits = () => count <= MAX_PROJECT_CASES && size <= MAX_PROJECT_CASE_BYTES;
    const victims: string[] = [];
    let next = this.next;
    if (!fits()) {
      if (whole > MAX_PROJECT_CASE_BYTES) return null;
      this.order ??= this.evictable();
      while (!fits()) {
        const victim = this.order[next++];
        if (!victim) return null;
        if (victim.case_id === self || this.keep.has(victim.case_id)) continue;
        victims.push(victim.case_id);
        count--;
        size -= this.resized.get(victim.case_id) ?? victim.bytes;
      }
    }
    this.count = count;
    this.bytes = size;
    this.next = next;
    return victims;
  }
}
