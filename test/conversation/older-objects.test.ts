import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/domain";
import { FORKED_TOOL_RESULT_TEXT } from "../../src/session/session-fork";
import { tenantObjectName } from "../../src/tenant/tenant-api";
import { T0 } from "../helpers/records";
import { readSse } from "../helpers/sse-client";
import { useSessionDeps } from "../helpers/test-worker";
import {
  api,
  echoAnswer,
  type ModelBody,
  postJson,
  prompt,
  sessionWithHeldRun,
  sessionWithModel,
  store,
  textAnswer,
  toolCallAnswer,
  until,
} from "./helpers";

/**
 * Objects written by older versions: a table or column added later starts empty (or NULL) for them.
 * Each test writes the older state into a session's object (the `sql` run there), removes the
 * record of backfills (which older objects do not have), and restarts the object.
 */
async function asOlderObject(sessionId: string, ...sql: string[]): Promise<void> {
  await runInDurableObject(store.stub(sessionId), (_instance, state) => {
    for (const statement of sql) state.storage.sql.exec(statement);
    state.storage.sql.exec(`DROP TABLE IF EXISTS backfills`);
  });
  await abortAllDurableObjects();
}

const inObject = <T>(sessionId: string, query: string) =>
  runInDurableObject(store.stub(sessionId), (_instance, state) => state.storage.sql.exec(query).toArray() as T[]);

const listedStatus = async (sessionId: string) => {
  const { items } = (await (await api("/api/sessions")).json()) as { items: { id: string; status: string }[] };
  return items.find((item) => item.id === sessionId)?.status;
};

const event = (sessionId: string, n: number, body: Record<string, unknown>) =>
  ({ eventId: `e_old${n}`, sessionId, createdAt: T0, ...body }) as AgentEvent;

const compactions = async (sessionId: string) =>
  (await store.loadEventsAfter(sessionId, 0))
    .filter(({ event }) => event.type.startsWith("compaction_"))
    .map(({ event }) => [event.type, "code" in event ? event.code : null]);

describe("a run finished before runs.end_seq existed", () => {
  it("resumed after its terminal event is 204, not the later runs; from before it, its own events to that end", async () => {
    const { sessionId } = await sessionWithModel(echoAnswer);
    const first = await prompt(sessionId, { text: "one" });
    const runId = first.headers.get("x-run-id")!;
    await readSse(first);
    await readSse(await prompt(sessionId, { text: "two" }));
    const events = await store.loadEventsAfter(sessionId, 0);
    const end = events.find(({ event }) => event.type === "agent_completed" && event.runId === runId)!.seq;
    await asOlderObject(sessionId, `UPDATE runs SET end_seq = NULL`);
    // The run's events are in R2 only: the lookup reads segments.
    expect(await inObject(sessionId, `SELECT COUNT(*) AS n FROM log WHERE stream = 'events' AND body IS NOT NULL`)).toEqual([{ n: 0 }]);

    const resume = (after: number) =>
      api(`/api/sessions/${sessionId}/events/stream?runId=${runId}`, { headers: { "last-event-id": String(after) } });
    expect((await resume(end)).status).toBe(204);
    // Found once, and kept.
    expect(await inObject(sessionId, `SELECT run_id, end_seq FROM runs ORDER BY start_seq`)).toEqual([
      { run_id: runId, end_seq: end },
      { run_id: expect.any(String), end_seq: null },
    ]);
    const { frames, ended } = await readSse(await resume(end - 1));
    expect([ended, frames.map((f) => [f.id, f.data.type, f.data.runId])]).toEqual([true, [[end, "agent_completed", runId]]]);
  });
});

describe("a follow-up started before its queue_updated was logged ahead of its start (hunt 69)", () => {
  it("resumed with ?runId= alone, its stream begins at its run's agent_started, not at the queue_updated before it (hunt 81)", async () => {
    const { sessionId, first, running } = await sessionWithHeldRun("one");
    const follow = await prompt(sessionId, { text: "two", whenBusy: "followUp" });
    const runId = follow.headers.get("x-run-id")!;
    first.open();
    const uncut = (await readSse(follow)).frames;
    await readSse(await running);
    const startedAt = uncut.findIndex((f) => f.data.type === "agent_started");
    expect(uncut.slice(startedAt - 1, startedAt + 1).map((f) => f.data.type)).toEqual(["queue_updated", "agent_started"]);
    // Older versions recorded the run's start before that queue_updated.
    await asOlderObject(sessionId, `UPDATE runs SET start_seq = start_seq - 1 WHERE run_id = '${runId}'`);
    const { frames } = await readSse(await api(`/api/sessions/${sessionId}/events/stream?runId=${runId}`));
    expect(frames.map((f) => f.id)).toEqual(uncut.slice(startedAt).map((f) => f.id));
    // From inside the run, the tail from there, as before.
    const inside = uncut[startedAt + 1]!.id;
    const tail = await readSse(
      await api(`/api/sessions/${sessionId}/events/stream?runId=${runId}`, { headers: { "last-event-id": String(inside) } }),
    );
    expect(tail.frames.map((f) => f.id)).toEqual(uncut.slice(startedAt + 2).map((f) => f.id));
  });
});

describe("a follow-up withdrawn before withdrawn_runs existed", () => {
  it("resumes to its queued_message_withdrawn (found in the log), then 204; an unknown run id is still 404", async () => {
    const { sessionId, first, running } = await sessionWithHeldRun("one");
    const follow = await prompt(sessionId, { text: "never mind", whenBusy: "followUp" });
    const runId = follow.headers.get("x-run-id")!;
    const head = await readSse(follow, 2); // the client drops after message_queued and queue_updated
    const messageId = head.frames[0]!.data.messageId as string;
    expect((await api(`/api/sessions/${sessionId}/queue/${messageId}`, { method: "DELETE" })).status).toBe(200);
    first.open();
    await readSse(await running);
    const withdrawnSeq = (await store.loadEventsAfter(sessionId, 0)).find(({ event }) => event.type === "queued_message_withdrawn")!.seq;
    await asOlderObject(sessionId, `DROP TABLE withdrawn_runs`);

    const resume = (lastEventId: number, id = runId) =>
      api(`/api/sessions/${sessionId}/events/stream?runId=${id}`, { headers: { "last-event-id": String(lastEventId) } });
    const resumed = await resume(head.frames[1]!.id);
    expect([resumed.status, resumed.headers.get("x-run-id")]).toEqual([200, runId]);
    const { frames, ended } = await readSse(resumed);
    expect(ended).toBe(true);
    expect(frames.map((f) => [f.id, f.data.type, f.data.runId, f.data.messageId, f.data.reason])).toEqual([
      [withdrawnSeq, "queued_message_withdrawn", runId, messageId, "withdrawn_by_client"],
    ]);
    expect((await resume(withdrawnSeq)).status).toBe(204);
    const unknown = await resume(head.frames[1]!.id, "r_01jd8x9a1b2c3d4e5f6g7h8j9k");
    expect([unknown.status, ((await unknown.json()) as { error: { code: string } }).error.code]).toEqual([404, "run_not_found"]);
    // The log was read once: the table holds the withdrawal and the backfill is done.
    expect(await inObject(sessionId, `SELECT run_id, seq FROM withdrawn_runs`)).toEqual([{ run_id: runId, seq: withdrawnSeq }]);
    expect(await inObject(sessionId, `SELECT until_seq FROM backfills WHERE name = 'withdrawn_runs'`)).toEqual([{ until_seq: 0 }]);
  });
});

describe("a manual compaction cut off under a version without the open_compaction mark", () => {
  it("is closed with compaction_failed run_interrupted at the first start, once", async () => {
    const { sessionId } = await sessionWithModel(echoAnswer);
    await readSse(await prompt(sessionId, { text: "one" }));
    await store.appendEvent(sessionId, event(sessionId, 1, { type: "compaction_started", reason: "manual" }));
    await asOlderObject(sessionId, `DROP TABLE open_compaction`);

    expect(await compactions(sessionId)).toEqual([
      ["compaction_started", null],
      ["compaction_failed", "run_interrupted"],
    ]);
    const closing = (await store.loadEvents(sessionId)).at(-1)!;
    expect(closing).toMatchObject({
      type: "compaction_failed",
      message: "the server restarted during the compaction; nothing was compacted",
    });
    await abortAllDurableObjects();
    expect(await compactions(sessionId)).toHaveLength(2);
  });

  it("an object that kept the mark is not searched: its compaction_started without a mark was never cut off by a restart", async () => {
    const { sessionId } = await sessionWithModel(echoAnswer);
    await readSse(await prompt(sessionId, { text: "one" }));
    await store.appendEvent(sessionId, event(sessionId, 1, { type: "compaction_started", reason: "manual" }));
    await asOlderObject(sessionId);
    expect(await compactions(sessionId)).toEqual([["compaction_started", null]]);
  });

  it("one that ended is left alone", async () => {
    const { sessionId } = await sessionWithModel(echoAnswer);
    await readSse(await prompt(sessionId, { text: "one" }));
    await store.appendEvent(sessionId, event(sessionId, 1, { type: "compaction_started", reason: "manual" }));
    await store.appendEvent(sessionId, event(sessionId, 2, { type: "compaction_failed", code: "provider_error", message: "refused" }));
    await asOlderObject(sessionId, `DROP TABLE open_compaction`);
    expect(await compactions(sessionId)).toEqual([
      ["compaction_started", null],
      ["compaction_failed", "provider_error"],
    ]);
  });

  it("a run's own compaction cut off with the run is closed once, by the run's closing", async () => {
    const { id } = await store.create({});
    await runInDurableObject(store.stub(id), (_instance, state) => {
      state.storage.sql.exec(`INSERT INTO runs (run_id, status, started_at, start_seq) VALUES ('r_dead', 'running', ?, 0)`, T0);
    });
    await store.appendEvent(id, event(id, 1, { type: "agent_started", runId: "r_dead" }));
    await store.appendEvent(id, event(id, 2, { type: "compaction_started", reason: "threshold" }));
    await asOlderObject(id, `DROP TABLE open_compaction`);
    expect((await store.loadEvents(id)).map((e) => [e.type, "code" in e ? e.code : null])).toEqual([
      ["agent_started", null],
      ["compaction_started", null],
      ["compaction_failed", "run_interrupted"],
      ["assistant_completed", null],
      ["agent_error", "run_interrupted"],
    ]);
  });
});

describe("the tenant's session list after a restart", () => {
  it("a run closed by recovery is listed idle, not running", async () => {
    const { sessionId } = await sessionWithModel(async (body, n) => {
      if (n === 1) await new Promise(() => {}); // the object dies while this request is open
      return echoAnswer(body);
    });
    void prompt(sessionId, { text: "doomed" }).then((r) => r.body?.cancel());
    await until(async () => (await listedStatus(sessionId)) === "running", "the listed run");
    await abortAllDurableObjects();
    expect((await store.info(sessionId))!.status).toBe("idle");
    await until(async () => (await listedStatus(sessionId)) === "idle", "the list to say idle");
  });

  it("an older object whose list row says running (recovered by an older version) is reported once", async () => {
    const { sessionId } = await sessionWithModel(echoAnswer);
    await readSse(await prompt(sessionId, { text: "one" }));
    const tenant = env.TENANTS.getByName(tenantObjectName(null));
    const [{ seq }] = (await inObject<{ seq: number }>(sessionId, `SELECT MAX(seq) AS seq FROM log`)) as [{ seq: number }];
    // What the list kept from the run's start when the older version's recovery never reported.
    await tenant.reportSession(sessionId, {
      version: seq!,
      title: null,
      updatedAt: T0,
      status: "running",
      counts: { messages: 0, events: 0 },
    });
    expect(await listedStatus(sessionId)).toBe("running");
    await asOlderObject(sessionId);
    expect((await store.info(sessionId))!.status).toBe("idle");
    await until(async () => (await listedStatus(sessionId)) === "idle", "the list to say idle");
  });
});

describe("a fork made before forks closed the tool calls they leave open (hunt 56)", () => {
  /** A fork at the assistant message of `source` that called `ls`, as an older version left it: without closing results. */
  async function olderFork(source: string, callingId: string): Promise<string> {
    const res = await postJson(`/api/sessions/${source}/fork`, { atMessageId: callingId });
    const { sessionId } = (await res.json()) as { sessionId: string };
    const closing = `SELECT COUNT(*) AS n FROM log WHERE stream = 'messages' AND body LIKE '%forked before this tool call%'`;
    // Still in the object's SQLite (not yet in an R2 segment): removing the rows removes them.
    expect(await inObject(sessionId, closing)).toEqual([{ n: 1 }]);
    await runInDurableObject(store.stub(sessionId), (_instance, state) => {
      state.storage.sql.exec(`DELETE FROM log WHERE stream = 'messages' AND body LIKE '%forked before this tool call%'`);
    });
    return sessionId;
  }

  it("has them closed with error results at its first start, once, and its next request answers them so", async () => {
    const { sessionId: source } = await sessionWithModel((body, n) =>
      (n === 1 ? toolCallAnswer("tc_1", "ls", {}) : textAnswer("done"))(body),
    );
    await readSse(await prompt(source, { text: "list" }));
    const calling = (await store.loadMessages(source))[1]!;
    expect(calling.kind).toBe("assistant");

    const forkId = await olderFork(source, calling.id);
    await asOlderObject(forkId);
    const messages = await store.loadMessages(forkId);
    expect(messages.map((m) => [m.kind, m.parentId === (messages[messages.indexOf(m) - 1]?.id ?? null)])).toEqual([
      ["user", true],
      ["assistant", true],
      ["tool_result", true],
    ]);
    expect(messages[2]).toMatchObject({ toolCallId: "tc_1", toolName: "ls", resultText: FORKED_TOOL_RESULT_TEXT, error: true });
    expect(await inObject(forkId, `SELECT until_seq FROM backfills WHERE name = 'fork_open_calls'`)).toEqual([{ until_seq: 0 }]);
    // Once: a second start adds nothing.
    await abortAllDurableObjects();
    expect((await store.loadMessages(forkId)).length).toBe(3);

    const requests: ModelBody[] = [];
    useSessionDeps(forkId, {
      modelFetch: async (_i, init) => {
        const body = JSON.parse(String(init?.body)) as ModelBody;
        requests.push(body);
        return echoAnswer(body);
      },
    });
    await readSse(await prompt(forkId, { text: "go on" }));
    expect(requests[0]!.messages.filter((m) => m.role === "tool")).toEqual([
      { role: "tool", tool_call_id: "tc_1", content: FORKED_TOOL_RESULT_TEXT },
    ]);
  });

  it("one with a run since is left as it is (the calls lie inside its history), and so is a session that is no fork", async () => {
    const { sessionId: source } = await sessionWithModel((body, n) =>
      (n === 1 ? toolCallAnswer("tc_1", "ls", {}) : textAnswer("done"))(body),
    );
    await readSse(await prompt(source, { text: "list" }));
    const calling = (await store.loadMessages(source))[1]!;
    const forkId = await olderFork(source, calling.id);
    useSessionDeps(forkId, { modelFetch: async (_i, init) => echoAnswer(JSON.parse(String(init?.body))) });
    await readSse(await prompt(forkId, { text: "go on" }));
    const before = await store.loadMessages(forkId);
    expect(before.map((m) => m.kind)).toEqual(["user", "assistant", "user", "assistant"]);
    await asOlderObject(forkId);
    expect(await store.loadMessages(forkId)).toEqual(before);
    expect(await inObject(forkId, `SELECT until_seq FROM backfills WHERE name = 'fork_open_calls'`)).toEqual([{ until_seq: 0 }]);

    // The source itself ends with its answered calls: nothing to close, and it is no fork.
    const sourceBefore = await store.loadMessages(source);
    await asOlderObject(source);
    expect(await store.loadMessages(source)).toEqual(sourceBefore);
  });
});
