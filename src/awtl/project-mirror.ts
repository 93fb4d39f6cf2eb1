import { logLine } from "../log";
import { type ProjectRef, projectObjectName } from "./project-api";

/** At most this long after a change, R2's cases.jsonl and scorecards.jsonl hold it (longer only while R2 fails). */
export const MIRROR_DELAY_MS = 10_000;

/** The mirror's files, each the JSONL of rows already stored as JSON text. */
export type MirrorFile = "cases" | "scorecards" | "memory";

/**
 * The project's R2 mirror: cases.jsonl, scorecards.jsonl and memory.jsonl under its prefix. Memory
 * (what was promoted; small) is written as soon as it changes. Cases and scorecards are rewritten by
 * the object's alarm, at most MIRROR_DELAY_MS after a change and once for every change in between: a
 * project of a thousand cases rewrote them all for every verdict. The mark that a write is due and the
 * alarm are stored, so a restart delays the write, never loses it; a write that fails is tried again.
 */
export class ProjectMirror {
  private readonly sql: SqlStorage;
  /** Writes under way: a deletion waits for them before it removes the files. */
  private readonly writing = new Set<Promise<unknown>>();

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly store: R2Bucket,
    /** The stored rows of a file, in the order the mirror lists them. */
    private readonly rows: (file: MirrorFile) => string[],
  ) {
    this.sql = storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS mirror_due (id INTEGER PRIMARY KEY CHECK (id = 1), ref TEXT NOT NULL)`);
  }

  /** Cases or scorecards changed: the alarm writes them within MIRROR_DELAY_MS. */
  async changed(ref: ProjectRef): Promise<void> {
    this.sql.exec(`INSERT OR REPLACE INTO mirror_due (id, ref) VALUES (1, ?)`, JSON.stringify(ref));
    // An alarm already set stays: the delay counts from the first change not yet written.
    if ((await this.storage.getAlarm()) === null) await this.storage.setAlarm(Date.now() + MIRROR_DELAY_MS);
  }

  /** Memory changed: written now (a withdrawn rule must leave the mirror with it). */
  async memoryChanged(ref: ProjectRef): Promise<void> {
    await this.put(ref, "memory");
  }

  /** The alarm: writes cases and scorecards if a change is due. A failure leaves it due and sets the alarm again. */
  async flush(): Promise<void> {
    const due = this.sql.exec<{ ref: string }>(`SELECT ref FROM mirror_due WHERE id = 1`).toArray()[0];
    if (!due) return;
    const ref = JSON.parse(due.ref) as ProjectRef;
    // Cleared first: a change made while the files are written marks them due again.
    this.sql.exec(`DELETE FROM mirror_due`);
    try {
      await Promise.all([this.put(ref, "cases"), this.put(ref, "scorecards")]);
    } catch (err) {
      logLine("warn", "project mirror write failed", { error: err instanceof Error ? err.message : String(err) });
      await this.changed(ref);
    }
  }

  /** Resolves once every write under way has landed or failed. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.writing]);
  }

  private put(ref: ProjectRef, file: MirrorFile): Promise<R2Object> {
    const body = this.rows(file)
      .map((row) => `${row}\n`)
      .join("");
    const write = this.store.put(`${projectPrefix(ref)}/${file}.jsonl`, body, { httpMetadata: { contentType: "application/x-ndjson" } });
    this.writing.add(write);
    write.finally(() => this.writing.delete(write)).catch(() => {});
    return write;
  }
}

/** Where a project's mirror lives in R2; keys come from validated ids only. */
export function projectPrefix(ref: ProjectRef): string {
  return `projects/${encodeURIComponent(projectObjectName(ref))}`;
}
