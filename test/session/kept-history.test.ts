import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AgentEvent, AgentMessage } from "../../src/domain";
import { unwrapResult } from "../../src/domain";
import type { RunLog } from "../../src/runtime/run-log";
import { decodeMessages } from "../../src/session/jsonl";
import type { SeqEvent } from "../../src/session/live-events";
import { readLogLines } from "../../src/session/log-reader";
import { loadStoredMessages } from "../../src/session/message-history";
import { SegmentFlusher } from "../../src/session/segment-flusher";
import type { SessionRpc } from "../../src/session/session-api";
import { SessionLog } from "../../src/session/session-log";
import { type Answer, api, postJson, prompt, sessionWithModel, store, textAnswer, toolCallAnswer, until } from "../conversation/helpers";
import { deltaEvent, userMessage } from "../helpers/records";
import { readSse } from "../helpers/sse-client";
import { type SessionDO, useSessionDeps } from "../helpers/test-worker";

/** The real bucket, with every `get` and `put` counted; `refuseGets` makes gets fail (a load that must not touch R2). */
function countingBucket(refuseGets = false) {
  const real = env.STORE;
  const state = { gets: [] as string[], puts: [] as string[] };
  const bucket = new Proxy(real, {
    get(target, property) {
      if (property === "put")
        return (key: string, ...rest: unknown[]) => {
          state.puts.push(key);
          return (target.put as (...args: unknown[]) => unknown)(key, ...rest);
        };
      if (property === "get")
        return (key: string, options?: R2GetOptions) => {
          state.gets.push(key);
          if (refuseGets) return Promise.reject(new Error(`R2 read of ${key} (refused by the test)`));
          return target.get(key, options);
        };
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { bucket, state };
}

/** The session's history loaded both ways inside its object: from the kept copy, and from R2 alone. */
async function bothWays(id: string) {
  const { bucket, state } = countingBucket();
  return runInDurableObject(store.stub(id), async (_i: SessionDO, ctx) => {
    const log = new SessionLog(ctx.storage.sql);
    const copy = await loadStoredMessages(log, bucket, id, "copy");
    const copyGets = state.gets.length;
    const r2 = await loadStoredMessages(log, bucket, id, "r2");
    return { copy, r2, copyGets, r2Gets: state.gets.length - copyGets };
  });
}

async function messageSegments(id: string): Promise<number> {
  return runInDurableObject(store.stub(id), (_i: SessionDO, ctx) => new SessionLog(ctx.storage.sql).segments("messages").length);
}

/** The messages export (segments from R2 plus the tail), decoded with the full schema. */
async function exported(id: string): Promise<AgentMessage[]> {
  return decodeMessages(await (await api(`/api/sessions/${id}/messages`)).text(), id);
}

/** Waits for the session's run to end, then for its end-of-run flush. */
async function settle(id: string): Promise<void> {
  await until(async () => (await store.info(id))?.status === "idle", "the run to end");
  unwrapResult(await store.stub(id).flush());
}

const long = (n: number) => `answer ${n}: ${"w".repeat(4_000)}`;

describe("the kept copy of recent messages in SQLite", () => {
  it("loads the same history as R2 alone, byte for byte, across flushes, a compaction, a fork and a restart, without reading R2", async () => {
    const answers: Answer[] = [
      toolCallAnswer("tc_1", "read", { path: "a.txt" }),
      textAnswer(long(1)),
      textAnswer(long(2)),
      textAnswer(long(3)),
      textAnswer("## Goal\nthe summary"),
      textAnswer("after the compaction"),
    ];
    const { sessionId: id } = await sessionWithModel((body, n) => answers[n - 1]!(body));
    // Every run ends with a flush: four runs, four flushes.
    for (const text of ["one", "two", "three"]) await readSse(await prompt(id, { text, contextWindow: 8_000 }));
    const compacted = await postJson(`/api/sessions/${id}/compact`, {});
    expect(compacted.status).toBe(200);
    await readSse(await prompt(id, { text: "four", contextWindow: 8_000 }));
    await settle(id);
    // And an unflushed tail.
    const history = await store.loadMessages(id);
    await store.appendMessage(id, userMessage(id, "m_tail", "not flushed yet", history.at(-1)!.id));

    const { copy, r2, copyGets, r2Gets } = await bothWays(id);
    expect(copy.map((m) => m.kind)).toEqual([
      ...["user", "assistant", "tool_result", "assistant"],
      ...["user", "assistant", "user", "assistant", "compaction", "user", "assistant", "user"],
    ]);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(r2));
    expect(copy).toEqual(await exported(id));
    expect(copyGets).toBe(0);
    expect(r2Gets).toBe(await messageSegments(id));

    // A restarted object builds its history from SQLite: R2 reads are refused and it does not notice.
    await abortAllDurableObjects();
    useSessionDeps(id, { bucket: countingBucket(true).bucket });
    try {
      expect(JSON.stringify(await store.loadMessages(id))).toBe(JSON.stringify(r2));
    } finally {
      useSessionDeps(id, { bucket: env.STORE });
    }

    // A fork at the compaction record: its copy, flushed or not, matches R2 and the source's prefix.
    const at = copy.findIndex((m) => m.kind === "compaction");
    const forked = await postJson(`/api/sessions/${id}/fork`, { atMessageId: copy[at]!.id });
    const forkId = ((await forked.json()) as { sessionId: string }).sessionId;
    const prefix = copy.slice(0, at + 1).map((m) => ({ ...m, sessionId: forkId }));
    expect(await store.loadMessages(forkId)).toEqual(prefix);
    unwrapResult(await store.stub(forkId).flush());
    const fork = await bothWays(forkId);
    expect(JSON.stringify(fork.copy)).toBe(JSON.stringify(fork.r2));
    expect(fork.copy).toEqual(prefix);
    expect(fork.copyGets).toBe(0);
  });

  it("keeps about KEPT bytes of the newest flushed messages, always the newest one; older ones come from R2, the rest from SQLite", async () => {
    const result = await runInDurableObject(env.SESSIONS.getByName("kept-bound-1"), async (_i, ctx) => {
      const sql = ctx.storage.sql;
      const tx = <T>(fn: () => T) => ctx.storage.transactionSync(fn);
      const sid = "s_kept_bound";
      const log = new SessionLog(sql, 3_000);
      const flusher = new SegmentFlusher(sid, log, tx, env.STORE);
      const messages: AgentMessage[] = [];
      for (let i = 1; i <= 40; i++) {
        const m = userMessage(sid, `m_${i}`, `${i} ${"x".repeat(200)}`, i === 1 ? null : `m_${i - 1}`);
        messages.push(m);
        log.append(
          [
            { stream: "messages", body: JSON.stringify(m) },
            { stream: "events", body: JSON.stringify(deltaEvent(sid, `e_${i}`, "d")) },
          ],
          tx,
        );
        if (i % 10 === 0) await flusher.flush();
      }
      const keptFrom = log.keptFrom();
      // Kept bodies are in R2 already: they never count towards the next flush.
      const unflushedAfterFlush = log.unflushedBytes();
      const segmentStarts = log.segments("messages").map((seg) => seg.startSeq);
      const rows = sql
        .exec<{ seq: number; stream: string; body: string | null }>(`SELECT seq, stream, body FROM log ORDER BY seq`)
        .toArray();
      const keptBytes = rows.filter((r) => r.stream === "messages" && r.body !== null).reduce((n, r) => n + r.body!.length, 0);
      const { bucket, state } = countingBucket();
      const copy = await loadStoredMessages(log, bucket, sid, "copy");
      const copyGets = state.gets.length;
      const r2 = await loadStoredMessages(log, bucket, sid, "r2");
      const linesAfter41 = (source: "copy" | "r2") => readLogLines(log, env.STORE, "messages", 41, source);
      const afterCopy = await linesAfter41("copy");
      const afterR2 = await linesAfter41("r2");
      // Lines after a seq inside the kept range need no segment at all.
      const getsBefore = state.gets.length;
      const keptOnly = await readLogLines(log, bucket, "messages", keptFrom, "copy");
      const keptOnlyGets = state.gets.length - getsBefore;
      const keptOnlyR2 = await readLogLines(log, env.STORE, "messages", keptFrom, "r2");
      // A newest message bigger than the bound is kept all the same.
      const big = userMessage(sid, "m_big", "y".repeat(5_000), "m_40");
      const bigSeq = log.append([{ stream: "messages", body: JSON.stringify(big) }], tx)[0]!;
      await flusher.flush();
      const bigRows = sql.exec<{ seq: number }>(`SELECT seq FROM log WHERE stream = 'messages' AND body IS NOT NULL`).toArray();
      return {
        messages,
        keptFrom,
        rows,
        keptBytes,
        copy,
        r2,
        copyGets,
        segmentStarts,
        unflushedAfterFlush,
        keptOnly,
        keptOnlyGets,
        keptOnlyR2,
        afterCopy,
        afterR2,
        bigSeq,
        bigRows,
        keptFromAfterBig: log.keptFrom(),
        withBig: await loadStoredMessages(log, env.STORE, sid, "copy"),
      };
    });
    const { messages, keptFrom, rows } = result;
    // The longest run of newest messages within 3,000 bytes (message i is at seq 2i - 1).
    let total = 0;
    let first = messages.length;
    for (let i = messages.length; i >= 1; i--) {
      const bytes = JSON.stringify(messages[i - 1]).length;
      if (total + bytes > 3_000) break;
      total += bytes;
      first = i;
    }
    expect(first).toBeLessThan(40);
    expect(result.unflushedAfterFlush).toBe(0);
    // The boundary is one past the newest dropped message (message first - 1, at seq 2(first - 1) - 1).
    expect(keptFrom).toBe(2 * first - 2);
    expect(result.keptBytes).toBe(total);
    for (const row of rows) {
      const kept = row.stream === "messages" && row.seq >= keptFrom;
      expect({ seq: row.seq, hasBody: row.body !== null }).toEqual({ seq: row.seq, hasBody: kept });
    }
    expect(result.copy).toEqual(messages);
    expect(JSON.stringify(result.copy)).toBe(JSON.stringify(result.r2));
    // Segments that start at or after the kept boundary are not read.
    expect(result.segmentStarts).toEqual([1, 21, 41, 61]);
    expect(result.copyGets).toBe(result.segmentStarts.filter((start) => start < keptFrom).length);
    expect(result.afterCopy).toEqual(result.afterR2);
    expect(result.keptOnlyGets).toBe(0);
    expect(result.keptOnly).toEqual(result.keptOnlyR2);
    expect(result.keptOnly.length).toBeGreaterThan(0);
    expect(result.afterCopy.map((l) => l.seq)).toEqual(Array.from({ length: 19 }, (_, i) => 43 + 2 * i));
    expect(result.bigRows).toEqual([{ seq: result.bigSeq }]);
    expect(result.keptFromAfterBig).toBe(result.bigSeq - 1);
    expect(result.withBig.at(-1)!.id).toBe("m_big");
    expect(result.withBig.length).toBe(41);
  });

  it("an object from before the copy (flushed bodies dropped, no kept columns) loads from R2, then keeps its new messages", async () => {
    const answers: Answer[] = [textAnswer("first answer"), textAnswer("second answer")];
    const { sessionId: id, requests } = await sessionWithModel((body, n) => answers[n - 1]!(body));
    await readSse(await prompt(id, { text: "one" }));
    await settle(id);
    const before = await store.loadMessages(id);
    const segmentsBefore = await messageSegments(id);
    // What the previous version left: no kept_from/kept_bytes, flushed bodies gone, the session row
    // written per message (so it names the newest message).
    await runInDurableObject(store.stub(id), (_i: SessionDO, ctx) => {
      const sql = ctx.storage.sql;
      sql.exec(`ALTER TABLE flush_state DROP COLUMN kept_from`);
      sql.exec(`ALTER TABLE flush_state DROP COLUMN kept_bytes`);
      sql.exec(`UPDATE log SET body = NULL, parts = 0 WHERE seq <= (SELECT flushed_seq FROM flush_state)`);
      const last = before.at(-1)!;
      sql.exec(`UPDATE session SET last_message_id = ?, updated_at = ?`, last.id, last.createdAt);
    });
    await abortAllDurableObjects();
    const reopened = await bothWays(id);
    expect(reopened.copy).toEqual(before);
    expect(JSON.stringify(reopened.copy)).toBe(JSON.stringify(reopened.r2));
    expect(reopened.copyGets).toBe(segmentsBefore);
    expect(await store.loadMessages(id)).toEqual(before);

    // The next prompt links to the newest message the row named, and is kept after its flush.
    await readSse(await prompt(id, { text: "two" }));
    await settle(id);
    const after = await store.loadMessages(id);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after[before.length]).toMatchObject({ kind: "user", text: "two", parentId: before.at(-1)!.id });
    expect(requests).toHaveLength(2);
    await abortAllDurableObjects();
    const later = await bothWays(id);
    expect(later.copy).toEqual(after);
    expect(JSON.stringify(later.copy)).toBe(JSON.stringify(later.r2));
    // Only the segments from before the upgrade are read; the new run's messages come from SQLite.
    expect(await messageSegments(id)).toBeGreaterThan(segmentsBefore);
    expect(later.copyGets).toBe(segmentsBefore);
  });

  it("the newest message is not written to the session row per append, and survives a restart through the log", async () => {
    const { sessionId: id } = await sessionWithModel((body) => textAnswer("ok")(body));
    await readSse(await prompt(id, { text: "one" }));
    await settle(id);
    const [first] = await store.loadMessages(id);
    const tail = { ...userMessage(id, "m_unflushed", "appended, not flushed", first!.id), createdAt: "2026-12-24T10:00:00.000Z" };
    await store.appendMessage(id, tail);
    const row = async () =>
      runInDurableObject(store.stub(id), (_i: SessionDO, ctx) =>
        ctx.storage.sql.exec<{ id: string | null }>(`SELECT last_message_id AS id FROM session`).one(),
      );
    expect((await row()).id).not.toBe("m_unflushed");
    expect((await store.stub(id).describe())!.updatedAt).toBe(tail.createdAt);
    await abortAllDurableObjects();
    expect((await store.stub(id).describe())!.updatedAt).toBe(tail.createdAt);
    await readSse(await prompt(id, { text: "two" }));
    await settle(id);
    const messages = await store.loadMessages(id);
    expect(messages.find((m) => m.kind === "user" && m.text === "two")!.parentId).toBe("m_unflushed");
    // The run's end flushed, and the flush brought the row up to date.
    expect((await row()).id).toBe(messages.at(-1)!.id);
  });
});

describe("flushing while messages are kept", () => {
  it("kept bodies do not count as unflushed: after a flush, a small append starts no flush", async () => {
    const { id } = await store.create({});
    const large = Array.from({ length: 40 }, (_, i) => userMessage(id, `m_${i}`, "x".repeat(10_000)));
    for (let i = 0; i < large.length; i += 10) unwrapResult(await store.stub(id).appendMessages(large.slice(i, i + 10)));
    unwrapResult(await store.stub(id).flush());
    const { bucket, state } = countingBucket();
    useSessionDeps(id, { bucket });
    try {
      // 400 KB of kept messages, past the 256 KiB threshold: counted as unflushed, they would start a flush (a put) here.
      await store.appendMessage(id, userMessage(id, "m_small", "small"));
      expect(state.puts).toEqual([]);
      expect((await store.stub(id).flush()).ok).toBe(true);
      expect(state.puts.filter((key) => key.includes("/messages/"))).toHaveLength(1);
    } finally {
      useSessionDeps(id, { bucket: env.STORE });
    }
  });
});

describe("records the runtime appends together", () => {
  it("get gap-free seqs in one commit, and are published only once all of them are stored", async () => {
    const { id } = await store.create({});
    const stub = store.stub(id) as DurableObjectStub<SessionRpc>;
    const seen = await runInDurableObject(stub, (instance: SessionDO, ctx) => {
      const session = (instance as unknown as { session: { runLog(): RunLog; hub: { publish(item: SeqEvent): void } } }).session;
      const sql = ctx.storage.sql;
      const published: { seq: number; storedSeqs: number[] }[] = [];
      const publish = session.hub.publish.bind(session.hub);
      session.hub.publish = (item) => {
        // What SQLite holds at the moment of publishing.
        published.push({
          seq: item.seq,
          storedSeqs: sql
            .exec<{ seq: number }>(`SELECT seq FROM log ORDER BY seq`)
            .toArray()
            .map((r) => r.seq),
        });
        publish(item);
      };
      const log = session.runLog();
      const m = (n: number) => userMessage(id, `m_${n}`, `message ${n}`, n === 1 ? null : `m_${n - 1}`);
      const e = (n: number): AgentEvent => ({
        type: "user_message_appended",
        eventId: `e_${n}`,
        sessionId: id,
        createdAt: m(n).createdAt,
        messageId: `m_${n}`,
      });
      log.appendTogether([
        { stream: "messages", record: m(1) },
        { stream: "events", record: e(1) },
      ]);
      log.appendEvent(deltaEvent(id, "e_x", "between"));
      log.appendTogether([
        { stream: "events", record: e(2) },
        { stream: "events", record: deltaEvent(id, "e_y", "second event of the batch") },
        { stream: "messages", record: m(2) },
      ]);
      // A batch the log refuses (its second record is too large) stores and publishes nothing.
      let refused = "";
      try {
        log.appendTogether([
          { stream: "events", record: e(3) },
          { stream: "messages", record: userMessage(id, "m_3", "z".repeat(33 * 1024 * 1024), "m_2") },
        ]);
      } catch (err) {
        refused = (err as Error).message;
      }
      log.appendMessage(m(4));
      const rows = sql.exec<{ seq: number; stream: string; body: string }>(`SELECT seq, stream, body FROM log ORDER BY seq`).toArray();
      return {
        published,
        refused,
        rows: rows.map((r) => ({ seq: r.seq, stream: r.stream, id: JSON.parse(r.body).id ?? JSON.parse(r.body).eventId })),
      };
    });
    expect(seen.rows).toEqual([
      { seq: 1, stream: "messages", id: "m_1" },
      { seq: 2, stream: "events", id: "e_1" },
      { seq: 3, stream: "events", id: "e_x" },
      { seq: 4, stream: "events", id: "e_2" },
      { seq: 5, stream: "events", id: "e_y" },
      { seq: 6, stream: "messages", id: "m_2" },
      { seq: 7, stream: "messages", id: "m_4" },
    ]);
    expect(seen.refused).toMatch(/^record is \d+ bytes; the limit is 33554432 bytes per record$/);
    // Each event was published after its whole batch was in SQLite (the batch of seqs 4-6 before seq 4 went out).
    expect(seen.published).toEqual([
      { seq: 2, storedSeqs: [1, 2] },
      { seq: 3, storedSeqs: [1, 2, 3] },
      { seq: 4, storedSeqs: [1, 2, 3, 4, 5, 6] },
      { seq: 5, storedSeqs: [1, 2, 3, 4, 5, 6] },
    ]);
    expect((await store.loadMessages(id)).map((m) => m.id)).toEqual(["m_1", "m_2", "m_4"]);
  });
});
