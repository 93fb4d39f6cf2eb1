import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, inject, it } from "vitest";
import type { AgentMessage } from "../src/domain";
import { decodeMessageLine } from "../src/session/jsonl";
import { readLogLines } from "../src/session/log-reader";
import { MessageHistory } from "../src/session/message-history";
import { SessionLog } from "../src/session/session-log";
import { DurableSessionStore } from "../src/session/session-store";
import type { SessionDO } from "../test/helpers/test-worker";
import { type ConversationSizes, conversation as generate } from "./fixtures/conversation";
import type { HistoryBaseline, SessionHistoryInput } from "./setup/session-history";

/**
 * A 10,000-message session. History load for the next run: cold (a fresh SessionLog over the
 * object's SQLite, every flushed segment read from R2, every line decoded and validated; nothing
 * cached) and warm (the object's MessageHistory already loaded). Appends: one message per call
 * into the SessionDO (validate, seq, SQLite commit), and 100 per call. Baselines in the same run,
 * from bench/setup/session-history.ts in Node: the very JSONL bytes the session stored, read from
 * local disk line by line with JSON.parse, and appended one fs.appendFileSync per line.
 */
const MESSAGES = 10_000;
const RUNS = 7;
const WARM_LOADS = 100;
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
    const read = async () => {
      const log = new SessionLog(state.storage.sql);
      return (await readLogLines(log, env.STORE, "messages")).map((line) => decodeMessageLine(line.body, line.seq, id));
    };
    const cold: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const start = performance.now();
      const loaded = await read();
      cold.push(performance.now() - start);
      expect(loaded).toHaveLength(MESSAGES);
    }
    const history = new MessageHistory(read);
    await history.load();
    // The clock has 1 ms resolution: a warm load is timed over WARM_LOADS loads.
    const warm: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const start = performance.now();
      for (let i = 0; i < WARM_LOADS; i++) expect((await history.load()).length).toBe(MESSAGES);
      warm.push((performance.now() - start) / WARM_LOADS);
    }
    const segments = new SessionLog(state.storage.sql).segments("messages");
    let jsonl = "";
    for (const segment of segments) jsonl += await (await env.STORE.get(segment.key))!.text();
    return { cold: median(cold), warm: median(warm), segments: segments.length, jsonl };
  });

  // Appends into a second session: one message per call through the runtime's path (the records
  // are built by the runtime, so they are not validated again), the same through the RPC method
  // (validated), and 100 per RPC call.
  const { id: appendId } = await store.create({});
  const appends = await runInDurableObject(store.stub(appendId), async (instance: SessionDO, state) => {
    // The runtime's append (Session.appendValid behind RunLog) is private: reached the way a run reaches it.
    const session = (instance as unknown as { session: { appendValid(stream: "messages", records: AgentMessage[]): { ok: boolean } } })
      .session;
    const rate = (ms: number) => MESSAGES / (ms / 1000);
    const runtime = conversation(appendId, MESSAGES);
    let start = performance.now();
    for (const message of runtime) session.appendValid("messages", [message]);
    const runtimeRate = rate(performance.now() - start);
    const single = conversation(appendId, MESSAGES, MESSAGES);
    start = performance.now();
    for (const message of single) instance.appendMessages([message]);
    const oneRate = rate(performance.now() - start);
    const batched = conversation(appendId, MESSAGES, 2 * MESSAGES);
    start = performance.now();
    for (let i = 0; i < batched.length; i += 100) instance.appendMessages(batched.slice(i, i + 100));
    const batchRate = rate(performance.now() - start);
    // The floor: one bare SQLite INSERT of the same JSON per record (no seq, no transaction, nothing else).
    state.storage.sql.exec("CREATE TABLE bench_rows (body TEXT)");
    const bodies = conversation(appendId, MESSAGES, 3 * MESSAGES).map((m) => JSON.stringify(m));
    start = performance.now();
    for (const body of bodies) state.storage.sql.exec("INSERT INTO bench_rows (body) VALUES (?)", body);
    return { runtime: runtimeRate, one: oneRate, batch: batchRate, bare: rate(performance.now() - start) };
  });

  const response = await fetch(`${input.url}/history/baseline`, { method: "POST", body: measured.jsonl });
  expect(response.ok).toBe(true);
  const node = (await response.json()) as HistoryBaseline;
  expect(node.lines).toBe(MESSAGES);

  const ms = (n: number) => `${n.toFixed(1)} ms`;
  console.log(
    `\nsession history: ${MESSAGES} messages, ${(node.bytes / 1e6).toFixed(2)} MB of JSONL in ${measured.segments} R2 segments; median of ${RUNS}; Node ${input.node}\n` +
      "| path | time or rate | vs local file |\n| --- | --- | --- |\n" +
      `| history load, cold (segments from R2, decoded + validated) | ${ms(measured.cold)} | ${(measured.cold / node.readMs).toFixed(2)}x |\n` +
      `| history load, warm (MessageHistory kept; mean of ${WARM_LOADS}) | ${measured.warm.toFixed(2)} ms | ${(measured.warm / node.readMs).toFixed(2)}x |\n` +
      `| Node: readline + JSON.parse of the same JSONL on local disk | ${ms(node.readMs)} | 1x |\n` +
      `| appends in the SessionDO, runtime path (no re-validation), 1 message per call | ${appends.runtime.toFixed(0)}/s | ${(appends.runtime / node.appendsPerSecond).toFixed(2)}x |\n` +
      `| appends in the SessionDO, RPC method (validated), 1 message per call | ${appends.one.toFixed(0)}/s | ${(appends.one / node.appendsPerSecond).toFixed(2)}x |\n` +
      `| appends in the SessionDO, RPC method (validated), 100 messages per call | ${appends.batch.toFixed(0)}/s | ${(appends.batch / node.appendsPerSecond).toFixed(2)}x |\n` +
      `| bare SQLite INSERT of the same JSON, 1 statement per record | ${appends.bare.toFixed(0)}/s | ${(appends.bare / node.appendsPerSecond).toFixed(2)}x |\n` +
      `| Node: fs.appendFileSync per line (unsynced) | ${node.appendsPerSecond.toFixed(0)}/s | 1x |\n`,
  );
});
