import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { AgentEvent, AgentMessage } from "../../src/domain";
import { unwrapResult as unwrap } from "../../src/domain";
import { encodeJsonl } from "../../src/session/jsonl";
import { SEGMENT_PREFETCH_BYTES } from "../../src/session/log-reader";
import { MAX_SEGMENT_BYTES } from "../../src/session/segment-flusher";
import type { SessionRpc } from "../../src/session/session-api";
import { MAX_RECORD_BYTES, ROW_PART_CHARS } from "../../src/session/session-log";
import { DurableSessionStore } from "../../src/session/session-store";
import { withoutEndMark } from "../../src/workspace/streams";
import { deltaEvent, eventsJsonl, userMessage } from "../helpers/records";
import { type SessionDO, useSessionDeps } from "../helpers/test-worker";
import { recordingBucket } from "../workspace/helpers";

let n = 0;
/** R2 puts that wait until `release()`: a flush stays under way while the test appends. */
function gatedPuts() {
  const original = env.STORE.put.bind(env.STORE);
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const put = vi.spyOn(env.STORE, "put").mockImplementation(async (...args: Parameters<R2Bucket["put"]>) => {
    await released;
    return original(...args);
  });
  return { put, release };
}

async function newSession() {
  const s = new DurableSessionStore(env, { next: (kind) => `${kind === "session" ? "s" : "x"}_flush${++n}` });
  const { id } = await s.create({});
  return { s, id, stub: s.stub(id) };
}

async function keys(prefix: string): Promise<string[]> {
  const listed = await env.STORE.list({ prefix });
  return listed.objects.map((o) => o.key);
}

async function exported(stub: DurableObjectStub<SessionRpc>, stream: "messages" | "events"): Promise<string> {
  return new Response(withoutEndMark(unwrap(await stub.exportJsonl(stream)).body)).text();
}

/**
 * A session with 4 MiB of events flushed to R2 (the threshold's 256 KiB segment, then segments of
 * MAX_SEGMENT_BYTES), its R2 reads recorded from now on.
 */
async function longFlushedLog() {
  const { id, stub } = await newSession();
  await runInDurableObject(stub, (instance: SessionDO) => {
    for (let i = 0; i < 500; i++) instance.appendEvents([deltaEvent(id, `e_${i}`, "z".repeat(8 * 1024))]);
  });
  expect(await stub.flush()).toMatchObject({ ok: true });
  const { bucket, gets } = recordingBucket();
  useSessionDeps(id, { bucket });
  return { id, stub, gets };
}

/** Writes some of a session's history: messages and events interleaved. */
async function seed(s: DurableSessionStore, id: string, from: number, count: number) {
  const messages: AgentMessage[] = [];
  const events: { seq: number; event: AgentEvent }[] = [];
  for (let i = from; i < from + count; i++) {
    const m = userMessage(id, `m_${i}`);
    const e = deltaEvent(id, `e_${i}`, `delta ${i}`);
    await s.appendMessage(id, m);
    events.push({ seq: await s.appendEvent(id, e), event: e });
    messages.push(m);
  }
  return { messages, events };
}

/** An R2 bucket whose puts fail (after letting `allowPuts` succeed); other calls reach the real one. */
function flakyBucket(real: R2Bucket, allowPuts: number) {
  const state = { allowed: allowPuts, puts: [] as string[] };
  const bucket = {
    head: (key: string) => real.head(key),
    get: (key: string, options?: R2GetOptions) => real.get(key, options),
    list: (options?: R2ListOptions) => real.list(options),
    delete: (keys: string | string[]) => real.delete(keys),
    put: async (key: string, value: Parameters<R2Bucket["put"]>[1], options?: R2PutOptions) => {
      if (state.allowed-- <= 0) throw new Error("R2 unavailable (injected)");
      state.puts.push(key);
      return real.put(key, value, options);
    },
  } as unknown as R2Bucket;
  return { bucket, state };
}

describe("flushing the log to R2", () => {
  it("writes immutable segments per stream, a manifest and session.json; reads stay complete", async () => {
    const { s, id, stub } = await newSession();
    const first = await seed(s, id, 1, 3);
    expect(await stub.flush()).toEqual({ ok: true, value: { segmentsWritten: 2, recordsFlushed: 6, flushedSeq: 6 } });
    const second = await seed(s, id, 4, 2);
    expect(await stub.flush()).toEqual({ ok: true, value: { segmentsWritten: 2, recordsFlushed: 4, flushedSeq: 10 } });
    await seed(s, id, 6, 1); // stays in the unflushed tail

    expect(await keys(`sessions/${id}/`)).toEqual([
      `sessions/${id}/events/000000000002.jsonl`,
      `sessions/${id}/events/000000000008.jsonl`,
      `sessions/${id}/manifest.json`,
      `sessions/${id}/messages/000000000001.jsonl`,
      `sessions/${id}/messages/000000000007.jsonl`,
      `sessions/${id}/session.json`,
    ]);
    const segment = await env.STORE.get(`sessions/${id}/messages/000000000001.jsonl`);
    expect(await segment!.text()).toBe(encodeJsonl(first.messages));
    const manifest = await (await env.STORE.get(`sessions/${id}/manifest.json`))!.json();
    expect(manifest).toEqual({
      sessionId: id,
      flushedSeq: 10,
      streams: {
        messages: { segments: 2, records: 5, bytes: encodeJsonl([...first.messages, ...second.messages]).length },
        events: { segments: 2, records: 5, bytes: encodeJsonl([...first.events, ...second.events].map((e) => e.event)).length },
        trace: { segments: 0, records: 0, bytes: 0 },
      },
    });
    const head = await env.STORE.head(`sessions/${id}/events/000000000008.jsonl`);
    expect(head!.customMetadata).toEqual({ startSeq: "8", endSeq: "10", records: "2" });
    const meta = await (await env.STORE.get(`sessions/${id}/session.json`))!.json();
    expect(Object.keys(meta as object)).toEqual(["id", "workspaceId", "projectId", "title", "createdAt", "updatedAt"]);

    const allMessages = [...first.messages, ...second.messages, userMessage(id, "m_6")];
    expect(await exported(stub, "messages")).toBe(encodeJsonl(allMessages));
    expect(await s.loadMessages(id)).toEqual(allMessages);
    const events = await s.loadEventsAfter(id, 7);
    expect(events.map((e) => e.seq)).toEqual([8, 10, 12]);
  });

  it("a failed R2 write loses nothing: a later flush succeeds and every record is exported exactly once", async () => {
    const { s, id, stub } = await newSession();
    const first = await seed(s, id, 1, 4);
    // The messages segment is written, then the events put fails: a half-done flush.
    const { bucket, state: flaky } = flakyBucket(env.STORE, 1);
    useSessionDeps(id, { bucket });
    expect(await stub.flush()).toEqual({
      ok: false,
      code: "flush_failed",
      message: "flush to R2 failed and will be retried: R2 unavailable (injected)",
    });
    expect(await keys(`sessions/${id}/events/`)).toEqual([]);
    expect(await keys(`sessions/${id}/messages/`)).toEqual([`sessions/${id}/messages/000000000001.jsonl`]);
    // Still complete: the rows were not marked flushed, so they are read from SQLite.
    expect(await exported(stub, "events")).toBe(eventsJsonl(first.events));
    const more = await seed(s, id, 5, 2);

    useSessionDeps(id, { bucket: env.STORE });
    expect(flaky.puts).toEqual([`sessions/${id}/messages/000000000001.jsonl`]);
    // The retry replays the same plan (seq 1..8, the existing messages segment is kept), then the rest.
    expect(await stub.flush()).toEqual({ ok: true, value: { segmentsWritten: 4, recordsFlushed: 12, flushedSeq: 12 } });
    expect(await keys(`sessions/${id}/messages/`)).toEqual([
      `sessions/${id}/messages/000000000001.jsonl`,
      `sessions/${id}/messages/000000000009.jsonl`,
    ]);
    expect(await exported(stub, "messages")).toBe(encodeJsonl([...first.messages, ...more.messages]));
    expect(await exported(stub, "events")).toBe(eventsJsonl([...first.events, ...more.events]));
  });

  it("the alarm flushes what a run left behind", async () => {
    const { s, id, stub } = await newSession();
    const { messages } = await seed(s, id, 1, 2);
    expect(await keys(`sessions/${id}/messages/`)).toEqual([]);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await keys(`sessions/${id}/messages/`)).toEqual([`sessions/${id}/messages/000000000001.jsonl`]);
    expect(await exported(stub, "messages")).toBe(encodeJsonl(messages));
  });

  it("a tail past the size threshold is flushed without waiting for the alarm", async () => {
    const { s, id, stub } = await newSession();
    const big = "x".repeat(64 * 1024);
    for (let i = 0; i < 5; i++) await s.appendEvent(id, deltaEvent(id, `e_${i}`, big));
    for (let attempt = 0; attempt < 50 && (await keys(`sessions/${id}/events/`)).length === 0; attempt++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await keys(`sessions/${id}/events/`)).toEqual([`sessions/${id}/events/000000000001.jsonl`]);
    expect((await s.loadEvents(id)).length).toBe(5);
    expect((await stub.info())!.counts).toEqual({ messages: 0, events: 5, trace: 0 });
  });

  it("a burst of appends past the threshold runs one flush at a time, not one per append", async () => {
    const { id, stub } = await newSession();
    const put = vi.spyOn(env.STORE, "put");
    try {
      // 200 events of 8 KiB appended in one synchronous stretch, as a run streaming a large answer does.
      await runInDurableObject(stub, (instance: SessionDO) => {
        for (let i = 0; i < 200; i++) instance.appendEvents([deltaEvent(id, `e_${i}`, "z".repeat(8 * 1024))]);
      });
      expect(await stub.flush()).toMatchObject({ ok: true });
      const keys = put.mock.calls.map(([key]) => key);
      // Before the fix every append past 256 KiB started a flush and wrote session.json: ~170 puts.
      // Now one per flush: the threshold's and the explicit one.
      expect(keys.filter((k) => k === `sessions/${id}/session.json`)).toHaveLength(2);
      // The flush that the threshold started took the first 256 KiB, appended before it; the rest,
      // appended while it ran, waited for the next flush.
      expect(keys.filter((k) => k.startsWith(`sessions/${id}/events/`))).toEqual([
        `sessions/${id}/events/000000000001.jsonl`,
        `sessions/${id}/events/000000000032.jsonl`,
        // The explicit flush's 1.3 MB in segments of at most MAX_SEGMENT_BYTES (1 MiB).
        `sessions/${id}/events/000000000157.jsonl`,
      ]);
      expect(MAX_SEGMENT_BYTES).toBe(1024 * 1024);
      expect(keys.filter((k) => k === `sessions/${id}/manifest.json`)).toHaveLength(3);
      expect((await s(id)).length).toBe(200);
    } finally {
      put.mockRestore();
    }
    async function s(sessionId: string) {
      return new DurableSessionStore(env).loadEvents(sessionId);
    }
  });

  it("leaves rows appended while a flush runs to the next flush instead of chasing them round by round", async () => {
    const { id, stub } = await newSession();
    const { put, release } = gatedPuts();
    const events = () => put.mock.calls.map(([key]) => key).filter((k) => k.startsWith(`sessions/${id}/events/`));
    try {
      // Past the threshold: a flush starts and waits on its first put; 14 more events come meanwhile (9 in the same stretch).
      await runInDurableObject(stub, (instance: SessionDO) => {
        for (let i = 0; i < 40; i++) instance.appendEvents([deltaEvent(id, `e_${i}`, "z".repeat(8 * 1024))]);
      });
      await runInDurableObject(stub, (instance: SessionDO) => {
        for (let i = 40; i < 45; i++) instance.appendEvents([deltaEvent(id, `e_${i}`, "z".repeat(8 * 1024))]);
      });
      release();
      for (let i = 0; i < 100 && !put.mock.calls.some(([key]) => key === `sessions/${id}/session.json`); i++)
        await new Promise((r) => setTimeout(r, 10));
      // One segment: the rows before the flush started. A streaming run made a segment per put before.
      expect(events()).toEqual([`sessions/${id}/events/000000000001.jsonl`]);
      expect(await stub.flush()).toMatchObject({ ok: true, value: { segmentsWritten: 1, recordsFlushed: 14 } });
      expect(events()).toEqual([`sessions/${id}/events/000000000001.jsonl`, `sessions/${id}/events/000000000032.jsonl`]);
    } finally {
      put.mockRestore();
    }
  });

  it("a flush asked for while another runs ends with every row appended before it in R2", async () => {
    const { id, stub } = await newSession();
    const { put, release } = gatedPuts();
    try {
      // The threshold's flush starts at about 256 KiB and waits on its put; 45 events in all, then a
      // flush is asked for while it still waits.
      const asked = await runInDurableObject(stub, async (instance: SessionDO) => {
        for (let i = 0; i < 45; i++) instance.appendEvents([deltaEvent(id, `e_${i}`, "z".repeat(8 * 1024))]);
        const flushed = instance.flush();
        release();
        return flushed;
      });
      expect(asked).toMatchObject({ ok: true });
      const lines = await runInDurableObject(stub, async (_instance: SessionDO, state) => {
        const keys = (await env.STORE.list({ prefix: `sessions/${id}/events/` })).objects.map((o) => o.key);
        let n = 0;
        for (const key of keys) n += (await (await env.STORE.get(key))!.text()).split("\n").length - 1;
        const { flushed, last } = state.storage.sql
          .exec<{ flushed: number; last: number }>(
            "SELECT (SELECT flushed_seq FROM flush_state) AS flushed, (SELECT MAX(seq) FROM log) AS last",
          )
          .one();
        return { n, flushed, last };
      });
      expect(lines).toEqual({ n: 45, flushed: lines.last, last: lines.last });
    } finally {
      put.mockRestore();
    }
  });

  it("an export reads at most SEGMENT_PREFETCH_BYTES of segments ahead of its client", async () => {
    const { stub, gets } = await longFlushedLog();
    const segments = await runInDurableObject(stub, async (instance: SessionDO) => {
      const body = withoutEndMark(unwrap(await instance.exportJsonl("events")).body);
      // Nothing read yet: the first segment (the answer waits for it) and the next (1 MiB ahead).
      await new Promise((r) => setTimeout(r, 50));
      const early = [...gets];
      const lines = (await new Response(body).text()).split("\n").length - 1;
      return { early, all: [...gets], lines };
    });
    expect(SEGMENT_PREFETCH_BYTES).toBe(1024 * 1024);
    expect(segments.early).toHaveLength(2);
    expect(segments.all.length).toBeGreaterThanOrEqual(5);
    expect(segments.lines).toBe(500);
  });

  it("an SSE replay reads the log's segments as its client reads, not all before the first frame", async () => {
    const { id, stub, gets } = await longFlushedLog();
    const replay = await runInDurableObject(stub, async (instance: SessionDO) => {
      const response = await instance.fetch(new Request("https://session/events?after=0"));
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = decoder.decode((await reader.read()).value, { stream: true });
      await new Promise((r) => setTimeout(r, 50));
      const early = [...gets];
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      return { status: response.status, early, all: [...gets], ids };
    });
    expect(replay.status).toBe(200);
    // The threshold's flush wrote 256 KiB, the explicit one the rest in segments of 1 MiB.
    const segment = (first: number) => ({ key: `sessions/${id}/events/${String(first).padStart(12, "0")}.jsonl` });
    // Unread: the segment being sent (the second: the first is 256 KiB, under SSE_REPLAY_AHEAD_BYTES
    // of frames), the one before it and one read ahead, not all five.
    expect(replay.early).toEqual([segment(1), segment(32), segment(157)]);
    expect(replay.all).toEqual([segment(1), segment(32), segment(157), segment(282), segment(407)]);
    // Every event once, in order.
    expect(replay.ids).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
  });

  it("a record over MAX_RECORD_BYTES is refused with record_too_large and nothing is stored", async () => {
    const { s, id, stub } = await newSession();
    await seed(s, id, 1, 1);
    // Built inside the object: RPC arguments are capped at 32 MiB themselves.
    const result = await runInDurableObject(stub, (instance: SessionDO) =>
      instance.appendEvents([deltaEvent(id, "e_big", "y".repeat(MAX_RECORD_BYTES))]),
    );
    expect(result).toEqual({
      ok: false,
      code: "record_too_large",
      message: expect.stringMatching(/^record is \d+ bytes; the limit is 33554432 bytes per record$/),
    });
    expect((await stub.info())!.counts).toEqual({ messages: 1, events: 1, trace: 0 });
  });

  it("a record larger than one SQLite row is stored in parts and reads back byte for byte, before and after the flush", async () => {
    const { s, id, stub } = await newSession();
    // 3 MiB of text with surrogate pairs, NULs and escapes placed across the part boundaries.
    const unit = 'abc\u0000"\\ é 😀 \ud83d\ude00 line\n';
    let text = "";
    while (text.length < 3 * 1024 * 1024) text += unit;
    const big: AgentMessage = {
      kind: "assistant",
      id: "m_big",
      sessionId: id,
      parentId: null,
      createdAt: "2026-11-30T03:00:00.000Z",
      text,
      stopReason: "STOP",
    };
    // Counted in the same synchronous stretch as the append: the size threshold flushes it right after.
    const rows = await runInDurableObject(stub, (instance: SessionDO, state) => {
      instance.appendMessages([big]);
      return state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM log_parts`).one().n;
    });
    expect(rows).toBe(Math.ceil(JSON.stringify(big).length / ROW_PART_CHARS) - 1);
    await s.appendMessage(id, userMessage(id, "m_after"));
    const expected = encodeJsonl([big, userMessage(id, "m_after")]);
    expect(await exported(stub, "messages")).toBe(expected);
    expect(await stub.flush()).toMatchObject({ ok: true });
    // A message's parts stay after the flush: the copy a cold load reads (the export reads R2).
    expect(
      await runInDurableObject(stub, (_i, state) => state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM log_parts`).one().n),
    ).toBe(rows);
    expect(await exported(stub, "messages")).toBe(expected);
    await abortAllDurableObjects();
    expect((await s.loadMessages(id))[0]).toEqual(big);
  });
});
