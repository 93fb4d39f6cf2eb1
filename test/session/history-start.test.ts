import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type AgentMessage, type CompactionMessage, counterIds } from "../../src/domain";
import { SUMMARY_SYSTEM_PROMPT } from "../../src/runtime/compaction";
import { modelView } from "../../src/runtime/context-window";
import { readLogLines } from "../../src/session/log-reader";
import { HistoryStartRow, loadStoredMessages, MessageHistory, type SeqMessages } from "../../src/session/message-history";
import { EMPTY_USAGE, usageTotals } from "../../src/session/session-context";
import { SessionLog } from "../../src/session/session-log";
import { DurableSessionStore } from "../../src/session/session-store";
import { T0 } from "../helpers/records";
import { readSse } from "../helpers/sse-client";
import { type SessionDO, useSessionDeps } from "../helpers/test-worker";
import { chunk, sse, sseResponse } from "../model/helpers";

const S = "s_history";
const user = (id: string): AgentMessage => ({ kind: "user", id, sessionId: S, parentId: null, createdAt: T0, text: `q ${id}` });
const assistant = (id: string, tokens: number, cost?: number): AgentMessage => ({
  kind: "assistant",
  id,
  sessionId: S,
  parentId: null,
  createdAt: T0,
  text: `a ${id}`,
  stopReason: "STOP",
  usage: { inputTokens: tokens, outputTokens: 1, totalTokens: tokens + 1 },
  ...(cost === undefined ? {} : { cost }),
});
const compaction = (id: string, firstKept: string, cost?: number): CompactionMessage => ({
  kind: "compaction",
  id,
  sessionId: S,
  parentId: null,
  createdAt: T0,
  summary: `summary ${id}`,
  firstKeptMessageId: firstKept,
  tokensBefore: 100,
  tokensAfter: 10,
  usage: { inputTokens: 50, outputTokens: 5, totalTokens: 55 },
  ...(cost === undefined ? {} : { cost }),
});

/** A log of messages with seqs 10, 20, 30, ... (other streams' records in between), read as the session reads it. */
function fakeLog(messages: AgentMessage[]) {
  const seqOf = (i: number) => (i + 1) * 10;
  const reads: number[] = [];
  const read = async (afterSeq: number): Promise<SeqMessages> => {
    reads.push(afterSeq);
    const from = messages.findIndex((_, i) => seqOf(i) > afterSeq);
    const slice = from < 0 ? [] : messages.slice(from);
    return { messages: slice, seqs: slice.map((_, i) => seqOf(from + i)) };
  };
  return { read, reads, seqOf };
}

/** The start row over a plain object (what HistoryStartRow keeps in SQLite). */
function memoryStart() {
  let row: ReturnType<HistoryStartRow["get"]> = { afterSeq: 0, assistants: 0, usage: EMPTY_USAGE };
  const writes: number[] = [];
  return {
    get: () => row,
    set: (start: typeof row) => {
      row = start;
      writes.push(start.afterSeq);
    },
    writes,
  };
}

describe("MessageHistory: the history starts at the latest compaction", () => {
  const log = [
    user("m1"),
    assistant("m2", 100, 0.25),
    user("m3"),
    assistant("m4", 200, 0.5),
    user("m5"),
    assistant("m6", 300),
    compaction("m7", "m5", 0.125),
    user("m8"),
    assistant("m9", 400, 1),
  ];

  it("keeps what the model's view needs, with the dropped messages' assistant count and usage carried over", async () => {
    const { read, reads, seqOf } = fakeLog(log);
    const start = memoryStart();
    const history = new MessageHistory(read, start);
    const loaded = await history.load();
    expect(loaded.messages.map((m) => m.id)).toEqual(["m5", "m6", "m7", "m8", "m9"]);
    expect(modelView(loaded.messages)).toEqual(modelView(log));
    expect(loaded.before.assistants).toBe(2);
    expect(usageTotals(loaded.messages, loaded.before.usage)).toEqual(usageTotals(log));
    expect(usageTotals(log).cost).toBe(1.875);
    expect(start.get()).toEqual({ afterSeq: seqOf(4) - 1, assistants: 2, usage: usageTotals(log.slice(0, 4)) });
    expect(reads).toEqual([0]);

    // A cold object reads only from the recorded start, and needs to move nothing.
    const cold = new MessageHistory(read, start);
    expect(await cold.load()).toEqual(loaded);
    expect(reads).toEqual([0, seqOf(4) - 1]);
    expect(start.writes).toEqual([seqOf(4) - 1]);
  });

  it("moves the start when a compaction is appended, and keeps every later message", async () => {
    const { read, seqOf } = fakeLog(log);
    const start = memoryStart();
    const history = new MessageHistory(read, start);
    await history.load();
    const later = [user("m10"), assistant("m11", 500), compaction("m12", "m10"), user("m13")];
    history.appended(later.slice(0, 3), [seqOf(9), seqOf(10), seqOf(11)]);
    history.appended(later.slice(3), [seqOf(12)]);
    const loaded = await history.load();
    const whole = [...log, ...later];
    expect(loaded.messages.map((m) => m.id)).toEqual(["m10", "m11", "m12", "m13"]);
    expect(modelView(loaded.messages)).toEqual(modelView(whole));
    expect(loaded.before.assistants).toBe(4);
    expect(usageTotals(loaded.messages, loaded.before.usage)).toEqual(usageTotals(whole));
    expect(start.get().afterSeq).toBe(seqOf(9) - 1);
  });

  it("starts at the compaction itself when the message it names is not in the log", async () => {
    const strange = [user("m1"), assistant("m2", 10), compaction("m3", "m_gone"), user("m4")];
    const { read, reads, seqOf } = fakeLog(strange);
    const start = memoryStart();
    const loaded = await new MessageHistory(read, start).load();
    expect(loaded.messages.map((m) => m.id)).toEqual(["m3", "m4"]);
    expect(modelView(loaded.messages)).toEqual(modelView(strange));
    expect(start.get().afterSeq).toBe(seqOf(2) - 1);
    // A cold object then reads from the compaction on, once, and keeps the start.
    const reloaded = await new MessageHistory(read, start).load();
    expect(reloaded).toEqual(loaded);
    expect(reads).toEqual([0, seqOf(2) - 1]);
    expect(start.writes).toEqual([seqOf(2) - 1]);
  });

  it("reads the whole log again when an appended compaction kept a message from before the start", async () => {
    const { read, reads, seqOf } = fakeLog(log);
    const start = memoryStart();
    const history = new MessageHistory(read, start);
    await history.load();
    // An imported record may name any earlier message, here one the history no longer holds.
    const imported = compaction("m10", "m3");
    history.appended([imported], [seqOf(9)]);
    expect(start.get().afterSeq).toBe(0);
    // The fake log does not hold m10: the reload finds the start m7 names again.
    const loaded = await history.load();
    expect(reads).toEqual([0, 0]);
    expect(loaded.messages.map((m) => m.id)).toEqual(["m5", "m6", "m7", "m8", "m9"]);
  });

  it("moves nothing without a compaction", async () => {
    const plain = log.slice(0, 6);
    const { read } = fakeLog(plain);
    const start = memoryStart();
    const loaded = await new MessageHistory(read, start).load();
    expect(loaded.messages).toEqual(plain);
    expect(loaded.before).toEqual({ assistants: 0, usage: EMPTY_USAGE });
    expect(start.writes).toEqual([]);
  });
});

describe("a compacted session over HTTP", () => {
  const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
  const post = (path: string, body: unknown) =>
    api(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });

  it("a cold object loads from the compaction on, with the same totals, and exports the whole log", async () => {
    const { sessionId } = (await (await api("/api/sessions", { method: "POST" })).json()) as { sessionId: string };
    let calls = 0;
    useSessionDeps(sessionId, {
      ids: counterIds(),
      modelFetch: async () => {
        calls++;
        return sseResponse(
          sse([
            chunk({ content: `answer ${calls} ${"w".repeat(3_000)}` }),
            chunk({}, "stop"),
            {
              id: "c",
              object: "chat.completion.chunk",
              created: 1,
              model: "m",
              choices: [],
              usage: { prompt_tokens: 100 * calls, completion_tokens: 7, total_tokens: 100 * calls + 7 },
            },
          ]),
        );
      },
    });
    for (let i = 0; i < 4; i++)
      await readSse(await post(`/api/sessions/${sessionId}/messages/stream`, { text: `question ${i}`, contextWindow: 8_000 }));
    const compacted = await post(`/api/sessions/${sessionId}/compact`, { instructions: "short" });
    expect(compacted.status).toBe(200);
    await readSse(await post(`/api/sessions/${sessionId}/messages/stream`, { text: "after", contextWindow: 8_000 }));
    const store = new DurableSessionStore(env);
    const whole = await store.loadMessages(sessionId);
    const record = whole.find((m) => m.kind === "compaction") as CompactionMessage;
    const keptAt = whole.findIndex((m) => m.id === record.firstKeptMessageId);
    expect(keptAt).toBeGreaterThan(0);
    const warmInfo = (await (await api(`/api/sessions/${sessionId}`)).json()) as Record<string, unknown>;

    const stored = await runInDurableObject(store.stub(sessionId), async (_instance: SessionDO, ctx) => ({
      start: new HistoryStartRow(ctx.storage.sql).get(),
      all: await loadStoredMessages(new SessionLog(ctx.storage.sql), env.STORE, sessionId),
      lines: await readLogLines(new SessionLog(ctx.storage.sql), env.STORE, "messages"),
    }));
    expect(stored.all).toEqual(whole);
    // The start is just before the first message the compaction kept.
    expect(stored.start.afterSeq).toBe(stored.lines[keptAt]!.seq - 1);
    expect(stored.start.assistants).toBe(whole.slice(0, keptAt).filter((m) => m.kind === "assistant").length);
    expect(stored.start.usage).toEqual(usageTotals(whole.slice(0, keptAt)));
    // A cold object: the session's own code loads the history from the start it recorded.
    await abortAllDurableObjects();
    const coldInfo = (await (await api(`/api/sessions/${sessionId}`)).json()) as Record<string, unknown>;
    expect({ usage: coldInfo.usage, contextTokens: coldInfo.contextTokens }).toEqual({
      usage: warmInfo.usage,
      contextTokens: warmInfo.contextTokens,
    });
    expect(coldInfo.usage).toEqual(usageTotals(whole));
  });
});

describe("replay of a compacted session from cold objects", () => {
  const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
  const post = (path: string, body: unknown) =>
    api(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  const newSession = async () => ((await (await api("/api/sessions", { method: "POST" })).json()) as { sessionId: string }).sessionId;
  const shape = (messages: AgentMessage[]) =>
    messages.map((m) =>
      m.kind === "assistant" ? m.text : m.kind === "compaction" ? `[${m.summary}]` : m.kind === "user" ? m.text : m.kind,
    );

  it("each run, in a fresh object whose history starts at a compaction, plays the recording's next turn", async () => {
    const recorded = await newSession();
    let calls = 0;
    useSessionDeps(recorded, {
      ids: counterIds(),
      modelFetch: async (_input, init) => {
        const summary =
          (JSON.parse(String(init?.body)) as { messages: { content: unknown }[] }).messages[0]?.content === SUMMARY_SYSTEM_PROMPT;
        const content = summary ? "## Goal\nrecorded summary" : `answer ${++calls} ${"q".repeat(4_000)}`;
        return sseResponse(sse([chunk({ content }), chunk({}, "stop")]));
      },
    });
    for (let i = 0; i < 12; i++)
      await readSse(await post(`/api/sessions/${recorded}/messages/stream`, { text: `question ${i}`, contextWindow: 8_000 }));
    const store = new DurableSessionStore(env);
    const original = await store.loadMessages(recorded);
    // Runs follow the compaction: their objects load a history that starts at it.
    const compactedAt = original.findIndex((m) => m.kind === "compaction");
    expect(original.slice(compactedAt + 1).filter((m) => m.kind === "user").length).toBeGreaterThanOrEqual(2);

    const replayed = await newSession();
    for (let i = 0; i < 12; i++) {
      // Every run starts in a new object: its history is loaded from the start the last compaction recorded.
      await abortAllDurableObjects();
      const { frames } = await readSse(
        await post(`/api/sessions/${replayed}/messages/stream`, {
          text: `question ${i}`,
          contextWindow: 8_000,
          model: `replay:${recorded}`,
        }),
      );
      expect(frames.at(-1)!.data).toMatchObject({ type: "agent_completed" });
    }
    expect(shape(await store.loadMessages(replayed))).toEqual(shape(original));
  });
});
