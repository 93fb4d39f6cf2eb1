import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SessionLog } from "../../src/session/session-log";

const line = (n: number) => JSON.stringify({ type: "x", n });

describe("SessionLog seqs", () => {
  it("numbers appends 1..n without gaps, single records and batches, also past a second writer on the same table", async () => {
    const seqs = await runInDurableObject(env.SESSIONS.getByName("log-seq-1"), async (_i, state) => {
      const tx = <T>(fn: () => T) => state.storage.transactionSync(fn);
      const a = new SessionLog(state.storage.sql);
      const b = new SessionLog(state.storage.sql);
      const out: number[] = [];
      out.push(...a.append([{ stream: "events", body: line(1) }], tx));
      out.push(
        ...a.append(
          [
            { stream: "events", body: line(2) },
            { stream: "messages", body: line(3) },
          ],
          tx,
        ),
      );
      // Another writer: `a`'s counter is behind now, and must find out.
      out.push(...b.append([{ stream: "events", body: line(4) }], tx));
      out.push(...a.append([{ stream: "events", body: line(5) }], tx));
      out.push(...a.append([{ stream: "events", body: "x".repeat(600_000) }], tx)); // several row parts: one transaction
      out.push(...b.append([{ stream: "events", body: line(7) }], tx));
      return out;
    });
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });
});
