import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, inject, it } from "vitest";
import type { AgentEvent } from "../src/domain";
import type { RunLog } from "../src/runtime/run-log";
import { decodeMessageLine } from "../src/session/jsonl";
import { readLogLines } from "../src/session/log-reader";
import { HistoryStartRow, loadMessagesAfter, loadStoredMessages, MessageHistory } from "../src/session/message-history";
import { SessionLog } from "../src/session/session-log";
import { DurableSessionStore } from "../src/session/session-store";
import type { SessionDO } from "../test/helpers/test-worker";
import { type ConversationSizes, conversation as generate } from "./fixtures/conversation";
import type { HistoryBaseline, SessionHistoryInput } from "./setup/session-history";

/**
 * A 10,000-message session. History load for the next run: cold (a fresh SessionLog over the
 * object's SQLite; nothing cached in memory) three ways: from the copy of recent messages SQLite keeps
 * (what a cold object does now), from R2 segments alone (an object from before the copy) and from R2
 * with every line validated by the schema (the path before); and warm (the object's MessageHistory
 * already loaded). Appends: through the runtime's RunLog one message per call, and a message with its
 * event per call (records the runtime produces together); through the RPC method (validated), one and
 * 100 per call; a bare INSERT as the floor. Baselines in the same run, from
 * bench/setup/session-history.ts in Node: the very JSONL bytes the session stored, read from local disk
 * line by line with JSON.parse, and appended one fs.appendFileSync per line (with and without the
 * JSON.stringify of the record, which the runtime's path includes).
 */
const MESSAGES = 10_000;
const RUNS = 7;
const WARM_LOADS = 100;
/** Each append path is timed this many times (10,000 records each, the paths taking turns); the median is shown. */
const APPEND_ROUNDS = 3;
/** user, assistant with a read call, tool result (~600 B), repeated. */
const SIZES: ConversationSizes = { userRepeats: 4, assistantRepeats: 5, resultChars: 500 };
const conversation = (sessionId: string, count: number, from = 0) => generate(sessionId, count, SIZES, from);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

it("10,000-message session: history load cold and warm, appends per second, vs a local JSONL file", async () => {
  const input: SessionHistoryInput = inject("sessionHistory");
  const store = new DurableSessionStore(env);
  const { id } = await store.create({});
  const messages = conversation(id, MESSAGES);

  const measured = await runInDurableObject(store.stub(id), async (instance: SessionDO, state) => {
    for (let i = 0; i < messages.length; i += 200) expect(instance.appendMessages(messages.slice(i, i + 200)).ok).toBe(true);
    await instance.flush();
    const fromCopy = () => loadStoredMessages(new SessionLog(state.storage.sql), env.STORE, id, "copy");
    const fromR2 = () => loadStoredMessages(new SessionLog(state.storage.sql), env.STORE, id, "r2");
    const validated = async () =>
      (await readLogLines(new SessionLog(state.storage.sql), env.STORE, "messages", 0, "r2")).map((line) =>
        decodeMessageLine(line.body, line.seq, id),
      );
    // The copy holds what R2 holds, line for line.
    expect(JSON.stringify(await fromCopy())).toBe(JSON.stringify(await fromR2()));
    // The three loads take turns, so a slow moment of the machine does not land on one of them only.
    const times = { copy: [] as number[], r2: [] as number[], validated: [] as number[] };
    for (let run = 0; run < RUNS; run++) {
      for (const [name, load] of [
        ["copy", fromCopy],
        ["r2", fromR2],
        ["validated", validated],
      ] as const) {
        const start = performance.now();
        const loaded = await load();
        times[name].push(performance.now() - start);
        expect(loaded).toHaveLength(MESSAGES);
      }
    }
    const cold = { copy: median(times.copy), r2: median(times.r2), validated: median(times.validated) };
    const history = new MessageHistory(
      (afterSeq) => loadMessagesAfter(new SessionLog(state.storage.sql), env.STORE, id, afterSeq),
      new HistoryStartRow(state.storage.sql),
    );
    await history.load();
    // The clock has 1 ms resolution: a warm load is timed over WARM_LOADS loads.
    const warm: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const start = performance.now();
      for (let i = 0; i < WARM_LOADS; i++) expect((await history.load()).messages.length).toBe(MESSAGES);
      warm.push((performance.now() - start) / WARM_LOADS);
    }
    // A compaction near the end, keeping the last 100 messages: a cold object's history starts there.
    const compaction = {
      kind: "compaction" as const,
      id: "m_bench_compaction",
      sessionId: id,
      parentId: messages.at(-1)!.id,
      createdAt: messages.at(-1)!.createdAt,
      summary: "(bench) the summary",
      firstKeptMessageId: messages[MESSAGES - 100]!.id,
      tokensBefore: 100_000,
      tokensAfter: 2_000,
    };
    expect(instance.appendMessages([compaction]).ok).toBe(true);
    const coldHistory = () =>
      new MessageHistory(
        (afterSeq) => loadMessagesAfter(new SessionLog(state.storage.sql), env.STORE, id, afterSeq),
        new HistoryStartRow(state.storage.sql),
      );
    // No object held the history when the compaction was appended: the first load finds it and records the start.
    await coldHistory().load();
    const compactedTimes: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const start = performance.now();
      const loaded = await coldHistory().load();
      compactedTimes.push(performance.now() - start);
      expect(loaded.messages.length).toBe(101);
      expect(loaded.before.assistants).toBe(messages.slice(0, MESSAGES - 100).filter((m) => m.kind === "assistant").length);
    }
    const segments = new SessionLog(state.storage.sql).segments("messages");
    let jsonl = "";
    for (const segment of segments) jsonl += await (await env.STORE.get(segment.key))!.text();
    return { cold, compacted: median(compactedTimes), warm: median(warm), segments: segments.length, jsonl };
  });

  // Appends into a second session: through the runtime's RunLog (the records are built by the
  // runtime, so they are not validated again), one message per call, then a message and its event per
  // call; the same messages through the RPC method (validated), one and 100 per call.
  const { id: appendId } = await store.create({});
  const appends = await runInDurableObject(store.stub(appendId), async (instance: SessionDO, state) => {
    // The runtime's RunLog is private to the session: reached the way a run reaches it.
    const runLog = (instance as unknown as { session: { runLog(): RunLog } }).session.runLog();
    const rate = (ms: number, records = MESSAGES) => records / (ms / 1000);
    const rates = { runtime: [] as number[], paired: [] as number[], one: [] as number[], batch: [] as number[], bare: [] as number[] };
    state.storage.sql.exec("CREATE TABLE bench_rows (body TEXT)");
    // Fresh messages for every pass (ids follow on from the ones before).
    let next = 0;
    const fresh = () => conversation(appendId, MESSAGES, MESSAGES * next++);
    for (let round = 0; round < APPEND_ROUNDS; round++) {
      const runtime = fresh();
      let start = performance.now();
      for (const message of runtime) runLog.appendMessage(message);
      rates.runtime.push(rate(performance.now() - start));
      const paired = fresh();
      const events: AgentEvent[] = paired.map((m) => ({
        type: "assistant_completed",
        eventId: `e_${m.id}`,
        sessionId: appendId,
        createdAt: m.createdAt,
        messageId: m.id,
        stopReason: "STOP",
      }));
      start = performance.now();
      for (let i = 0; i < paired.length; i++) {
        runLog.appendTogether([
          { stream: "messages", record: paired[i]! },
          { stream: "events", record: events[i]! },
        ]);
      }
      rates.paired.push(rate(performance.now() - start, 2 * MESSAGES));
      const single = fresh();
      start = performance.now();
      for (const message of single) instance.appendMessages([message]);
      rates.one.push(rate(performance.now() - start));
      const batched = fresh();
      start = performance.now();
      for (let i = 0; i < batched.length; i += 100) instance.appendMessages(batched.slice(i, i + 100));
      rates.batch.push(rate(performance.now() - start));
      // The floor: one bare SQLite INSERT of the same JSON per record (no seq, no transaction, nothing else).
      const bodies = fresh().map((m) => JSON.stringify(m));
      start = performance.now();
      for (const body of bodies) state.storage.sql.exec("INSERT INTO bench_rows (body) VALUES (?)", body);
      rates.bare.push(rate(performance.now() - start));
      // Between rounds the log goes to R2, as it would every 256 KiB; not timed.
      await instance.flush();
    }
    return {
      runtime: median(rates.runtime),
      paired: median(rates.paired),
      one: median(rates.one),
      batch: median(rates.batch),
      bare: median(rates.bare),
    };
  });

  const response = await fetch(`${input.url}/history/baseline`, { method: "POST", body: measured.jsonl });
  expect(response.ok).toBe(true);
  const node = (await response.json()) as HistoryBaseline;
  expect(node.lines).toBe(MESSAGES);

  const ms = (n: number) => `${n.toFixed(1)} ms`;
  const x = (n: number) => `${n.toFixed(2)}x`;
  const perSecond = (n: number) => `${n.toFixed(0)}/s`;
  console.log(
    `\nsession history: ${MESSAGES} messages, ${(node.bytes / 1e6).toFixed(2)} MB of JSONL in ${measured.segments} R2 segments; median of ${RUNS} loads and ${APPEND_ROUNDS} x ${MESSAGES} appends; Node ${input.node}\n` +
      "| path | time or rate | vs local file |\n| --- | --- | --- |\n" +
      `| history load, cold, from the kept copy in SQLite (structural check) | ${ms(measured.cold.copy)} | ${x(measured.cold.copy / node.readMs)} |\n` +
      `| history load, cold, segments from R2 (no copy; structural check) | ${ms(measured.cold.r2)} | ${x(measured.cold.r2 / node.readMs)} |\n` +
      `| history load, cold, segments from R2, validated (the path before) | ${ms(measured.cold.validated)} | ${x(measured.cold.validated / node.readMs)} |\n` +
      `| history load, cold, after a compaction that kept the last 100 messages (reads from there) | ${ms(measured.compacted)} | ${x(measured.compacted / node.readMs)} |\n` +
      `| history load, warm (MessageHistory kept; mean of ${WARM_LOADS}) | ${measured.warm.toFixed(2)} ms | ${x(measured.warm / node.readMs)} |\n` +
      `| Node: readline + JSON.parse of the same JSONL on local disk | ${ms(node.readMs)} | 1x |\n` +
      `| appends, runtime path (RunLog), 1 message per call | ${perSecond(appends.runtime)} | ${x(appends.runtime / node.appendsPerSecond)} |\n` +
      `| appends, runtime path (RunLog), message + its event per call (records/s) | ${perSecond(appends.paired)} | ${x(appends.paired / node.appendsPerSecond)} |\n` +
      `| appends, RPC method (validated), 1 message per call | ${perSecond(appends.one)} | ${x(appends.one / node.appendsPerSecond)} |\n` +
      `| appends, RPC method (validated), 100 messages per call | ${perSecond(appends.batch)} | ${x(appends.batch / node.appendsPerSecond)} |\n` +
      `| bare SQLite INSERT of the same JSON, 1 statement per record | ${perSecond(appends.bare)} | ${x(appends.bare / node.appendsPerSecond)} |\n` +
      `| Node: fs.appendFileSync per line (unsynced) | ${perSecond(node.appendsPerSecond)} | 1x |\n` +
      `| Node: JSON.stringify + fs.appendFileSync per record (what pi does) | ${perSecond(node.stringifyAppendsPerSecond)} | ${x(node.stringifyAppendsPerSecond / node.appendsPerSecond)} |\n`,
  );
});
