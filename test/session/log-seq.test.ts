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

describe("SessionLog counts", () => {
  it("are counted from the table once, then kept by the appends without another query", () =>
    runInDurableObject(env.SESSIONS.getByName("log-counts-1"), (_i, state) => {
      const tx = <T>(fn: () => T) => state.storage.transactionSync(fn);
      const queries: string[] = [];
      const sql = new Proxy(state.storage.sql, {
        get(target, key) {
          if (key === "exec")
            return (query: string, ...values: unknown[]) => {
              queries.push(query);
              return target.exec(query, ...values);
            };
          const value = Reflect.get(target, key);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      new SessionLog(state.storage.sql).append(
        [
          { stream: "messages", body: line(1) },
          { stream: "events", body: line(2) },
        ],
        tx,
      );
      const log = new SessionLog(sql);
      expect(log.counts()).toEqual({ messages: 1, events: 1, trace: 0 });
      log.append([{ stream: "events", body: line(3) }], tx);
      log.append(
        [
          { stream: "trace", body: line(4) },
          { stream: "events", body: "x".repeat(600_000) },
          { stream: "messages", body: line(6) },
        ],
        tx,
      );
      queries.length = 0;
      expect(log.counts()).toEqual({ messages: 2, events: 3, trace: 1 });
      expect(queries).toEqual([]);
      // What a fresh count of the table says.
      expect(new SessionLog(state.storage.sql).counts()).toEqual({ messages: 2, events: 3, trace: 1 });
      // A refused record counts nothing.
      expect(() => log.append([{ stream: "events", body: "y".repeat(33 * 1024 * 1024) }], tx)).toThrow(/limit/);
      expect(log.counts()).toEqual({ messages: 2, events: 3, trace: 1 });
    }));
});

describe("SessionLog flush plans", () => {
  it("take the whole tail when it fits, else the rows up to the byte limit, and at least one row", () =>
    runInDurableObject(env.SESSIONS.getByName("log-plan-1"), (_i, state) => {
      const tx = <T>(fn: () => T) => state.storage.transactionSync(fn);
      const sql = state.storage.sql;
      const log = new SessionLog(sql);
      const plan = (maxBytes: number) => {
        const end = log.planFlush(maxBytes);
        sql.exec(`UPDATE flush_state SET planned_seq = NULL`);
        return end;
      };
      expect(plan(1_000)).toBeNull();
      // Three rows of 100 bytes, then one of 1,000,000 (stored in parts), then one of 100.
      log.append(
        [1, 2, 3].map(() => ({ stream: "events" as const, body: "a".repeat(100) })),
        tx,
      );
      log.append([{ stream: "events", body: "b".repeat(1_000_000) }], tx);
      log.append([{ stream: "events", body: "c".repeat(100) }], tx);
      expect(plan(2_000_000)).toBe(5);
      expect(plan(1_000_300)).toBe(4);
      expect(plan(250)).toBe(2);
      expect(plan(1)).toBe(1);
      // After a flush of the first three, the big row alone passes the limit: it is planned alone.
      sql.exec(`UPDATE flush_state SET flushed_seq = 3`);
      expect(plan(1_000)).toBe(4);
      expect(plan(1_000_100)).toBe(5);
    }));
});
