import { sessionKeys } from "./r2-layout";
import { LOG_STREAMS, type LogStream, type SegmentRef, type SessionLog } from "./session-log";

/**
 * A flush writes segments of at most about this many bytes; bigger tails (an import, a flush that
 * failed for a while) take several rounds. A reader holds about a segment per stream it reads.
 */
export const MAX_SEGMENT_BYTES = 1024 * 1024;

/** The part of R2 the flusher uses; tests wrap it to count bytes or inject failures. */
export type SegmentBucket = Pick<R2Bucket, "put" | "get">;

export interface FlushResult {
  segmentsWritten: number;
  recordsFlushed: number;
  flushedSeq: number;
}

const encoder = new TextEncoder();
const CREATE_ONLY = () => new Headers({ "If-None-Match": "*" });

/**
 * Moves the unflushed tail of a SessionLog to immutable JSONL segments in R2. R2 has no append, so
 * each flush writes new objects (create-only, so a retried flush is idempotent), then the manifest,
 * and only then marks the rows flushed. A failed put loses nothing: the rows stay in SQLite and the
 * same plan is retried next time. Concurrent calls share one flush.
 */
export class SegmentFlusher {
  private running: Promise<FlushResult> | null = null;

  constructor(
    private readonly sessionId: string,
    private readonly log: SessionLog,
    private readonly transactionSync: <T>(fn: () => T) => T,
    public bucket: SegmentBucket,
  ) {}

  /**
   * Flushes every row appended before the call (and what its rounds pick up with them). Rows appended
   * while it runs are left to the next flush: chasing them made a segment of every put's worth of a
   * streaming run (a 2.3 MB run became about 200 segments of 12 KB). A call during a flush shares it;
   * FlushScheduler runs another after it for a caller whose rows came later.
   */
  flush(): Promise<FlushResult> {
    this.running ??= this.flushTo(this.log.lastSeq()).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async flushTo(target: number): Promise<FlushResult> {
    const result: FlushResult = { segmentsWritten: 0, recordsFlushed: 0, flushedSeq: this.log.flushState().flushedSeq };
    for (;;) {
      // A plan a failed attempt left is finished whatever its end.
      const { flushedSeq, plannedSeq } = this.log.flushState();
      if (plannedSeq === null && flushedSeq >= target) return result;
      const end = this.log.planFlush(MAX_SEGMENT_BYTES);
      if (end === null) return result;
      const rows = this.log.plannedRows();
      const segments: SegmentRef[] = [];
      for (const stream of LOG_STREAMS) {
        const mine = rows.filter((r) => r.stream === stream);
        if (mine.length === 0) continue;
        const body = mine.map((r) => `${r.body}\n`).join("");
        const bytes = encoder.encode(body);
        const startSeq = mine[0]!.seq;
        const key = sessionKeys.segment(this.sessionId, stream, startSeq);
        const endSeq = mine[mine.length - 1]!.seq;
        // null means the object exists: an earlier attempt of this same plan wrote it.
        await this.bucket.put(key, bytes, {
          onlyIf: CREATE_ONLY(),
          httpMetadata: { contentType: "application/x-ndjson" },
          customMetadata: { startSeq: String(startSeq), endSeq: String(endSeq), records: String(mine.length) },
        });
        segments.push({ stream, startSeq, endSeq, records: mine.length, bytes: bytes.byteLength, key });
      }
      await this.writeManifest(end, segments);
      this.log.commitFlush(segments, this.transactionSync);
      result.segmentsWritten += segments.length;
      result.recordsFlushed += rows.length;
      result.flushedSeq = end;
    }
  }

  /**
   * The manifest stays a few hundred bytes however long the session gets (rewriting a full segment
   * list on every flush would make R2 writes grow quadratically). Segments are found by listing the
   * stream's prefix (keys sort by seq) and carry their range in custom metadata; the manifest says
   * how far R2 is complete.
   */
  private async writeManifest(flushedSeq: number, added: readonly SegmentRef[]): Promise<void> {
    const totals = (stream: LogStream) => {
      const all = [...this.log.segments(stream), ...added.filter((s) => s.stream === stream)];
      return { segments: all.length, records: all.reduce((n, s) => n + s.records, 0), bytes: all.reduce((n, s) => n + s.bytes, 0) };
    };
    const streams = Object.fromEntries(LOG_STREAMS.map((stream) => [stream, totals(stream)]));
    const manifest = { sessionId: this.sessionId, flushedSeq, streams };
    await this.bucket.put(sessionKeys.manifest(this.sessionId), JSON.stringify(manifest), {
      httpMetadata: { contentType: "application/json" },
    });
  }
}
