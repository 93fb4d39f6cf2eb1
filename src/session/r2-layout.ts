import { deleteUnder } from "../r2";
import type { LogStream } from "./session-log";

/** Where a session's objects live in R2; the one place that knows the layout. */
export const sessionKeys = {
  /** Every object of the session is under this prefix (DELETE removes them all). */
  prefix: (sessionId: string) => `sessions/${sessionId}/`,
  meta: (sessionId: string) => `sessions/${sessionId}/session.json`,
  manifest: (sessionId: string) => `sessions/${sessionId}/manifest.json`,
  /** Zero-padded so that listing the prefix returns segments in seq order. */
  segment: (sessionId: string, stream: LogStream, startSeq: number) =>
    `sessions/${sessionId}/${stream}/${String(startSeq).padStart(12, "0")}.jsonl`,
};

/** Deletes every object under the session's prefix; repeatable. */
export function deleteSessionObjects(bucket: R2Bucket, sessionId: string): Promise<void> {
  return deleteUnder(bucket, sessionKeys.prefix(sessionId));
}
