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

/** Deletes every object under the session's prefix, 1,000 keys per call (R2's batch limit); repeatable. */
export async function deleteSessionObjects(bucket: R2Bucket, sessionId: string): Promise<void> {
  const prefix = sessionKeys.prefix(sessionId);
  for (;;) {
    const listed = await bucket.list({ prefix, limit: 1000 });
    if (listed.objects.length > 0) await bucket.delete(listed.objects.map((o) => o.key));
    if (!listed.truncated) return;
  }
}
