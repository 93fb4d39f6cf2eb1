import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { readLogLines } from "../../src/session/log-reader";
import { SegmentFlusher } from "../../src/session/segment-flusher";
import { SessionLog } from "../../src/session/session-log";

describe("readLog through a seq", () => {
  it("ends at `throughSeq` in a segment and in the unflushed tail, and fetches no segment that starts after it", async () => {
    const seen = await runInDurableObject(env.SESSIONS.getByName("log-range-1"), async (_i, ctx) => {
      const tx = <T>(fn: () => T) => ctx.storage.transactionSync(fn);
      const log = new SessionLog(ctx.storage.sql);
      const flusher = new SegmentFlusher("s_log_range", log, tx, env.STORE);
      const line = (n: number) => ({ stream: "trace" as const, body: `{"n":${n}}` });
      // Trace lines at seqs 1-3 (a segment), an event at 4, trace 5-6 (a segment), then 7-8 unflushed.
      log.append([line(1), line(2), line(3), { stream: "events", body: "{}" }], tx);
      await flusher.flush();
      log.append([line(5), line(6)], tx);
      await flusher.flush();
      log.append([line(7), line(8)], tx);
      const gets: string[] = [];
      const bucket = {
        get: (key: string) => {
          gets.push(key.slice(key.lastIndexOf("/") + 1));
          return env.STORE.get(key);
        },
      } as unknown as R2Bucket;
      const read = async (after: number, through?: number) => {
        gets.length = 0;
        const seqs = (await readLogLines(log, bucket, "trace", after, "r2", through)).map((l) => l.seq);
        return { seqs, gets: [...gets] };
      };
      return [await read(0, 2), await read(0, 4), await read(1, 6), await read(5, 7), await read(0)];
    });
    expect(seen).toEqual([
      { seqs: [1, 2], gets: ["000000000001.jsonl"] },
      { seqs: [1, 2, 3], gets: ["000000000001.jsonl"] },
      { seqs: [2, 3, 5, 6], gets: ["000000000001.jsonl", "000000000005.jsonl"] },
      { seqs: [6, 7], gets: ["000000000005.jsonl"] },
      { seqs: [1, 2, 3, 5, 6, 7, 8], gets: ["000000000001.jsonl", "000000000005.jsonl"] },
    ]);
  });
});
