import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SessionLog } from "../../src/session/session-log";

describe("a log written before the trace stream existed", () => {
  it("is rebuilt once with every row kept, then takes trace records on the same seq", () =>
    runInDurableObject(env.SESSIONS.getByName("log-migration-1"), (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec(`DROP TABLE IF EXISTS log`);
      // The first table: two streams in the CHECK, no parts or bytes columns.
      sql.exec(`CREATE TABLE log (seq INTEGER PRIMARY KEY, stream TEXT NOT NULL CHECK (stream IN ('messages', 'events')), body TEXT)`);
      sql.exec(`INSERT INTO log (seq, stream, body) VALUES (1, 'messages', '{"m":1}'), (2, 'events', '{"e":2}'), (3, 'events', NULL)`);

      const log = new SessionLog(sql);
      const tx = <T>(fn: () => T) => state.storage.transactionSync(fn);
      expect(log.append([{ stream: "trace", body: '{"t":4}' }], tx)).toEqual([4]);
      expect(log.counts()).toEqual({ messages: 1, events: 2, trace: 1 });
      expect(sql.exec(`SELECT seq, stream, body, parts FROM log ORDER BY seq`).toArray()).toEqual([
        { seq: 1, stream: "messages", body: '{"m":1}', parts: 0 },
        { seq: 2, stream: "events", body: '{"e":2}', parts: 0 },
        { seq: 3, stream: "events", body: null, parts: 0 },
        { seq: 4, stream: "trace", body: '{"t":4}', parts: 0 },
      ]);
      // Once is enough: a second construction changes nothing.
      new SessionLog(sql);
      expect(sql.exec(`SELECT COUNT(*) AS n FROM log`).one().n).toBe(4);
      expect(sql.exec(`SELECT name FROM sqlite_master WHERE name = 'log_old'`).toArray()).toEqual([]);
      expect(sql.exec<{ sql: string }>(`SELECT sql FROM sqlite_master WHERE name = 'log'`).one().sql).not.toContain("CHECK");
    }));

  it("a log with the three-stream CHECK is rebuilt without it, every row and column kept", () =>
    runInDurableObject(env.SESSIONS.getByName("log-migration-2"), (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec(`DROP TABLE IF EXISTS log`);
      sql.exec(`CREATE TABLE log (
        seq INTEGER PRIMARY KEY, stream TEXT NOT NULL CHECK (stream IN ('messages', 'events', 'trace')),
        body TEXT, parts INTEGER NOT NULL DEFAULT 0, bytes INTEGER NOT NULL DEFAULT 0
      )`);
      sql.exec(
        `INSERT INTO log (seq, stream, body, parts, bytes) VALUES (1, 'messages', '{"m":1}', 0, 0), (2, 'trace', NULL, 0, 0), (3, 'events', 'a', 1, 700000)`,
      );
      const log = new SessionLog(sql);
      expect(sql.exec<{ sql: string }>(`SELECT sql FROM sqlite_master WHERE name = 'log'`).one().sql).not.toContain("CHECK");
      expect(sql.exec(`SELECT seq, stream, body, parts, bytes FROM log ORDER BY seq`).toArray()).toEqual([
        { seq: 1, stream: "messages", body: '{"m":1}', parts: 0, bytes: 0 },
        { seq: 2, stream: "trace", body: null, parts: 0, bytes: 0 },
        { seq: 3, stream: "events", body: "a", parts: 1, bytes: 700000 },
      ]);
      const tx = <T>(fn: () => T) => state.storage.transactionSync(fn);
      expect(log.append([{ stream: "events", body: '{"e":4}' }], tx)).toEqual([4]);
    }));
});
