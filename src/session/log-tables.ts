/**
 * The SQLite tables of a session's log (see SessionLog), created or brought up to date from any
 * earlier version: every step is idempotent, so it runs in every SessionLog's constructor.
 */

/**
 * The log table. body: the record's JSON, or its first part when `parts` more rows follow in
 * log_parts; NULL once flushed (kept for messages at or after flush_state.kept_from). bytes: the whole
 * record's UTF-8 size (flush sizing) for records in parts; 0 for a one-row record, whose size SQLite
 * measures when it is needed (`ROW_BYTES`), so an append does not encode the JSON a second time.
 * `stream` has no CHECK: only typed code (LogStream) writes it, and the CHECK cost 1.5-2 us per
 * INSERT, a third of the append (docs/benchmarks.md).
 */
const LOG_TABLE = `log (
  seq INTEGER PRIMARY KEY,
  stream TEXT NOT NULL,
  body TEXT,
  parts INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL DEFAULT 0
)`;

/** Creates the log's tables, adds the columns later versions introduced, and rebuilds a CHECKed log table. */
export function createLogTables(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS ${LOG_TABLE}`);
  migrateLogTable(sql);
  const columns = sql
    .exec<{ name: string }>(`PRAGMA table_info(log)`)
    .toArray()
    .map((c) => c.name);
  if (!columns.includes("parts")) sql.exec(`ALTER TABLE log ADD COLUMN parts INTEGER NOT NULL DEFAULT 0`);
  if (!columns.includes("bytes")) sql.exec(`ALTER TABLE log ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0`);
  sql.exec(
    `CREATE TABLE IF NOT EXISTS log_parts (seq INTEGER NOT NULL, part INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (seq, part))`,
  );
  sql.exec(`CREATE TABLE IF NOT EXISTS segments (
    stream TEXT NOT NULL, start_seq INTEGER NOT NULL, end_seq INTEGER NOT NULL,
    records INTEGER NOT NULL, bytes INTEGER NOT NULL, key TEXT NOT NULL,
    PRIMARY KEY (stream, start_seq)
  )`);
  // flushed_seq: every row <= it lives in R2. planned_seq: the end of a flush in progress, kept so
  // a retried flush writes exactly the same segments (create-only puts are then idempotent).
  sql.exec(`CREATE TABLE IF NOT EXISTS flush_state (
    id INTEGER PRIMARY KEY CHECK (id = 1), flushed_seq INTEGER NOT NULL, planned_seq INTEGER
  )`);
  sql.exec(`INSERT OR IGNORE INTO flush_state (id, flushed_seq, planned_seq) VALUES (1, 0, NULL)`);
  // kept_from: every message row at or after it has its body here (flushed or not). kept_bytes: the
  // bytes of the flushed ones. A log from before the copy has no flushed body: it starts after them.
  const flushColumns = sql
    .exec<{ name: string }>(`PRAGMA table_info(flush_state)`)
    .toArray()
    .map((c) => c.name);
  if (!flushColumns.includes("kept_from")) sql.exec(`ALTER TABLE flush_state ADD COLUMN kept_from INTEGER`);
  if (!flushColumns.includes("kept_bytes")) sql.exec(`ALTER TABLE flush_state ADD COLUMN kept_bytes INTEGER NOT NULL DEFAULT 0`);
  sql.exec(`UPDATE flush_state SET kept_from = flushed_seq + 1 WHERE kept_from IS NULL`);
}

/**
 * Logs created by earlier versions have a CHECK on `stream` (the first one even refuses `trace`);
 * SQLite cannot drop a CHECK, so such a table is rebuilt once with the same rows (the constructor runs
 * before any request, and its writes commit together: a failure leaves the old table).
 */
function migrateLogTable(sql: SqlStorage): void {
  const table = sql.exec<{ sql: string }>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'log'`).toArray()[0];
  if (!table?.sql.includes("CHECK")) return;
  sql.exec(`ALTER TABLE log RENAME TO log_old`);
  sql.exec(`CREATE TABLE ${LOG_TABLE}`);
  const columns = sql
    .exec<{ name: string }>(`PRAGMA table_info(log_old)`)
    .toArray()
    .map((c) => c.name);
  const parts = columns.includes("parts") ? "parts" : "0";
  const bytes = columns.includes("bytes") ? "bytes" : "0";
  sql.exec(`INSERT INTO log (seq, stream, body, parts, bytes) SELECT seq, stream, body, ${parts}, ${bytes} FROM log_old`);
  sql.exec(`DROP TABLE log_old`);
}

/**
 * Data a later version stores that objects written before it lack: a table or column added later
 * starts empty (or NULL) for them. Each backfill is registered the first time code that knows it
 * opens the object, with the log's last seq then (`until_seq`): records up to it may lack the data,
 * later ones were written with it. The owner fills it from the log (lazily, where the log may lie in
 * R2) and marks it done (`until_seq` 0). An object opened with an empty log has nothing to fill.
 * A future table or column adds its name here and its fill where it is read.
 */
export type BackfillName =
  /** `runs.end_seq` of runs finished before it existed: looked up per run when a stream asks. */
  | "runs.end_seq"
  /** `withdrawn_runs` rows of follow-ups withdrawn before it existed: one scan, on the first unknown run id. */
  | "withdrawn_runs"
  /** A manual compaction cut off before the `open_compaction` mark existed: checked once at recovery. */
  | "open_compaction"
  /** The tenant's list row, last told by older code (a run closed by recovery stayed "running"): reported once. */
  | "tenant_summary"
  /** Tool calls a fork made by older code left open (before forks closed them): closed once at recovery. */
  | "fork_open_calls";

const BACKFILLS: readonly BackfillName[] = ["runs.end_seq", "withdrawn_runs", "open_compaction", "tenant_summary", "fork_open_calls"];

export class Backfills {
  /** `kept`: data this object already has (a version that knew it kept it up to date), registered as done. */
  constructor(
    private readonly sql: SqlStorage,
    lastSeq: number,
    kept: readonly BackfillName[] = [],
  ) {
    sql.exec(`CREATE TABLE IF NOT EXISTS backfills (name TEXT PRIMARY KEY, until_seq INTEGER NOT NULL)`);
    sql.exec(
      `INSERT OR IGNORE INTO backfills (name, until_seq) VALUES ${BACKFILLS.map(() => "(?, ?)").join(", ")}`,
      ...BACKFILLS.flatMap((name) => [name, kept.includes(name) ? 0 : lastSeq]),
    );
  }

  /** The seq up to which records may lack `name`'s data; 0 when nothing is left to fill. */
  pending(name: BackfillName): number {
    return this.sql.exec<{ until_seq: number }>(`SELECT until_seq FROM backfills WHERE name = ?`, name).one().until_seq;
  }

  done(name: BackfillName): void {
    this.sql.exec(`UPDATE backfills SET until_seq = 0 WHERE name = ?`, name);
  }
}
