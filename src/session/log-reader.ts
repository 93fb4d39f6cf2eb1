import { HarnessError } from "../domain";
import type { SegmentBucket } from "./segment-flusher";
import type { LogStream, SessionLog } from "./session-log";

/** A log line with its seq; `body` is the flat JSON record, exactly as stored. */
export interface SeqLine {
  seq: number;
  body: string;
}

/** A flushed segment that is missing or disagrees with the log's index: never silently skipped. */
export class SegmentCorruptError extends HarnessError<"history_unreadable"> {
  override readonly name = "SegmentCorruptError";
  constructor(message: string) {
    super("history_unreadable", message);
  }
}

/**
 * Reads one stream of a session, complete and in seq order: the flushed segments from R2 followed by
 * the unflushed tail from SQLite. Yields segment by segment so an export never holds the whole log.
 */
export async function* readLog(log: SessionLog, bucket: SegmentBucket, stream: LogStream, afterSeq = 0): AsyncGenerator<SeqLine[]> {
  const segments = log.segments(stream, afterSeq);
  // Take the tail's boundary before awaiting R2: rows flushed meanwhile are in segments we already listed.
  const tailFrom = segments.length > 0 ? segments[segments.length - 1]!.endSeq : afterSeq;
  const tail = log.tail(stream, Math.max(tailFrom, afterSeq));
  for (const segment of segments) {
    const seqs = log.seqsBetween(stream, segment.startSeq, segment.endSeq);
    const object = await bucket.get(segment.key);
    if (object === null) throw new SegmentCorruptError(`segment ${segment.key} is missing from R2`);
    const text = await object.text();
    const lines = text.split("\n");
    if (lines.pop() !== "" || lines.length !== seqs.length) {
      throw new SegmentCorruptError(`segment ${segment.key} has ${lines.length} lines, the log expects ${seqs.length}`);
    }
    const out: SeqLine[] = [];
    for (let i = 0; i < lines.length; i++) if (seqs[i]! > afterSeq) out.push({ seq: seqs[i]!, body: lines[i]! });
    yield out;
  }
  if (tail.length > 0) yield tail.map(({ seq, body }) => ({ seq, body }));
}

/** All lines of a stream after `afterSeq`, in one array. */
export async function readLogLines(log: SessionLog, bucket: SegmentBucket, stream: LogStream, afterSeq = 0): Promise<SeqLine[]> {
  const all: SeqLine[] = [];
  for await (const batch of readLog(log, bucket, stream, afterSeq)) all.push(...batch);
  return all;
}
