import type { BriefContext } from "./brief";
import type { FailedTurnCase } from "./failed-turn-case";

/**
 * Which cases a run's brief may name, kept as SQL rows so that a brief parses those cases only, not
 * every case of the project. A case has a key for each thing that makes it apply (`applies` in
 * brief.ts): `path:<p>` for each path of a `paths` case, `denied:<tool>` for each tool of a
 * `denied_tools` case, and `run:<its origin run>`. A run looks up the keys its context makes
 * (`briefKeys`). Keys only narrow the choice: `buildBrief` still decides on the cases they find.
 */
export class CaseIndex {
  constructor(private readonly sql: SqlStorage) {
    const fresh = sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'case_keys'`).toArray().length === 0;
    sql.exec(`CREATE TABLE IF NOT EXISTS case_keys (key TEXT NOT NULL, case_id TEXT NOT NULL, PRIMARY KEY (key, case_id))`);
    sql.exec(`CREATE INDEX IF NOT EXISTS case_keys_by_case ON case_keys (case_id)`);
    // Cases stored before the index: their keys, from their bodies (the same rule as `keysOf`).
    if (fresh) {
      sql.exec(
        `INSERT OR IGNORE INTO case_keys (key, case_id)
         SELECT 'path:' || p.value, c.case_id FROM cases c, json_each(c.body, '$.applicability.pathGlobs') p
         WHERE json_extract(c.body, '$.applicability.scope') = 'paths'`,
      );
      sql.exec(
        `INSERT OR IGNORE INTO case_keys (key, case_id)
         SELECT 'denied:' || t.value, c.case_id FROM cases c, json_each(c.body, '$.applicability.tools') t
         WHERE json_extract(c.body, '$.applicability.scope') = 'denied_tools'`,
      );
      sql.exec(`INSERT OR IGNORE INTO case_keys (key, case_id) SELECT 'run:' || json_extract(body, '$.origin.runId'), case_id FROM cases`);
    }
  }

  /** Indexes a case stored or changed (its keys replace the ones it had). */
  put(c: FailedTurnCase): void {
    this.remove(c.caseId);
    for (const key of keysOf(c)) this.sql.exec(`INSERT OR IGNORE INTO case_keys (key, case_id) VALUES (?, ?)`, key, c.caseId);
  }

  remove(caseId: string): void {
    this.sql.exec(`DELETE FROM case_keys WHERE case_id = ?`, caseId);
  }

  /** The cases that may apply to a run: a superset of those `applies` accepts, sorted. */
  candidates(ctx: BriefContext): string[] {
    return this.sql
      .exec<{ case_id: string }>(
        `SELECT DISTINCT case_id FROM case_keys WHERE key IN (SELECT value FROM json_each(?)) ORDER BY case_id`,
        JSON.stringify(briefKeys(ctx)),
      )
      .toArray()
      .map((r) => r.case_id);
  }
}

/** The keys of a case: what a run's context must hold for the case to apply to it. */
export function keysOf(c: FailedTurnCase): string[] {
  const a = c.applicability;
  const keys = [`run:${c.origin.runId}`];
  if (a.scope === "paths") keys.push(...a.pathGlobs.map((p) => `path:${p}`));
  if (a.scope === "denied_tools") keys.push(...a.tools.map((t) => `denied:${t}`));
  return [...new Set(keys)];
}

/**
 * The keys a run looks up: each path it names and every directory above it (a case about `src`
 * covers `src/a.ts`: `coversPath`), each tool it is denied, the run it retries.
 */
export function briefKeys(ctx: BriefContext): string[] {
  const keys = new Set<string>();
  for (const path of ctx.paths) {
    keys.add(`path:${path}`);
    for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) keys.add(`path:${path.slice(0, i)}`);
  }
  for (const tool of ctx.deniedTools) keys.add(`denied:${tool}`);
  if (ctx.retryOf !== null) keys.add(`run:${ctx.retryOf}`);
  return [...keys];
}
