import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import type { CompactionMessage } from "../src/domain";
import { toOpenAIMessages } from "../src/model";
import { chooseCut, estimateContextTokens, modelView } from "../src/runtime/context-window";
import { decodeMessageLine } from "../src/session/jsonl";
import { readLogLines } from "../src/session/log-reader";
import { SessionLog } from "../src/session/session-log";
import { DurableSessionStore } from "../src/session/session-store";
import type { SessionDO } from "../test/helpers/test-worker";
import { conversation } from "./fixtures/conversation";

/**
 * A 10,000-message session: the time to build the next model request (load the history from the log
 * - R2 segments plus the SQLite tail - select what the model is sent, convert it to chat messages and
 * serialise the body), with a compaction record near the end vs the same messages without one. Same
 * run, same object type, same log size (the compacted session has one record more).
 */
const MESSAGES = 10_000;
const RUNS = 7;
const SELECT_REPEATS = 20;
const SYSTEM = "You are a coding agent working through tools on a snapshot of a code workspace.";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function seed(store: DurableSessionStore, compacted: boolean) {
  const { id } = await store.create({});
  const messages = conversation(id, MESSAGES, { userRepeats: 8, assistantRepeats: 10, resultChars: 2_000 });
  let boundarySeq = 0;
  const result = await runInDurableObject(store.stub(id), async (instance: SessionDO, state) => {
    for (let i = 0; i < messages.length; i += 200) instance.appendMessages(messages.slice(i, i + 200));
    if (compacted) {
      const cut = chooseCut(messages, 20_000)!;
      const record: CompactionMessage = {
        kind: "compaction",
        id: "m_compaction",
        sessionId: id,
        parentId: messages.at(-1)!.id,
        createdAt: "2026-12-01T03:00:00.000Z",
        summary: `## Goal\n${"summary line\n".repeat(200)}`,
        firstKeptMessageId: cut.kept[0]!.id,
        tokensBefore: 1_000_000,
        tokensAfter: 21_000,
      };
      instance.appendMessages([record]);
    }
    await instance.flush();
    // Where a load that starts at the boundary would begin (for the last row of the table).
    const log = new SessionLog(state.storage.sql);
    const lines = await readLogLines(log, env.STORE, "messages");
    const firstKept = compacted ? (chooseCut(messages, 20_000)!.kept[0]!.id as string) : null;
    boundarySeq = firstKept ? lines[lines.findIndex((l) => decodeMessageLine(l.body).id === firstKept) - 1]!.seq : 0;
    return lines.length;
  });
  return { id, records: result, boundarySeq };
}

/** Builds the next request as the runtime does, from a cold read of the log. */
async function buildRequest(store: DurableSessionStore, id: string, afterSeq = 0) {
  return runInDurableObject(store.stub(id), async (_instance: SessionDO, state) => {
    const start = performance.now();
    const log = new SessionLog(state.storage.sql);
    const history = (await readLogLines(log, env.STORE, "messages", afterSeq)).map((l) => decodeMessageLine(l.body, l.seq, id));
    const loaded = performance.now();
    // The clock has 1 ms resolution: repeat the pure-compute part and take the mean.
    let built = { sent: 0, bytes: 0, tokens: 0 };
    for (let i = 0; i < SELECT_REPEATS; i++) {
      const view = modelView(history);
      const tokens = estimateContextTokens(view, 100);
      const body = JSON.stringify({ model: "m", messages: toOpenAIMessages(SYSTEM, view.messages), stream: true });
      built = { sent: view.messages.length, bytes: body.length, tokens };
    }
    const selectMs = (performance.now() - loaded) / SELECT_REPEATS;
    const loadMs = loaded - start;
    return { loadMs, selectMs, totalMs: loadMs + selectMs, ...built };
  });
}

it("10,000-message session: next request with vs without compaction", async () => {
  const store = new DurableSessionStore(env);
  const plain = await seed(store, false);
  const compacted = await seed(store, true);
  expect(plain.records).toBe(MESSAGES);
  expect(compacted.records).toBe(MESSAGES + 1);

  const measure = async (id: string, afterSeq = 0) => {
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await buildRequest(store, id, afterSeq));
    return {
      load: median(runs.map((r) => r.loadMs)),
      select: median(runs.map((r) => r.selectMs)),
      total: median(runs.map((r) => r.totalMs)),
      sent: runs[0]!.sent,
      bytes: runs[0]!.bytes,
      tokens: runs[0]!.tokens,
    };
  };
  const without = await measure(plain.id);
  const withC = await measure(compacted.id);
  const fromBoundary = await measure(compacted.id, compacted.boundarySeq);
  expect(fromBoundary.sent).toBe(withC.sent);

  const row = (name: string, r: typeof without) =>
    `${name} | ${r.load.toFixed(1)} ms | ${r.select.toFixed(2)} ms | ${r.total.toFixed(1)} ms | ${r.sent} | ${(r.bytes / 1e6).toFixed(2)} MB | ${r.tokens}`;
  console.log(
    `\nnext model request, ${MESSAGES}-message session, median of ${RUNS}\n` +
      "session | history load | selection + build | total | messages sent | body | est. tokens\n" +
      `${row("without compaction", without)}\n${row("with compaction", withC)}\n${row("with compaction, load from the boundary", fromBoundary)}\n` +
      `ratio total (with / without): ${(withC.total / without.total).toFixed(3)}; selection + build: ${(withC.select / without.select).toFixed(3)}; ` +
      `load from boundary / without: ${(fromBoundary.total / without.total).toFixed(3)}`,
  );
});
