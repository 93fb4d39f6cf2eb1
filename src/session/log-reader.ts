import { failure, HarnessError, ok } from "../domain";
import type { SegmentBucket } from "./segment-flusher";
import type { SessionResult } from "./session-api";
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

/** Segments fetched ahead of the one being checked: a cold history load waits for R2 about once, not once per segment. */
export const SEGMENT_PREFETCH = 4;
/**
 * ...and at most this many bytes of them (one segment at least): an export to a client that stops
 * reading holds what was fetched ahead, per client.
 */
export const SEGMENT_PREFETCH_BYTES = 1024 * 1024;

/**
 * Where flushed message lines are read from: `copy` takes the bodies SQLite kept after the flush (the
 * newest messages; older ones still come from R2), `r2` reads every flushed line from its segment
 * (exports, and the check that R2 holds the complete log).
 */
export type FlushedSource = "copy" | "r2";

/**
 * Reads one stream of a session, complete and in seq order: the flushed segments from R2 followed by
 * the rows SQLite still holds (the unflushed tail, and with `copy` the kept messages). Yields segment by
 * segment so an export never holds the whole log; up to SEGMENT_PREFETCH segments and
 * SEGMENT_PREFETCH_BYTES are read ahead (a segment is usually a flush's worth, about 256 KiB).
 * `throughSeq` ends the read there: segments starting after it are not fetched.
 */
export async function* readLog(
  log: SessionLog,
  bucket: SegmentBucket,
  stream: LogStream,
  afterSeq = 0,
  source: FlushedSource = "r2",
  throughSeq = Number.MAX_SAFE_INTEGER,
): AsyncGenerator<SeqLine[]> {
  // Everything below is listed before awaiting R2: rows flushed or trimmed meanwhile are in segments we already listed.
  // From `keptFrom` on, every message has its body in SQLite; segments are read only for what lies before it.
  const keptFrom = source === "copy" && stream === "messages" ? log.keptFrom() : Number.POSITIVE_INFINITY;
  const segments =
    keptFrom > afterSeq + 1
      ? log.segments(stream, afterSeq).filter((segment) => segment.startSeq < keptFrom && segment.startSeq <= throughSeq)
      : [];
  const tailFrom =
    keptFrom !== Number.POSITIVE_INFINITY ? keptFrom - 1 : segments.length > 0 ? segments[segments.length - 1]!.endSeq : afterSeq;
  const tail = log.tail(stream, Math.max(tailFrom, afterSeq), throughSeq);
  const seqs = segments.map((segment) => log.seqsBetween(stream, segment.startSeq, segment.endSeq));
  const texts: (Promise<string> | undefined)[] = [];
  let consumed = 0;
  let bytesAhead = 0;
  const fetchAhead = () => {
    for (;;) {
      const segment = segments[texts.length];
      if (!segment || texts.length - consumed >= SEGMENT_PREFETCH) return;
      if (texts.length > consumed && bytesAhead + segment.bytes > SEGMENT_PREFETCH_BYTES) return;
      const text = bucket.get(segment.key).then((object) => {
        if (object === null) throw new SegmentCorruptError(`segment ${segment.key} is missing from R2`);
        return object.text();
      });
      // Awaited in order below; a failure of one read ahead must not be an unhandled rejection meanwhile.
      text.catch(() => {});
      texts.push(text);
      bytesAhead += segment.bytes;
    }
  };
  fetchAhead();
  for (const [i, segment] of segments.entries()) {
    const text = await texts[i]!;
    texts[i] = undefined;
    consumed++;
    bytesAhead -= segment.bytes;
    fetchAhead();
    const lines = text.split("\n");
    const expected = seqs[i]!;
    if (lines.pop() !== "" || lines.length !== expected.length) {
      throw new SegmentCorruptError(`segment ${segment.key} has ${lines.length} lines, the log expects ${expected.length}`);
    }
    const out: SeqLine[] = [];
    for (let j = 0; j < lines.length; j++) {
      const seq = expected[j]!;
      if (seq > afterSeq && seq < keptFrom && seq <= throughSeq) out.push({ seq, body: lines[j]! });
    }
    yield out;
  }
  if (tail.length > 0) yield tail;
}

/** All lines of a stream after `afterSeq` (through `throughSeq`), in one array. */
export async function readLogLines(
  log: SessionLog,
  bucket: SegmentBucket,
  stream: LogStream,
  afterSeq = 0,
  source: FlushedSource = "r2",
  throughSeq = Number.MAX_SAFE_INTEGER,
): Promise<SeqLine[]> {
  const all: SeqLine[] = [];
  for await (const batch of readLog(log, bucket, stream, afterSeq, source, throughSeq)) for (const line of batch) all.push(line);
  return all;
}

/** A read of the stored log; any failure (a lost segment, a corrupt line, R2 down) is `history_unreadable`. */
export async function readable<T>(read: () => Promise<T>): Promise<SessionResult<T>> {
  try {
    return ok(await read());
  } catch (err) {
    return failure("history_unreadable", unreadableMessage(err));
  }
}

export function unreadableMessage(err: unknown): string {
  return `the session's log could not be read: ${(err as Error).message}`;
}
