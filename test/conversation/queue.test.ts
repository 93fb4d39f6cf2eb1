import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { counterIds } from "../../src/domain";
import { NO_REPLY_TEXT } from "../../src/model";
import { readSse, type SseFrame } from "../helpers/sse-client";
import { useSessionDeps } from "../helpers/test-worker";
import { jsonResponse } from "../model/helpers";
import { tarOf } from "../workspace/archives";
import {
  api,
  echoAnswer,
  gate,
  lastUser,
  postJson,
  prompt,
  sessionWithHeldRun,
  sessionWithModel,
  store,
  textAnswer,
  toolCallAnswer,
  until,
} from "./helpers";

const types = (frames: SseFrame[]) => frames.map((f) => f.data.type);
const info = async (id: string) => (await (await api(`/api/sessions/${id}`)).json()) as Record<string, unknown>;
const userTexts = async (id: string) => (await store.loadMessages(id)).flatMap((m) => (m.kind === "user" ? [m.text] : []));

describe("whenBusy: a prompt while a run is active", () => {
  it("reject (the default) answers 409 session_busy, as before", async () => {
    const { sessionId, first, running } = await sessionWithHeldRun("one");
    const busy = await prompt(sessionId, { text: "two" });
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { error: { code: string } }).error.code).toBe("session_busy");
    first.open();
    await readSse(await running);
  });

  it("20 concurrent follow-ups on one session run as 20 runs in arrival order, with a gap-free log", async () => {
    const first = gate();
    const { sessionId, requests } = await sessionWithModel(async (body, n) => {
      if (n === 1) await first.wait();
      return echoAnswer(body);
    });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => prompt(sessionId, { text: `prompt ${i}`, whenBusy: "followUp" })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const queued = (await info(sessionId)).queue as { steering: string[]; followUp: string[] };
    expect(queued.steering).toEqual([]);
    expect(queued.followUp).toHaveLength(19);
    first.open();
    const streams = await Promise.all(responses.map((r) => readSse(r)));

    // Arrival order: the run that started at once, then the follow-ups in the order they were queued.
    const events = await store.loadEventsAfter(sessionId, 0);
    const queuedIds = events.flatMap(({ event: e }) => (e.type === "message_queued" ? [e.messageId] : []));
    const messages = await store.loadMessages(sessionId);
    const users = messages.filter((m) => m.kind === "user");
    expect(users).toHaveLength(20);
    expect(users.slice(1).map((m) => m.id)).toEqual(queuedIds);
    // Each answer answers its own prompt, one run per prompt.
    expect(requests.map(lastUser)).toEqual(users.map((m) => m.kind === "user" && m.text));
    const runIds = events.flatMap(({ event: e }) => (e.type === "agent_started" ? [e.runId] : []));
    expect(new Set(runIds).size).toBe(20);
    expect(events.filter(({ event: e }) => e.type === "agent_completed")).toHaveLength(20);

    // Every response streamed exactly its own run, to its end.
    for (const [i, { frames, ended }] of streams.entries()) {
      expect(ended).toBe(true);
      const runId = responses[i]!.headers.get("x-run-id");
      const started = frames.filter((f) => f.data.type === "agent_started");
      expect(started.map((f) => f.data.runId)).toEqual([runId]);
      // The run that started at once begins with its start, before any other client's queue events
      // (hunt 69: its agent_started came after the runtime's setup, so queued prompts came first); a
      // follow-up's stream begins with its own message_queued and queue_updated.
      const beforeStart = frames.slice(0, frames.indexOf(started[0]!)).map((f) => f.data.type);
      expect(beforeStart).toEqual(runId === runIds[0] ? [] : ["message_queued", "queue_updated"]);
      expect(frames.at(-1)!.data).toMatchObject({ type: "agent_completed", runId });
      const ids = frames.map((f) => f.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    }
    // Gap-free: the seqs of all three streams are exactly 1..N.
    const counts = (await store.info(sessionId))!.counts as Record<string, number>;
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const seqs = events.map((e) => e.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(Math.max(...seqs)).toBeLessThanOrEqual(total);
    expect(((await info(sessionId)).queue as { followUp: string[] }).followUp).toEqual([]);
  });

  it("a steer message reaches the model between two tool turns", async () => {
    const firstTurn = gate();
    const { sessionId, requests } = await sessionWithModel(async (body, n) => {
      if (n === 1) {
        await firstTurn.wait();
        return toolCallAnswer("tc_1", "read", { path: "a.txt" })(body);
      }
      return textAnswer("done")(body);
    });
    const running = prompt(sessionId, { text: "look around" });
    await until(() => requests.length === 1, "the first model request");
    const steer = await prompt(sessionId, { text: "also check b.txt", whenBusy: "steer" });
    expect(steer.status).toBe(200);
    expect(steer.headers.get("x-run-id")).toBe("r_1");
    firstTurn.open();
    const [main, steered] = await Promise.all([readSse(await running), readSse(steer)]);

    expect(requests).toHaveLength(2);
    expect(requests[0]!.messages.map((m) => m.role)).toEqual(["system", "user"]);
    // After the tool result, before the next model call.
    expect(requests[1]!.messages.map((m) => [m.role, m.role === "user" ? m.content : ""])).toEqual([
      ["system", ""],
      ["user", "look around"],
      ["assistant", ""],
      ["tool", ""],
      // Strict providers refuse a user message right after tool results (hunt 62).
      ["assistant", ""],
      ["user", "also check b.txt"],
    ]);
    expect(requests[1]!.messages[4]).toEqual({ role: "assistant", content: NO_REPLY_TEXT });
    expect(types(steered.frames)[0]).toBe("message_queued");
    expect(steered.frames[0]!.data).toMatchObject({ mode: "steer", runId: "r_1" });
    expect(steered.frames.at(-1)!.data).toMatchObject({ type: "agent_completed", runId: "r_1" });
    expect(types(main.frames)).toContain("message_queued");
    const queueStates = main.frames.filter((f) => f.data.type === "queue_updated").map((f) => f.data.steering);
    expect(queueStates).toEqual([[expect.any(String)], []]);
  });

  it("a steer the run had no turn left for becomes a follow-up", async () => {
    const first = gate();
    const { sessionId } = await sessionWithModel(async (body, n) => {
      if (n === 1) await first.wait();
      return echoAnswer(body);
    });
    const running = prompt(sessionId, { text: "one", maxTurns: 1 });
    await until(async () => (await store.info(sessionId))!.status === "running", "the run");
    const steer = await prompt(sessionId, { text: "two", whenBusy: "steer" });
    first.open();
    await readSse(await running);
    await readSse(steer);
    await until(async () => (await userTexts(sessionId)).length === 2 && (await store.info(sessionId))!.status === "idle", "the follow-up");
    const events = (await store.loadEvents(sessionId)).filter((e) => e.type === "message_queued");
    expect(events.map((e) => e.type === "message_queued" && e.mode)).toEqual(["steer", "followUp"]);
    expect(await userTexts(sessionId)).toEqual(["one", "two"]);
  });

  it("a steer's stream follows its message when the run ends without taking it: through the follow-up's run to its end", async () => {
    const { sessionId, running } = await sessionWithHeldRun("long task");
    const oldRun = (await running).headers.get("x-run-id")!;
    const steer = await prompt(sessionId, { text: "two", whenBusy: "steer" });
    await api(`/api/sessions/${sessionId}/abort`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    await readSse(await running);
    const { frames, ended } = await readSse(steer);
    expect(ended).toBe(true);
    const queued = frames.filter((f) => f.data.type === "message_queued").map((f) => [f.data.mode, f.data.runId]);
    const newRun = queued[1]![1] as string;
    expect(queued).toEqual([
      ["steer", oldRun],
      ["followUp", newRun],
    ]);
    expect(newRun).not.toBe(oldRun);
    const terminals = frames.filter((f) => f.data.type === "agent_completed").map((f) => [f.data.runId, f.data.stopReason]);
    expect(terminals).toEqual([
      [oldRun, "ABORTED"],
      [newRun, "STOP"],
    ]);
    expect(frames.filter((f) => f.data.type === "agent_started").map((f) => f.data.runId)).toEqual([newRun]);
    const answered = frames
      .filter((f) => f.data.type === "assistant_delta")
      .map((f) => f.data.text)
      .join("");
    expect(answered).toContain("two");
    expect(await userTexts(sessionId)).toEqual(["long task", "two"]);
  });

  it("a steer's stream resumed with runId and messageId from any of its events goes on as the uncut one did", async () => {
    const { sessionId, running } = await sessionWithHeldRun("long task");
    const oldRun = (await running).headers.get("x-run-id")!;
    const steer = await prompt(sessionId, { text: "two", whenBusy: "steer" });
    await api(`/api/sessions/${sessionId}/abort`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    await readSse(await running);
    const uncut = (await readSse(steer)).frames;
    const messageId = uncut[0]!.data.messageId as string;
    expect([uncut[0]!.data.type, uncut[0]!.data.mode]).toEqual(["message_queued", "steer"]);
    await expectResumesLikeUncut(sessionId, oldRun, uncut);
    const resume = (after: number, query: string) =>
      api(`/api/sessions/${sessionId}/events/stream?${query}`, { headers: { "last-event-id": String(after) } });
    // Without the message it is the old run's stream, which ends with that run.
    const oldEnd = uncut.find((f) => f.data.type === "agent_completed" && f.data.runId === oldRun)!;
    const plain = await readSse(await resume(uncut[0]!.id, `runId=${oldRun}`));
    expect(plain.frames.at(-1)!.id).toBe(oldEnd.id);
    const other = await resume(uncut[0]!.id, `runId=${oldRun}&messageId=m_unknown`);
    expect([other.status, ((await other.json()) as { error: { code: string } }).error.code]).toEqual([404, "message_not_found"]);
    const alone = await resume(uncut[0]!.id, `messageId=${messageId}`);
    expect([alone.status, ((await alone.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_query"]);
  });

  it("a steer the run takes ends its stream with that run", async () => {
    const first = gate();
    const { sessionId } = await sessionWithModel(async (body, n) => {
      if (n === 1) {
        await first.wait();
        return toolCallAnswer("tc_1", "ls", { path: "." })(body);
      }
      return echoAnswer(body);
    });
    const running = prompt(sessionId, { text: "one" });
    await until(async () => (await store.info(sessionId))!.status === "running", "the run");
    const runId = (await running).headers.get("x-run-id")!;
    const steer = await prompt(sessionId, { text: "also this", whenBusy: "steer" });
    first.open();
    await readSse(await running);
    const { frames, ended } = await readSse(steer);
    expect([ended, frames.at(-1)!.data.type, frames.at(-1)!.data.runId]).toEqual([true, "agent_completed", runId]);
    expect(frames.filter((f) => f.data.type === "message_queued").map((f) => f.data.mode)).toEqual(["steer"]);
    await expectResumesLikeUncut(sessionId, runId, frames);
    expect(await userTexts(sessionId)).toEqual(["one", "also this"]);
  });

  it("a follow-up survives an abort of the current run", async () => {
    const { sessionId, running } = await sessionWithHeldRun("long task");
    const follow = await prompt(sessionId, { text: "after it", whenBusy: "followUp" });
    await api(`/api/sessions/${sessionId}/abort`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    const aborted = await readSse(await running);
    expect(aborted.frames.at(-1)!.data).toMatchObject({ type: "agent_completed", stopReason: "ABORTED" });
    const { frames } = await readSse(follow);
    expect(types(frames).slice(0, 2)).toEqual(["message_queued", "queue_updated"]);
    expect(frames.at(-1)!.data).toMatchObject({ type: "agent_completed", stopReason: "STOP" });
    expect(await userTexts(sessionId)).toEqual(["long task", "after it"]);
  });

  it("a follow-up survives a restart of the object and runs after the interrupted run is closed", async () => {
    const { sessionId } = await sessionWithModel(async (body, n) => {
      if (n === 1) await new Promise(() => {}); // the object dies while this request is open
      return echoAnswer(body);
    });
    void prompt(sessionId, { text: "doomed" }).then((r) => r.body?.cancel());
    await until(async () => (await store.info(sessionId))!.status === "running", "the run");
    const follow = await prompt(sessionId, { text: "queued before the crash", whenBusy: "followUp" });
    await follow.body?.cancel();
    await abortAllDurableObjects();

    // Any request wakes the object (in production the alarm does): recovery closes r_1, then the follow-up runs.
    await until(async () => {
      const events = await store.loadEvents(sessionId);
      return events.filter((e) => e.type === "agent_completed").length === 1;
    }, "the follow-up run");
    const events = await store.loadEvents(sessionId);
    const ends = events.flatMap((e) =>
      e.type === "agent_error" ? [[e.type, e.code as string]] : e.type === "agent_completed" ? [[e.type, e.stopReason as string]] : [],
    );
    expect(ends).toEqual([
      ["agent_error", "run_interrupted"],
      ["agent_completed", "STOP"],
    ]);
    expect(await userTexts(sessionId)).toEqual(["doomed", "queued before the crash"]);
    const last = (await store.loadMessages(sessionId)).at(-1)!;
    // The interrupted run said nothing: its prompt and the follow-up reach the model as one user
    // message (two in a row are refused by strict providers, hunt 62).
    expect(last.kind === "assistant" && last.text).toBe("answer to doomed\n\nqueued before the crash");
  });

  it("afterFailedRun: withdraw drops a follow-up when the run before it fails; keep runs it", async () => {
    const { sessionId, first } = await sessionWhoseFirstRunFails();
    const running = prompt(sessionId, { text: "fails" });
    await until(async () => (await store.info(sessionId))!.status === "running", "the run");
    const dropped = await prompt(sessionId, { text: "drop me", whenBusy: "followUp", afterFailedRun: "withdraw" });
    const kept = await prompt(sessionId, { text: "keep me", whenBusy: "followUp" });
    first.open();
    expect((await readSse(await running)).frames.at(-1)!.data).toMatchObject({ type: "agent_error" });
    const droppedFrames = (await readSse(dropped)).frames;
    expect(droppedFrames[0]!.data).toMatchObject({ type: "message_queued", afterFailedRun: "withdraw" });
    expect(droppedFrames.map((f) => [f.data.type, f.data.reason ?? null]).at(-1)).toEqual([
      "queued_message_withdrawn",
      "previous_run_failed",
    ]);
    expect((await readSse(kept)).frames.at(-1)!.data).toMatchObject({ type: "agent_completed" });
    const withdrawn = (await store.loadEvents(sessionId)).filter((e) => e.type === "queued_message_withdrawn");
    expect(withdrawn).toMatchObject([{ reason: "previous_run_failed", messageId: droppedFrames[0]!.data.messageId }]);
    expect(await userTexts(sessionId)).toEqual(["fails", "keep me"]);
  });

  it("DELETE /queue/:messageId withdraws an undelivered follow-up; its stream ends; a second DELETE is 404", async () => {
    const { sessionId, first, running } = await sessionWithHeldRun("one");
    const follow = await prompt(sessionId, { text: "never mind", whenBusy: "followUp" });
    const messageId = ((await info(sessionId)).queue as { followUp: string[] }).followUp[0]!;
    const del = await api(`/api/sessions/${sessionId}/queue/${messageId}`, { method: "DELETE" });
    expect(del.status).toBe(200);
    const { frames, ended } = await readSse(follow);
    expect(ended).toBe(true);
    // It ends saying why: a client can tell a withdrawal from a dropped connection.
    expect(types(frames)).toEqual(["message_queued", "queue_updated", "queued_message_withdrawn"]);
    expect(frames[2]!.data).toMatchObject({ messageId, reason: "withdrawn_by_client" });
    expect(((await info(sessionId)).queue as { followUp: string[] }).followUp).toEqual([]);
    const again = await api(`/api/sessions/${sessionId}/queue/${messageId}`, { method: "DELETE" });
    expect(again.status).toBe(404);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("queued_message_not_found");
    first.open();
    await readSse(await running);
    expect(await userTexts(sessionId)).toEqual(["one"]);
  });

  it("a follow-up's stream resumes by Last-Event-ID and runId: the runs before it are skipped, it ends with its own run", async () => {
    const { sessionId, first, running } = await sessionWithHeldRun("one");
    const follow = await prompt(sessionId, { text: "two", whenBusy: "followUp" });
    const runId = follow.headers.get("x-run-id")!;
    const head = await readSse(follow, 1); // the client drops after message_queued
    expect(head.frames[0]!.data.type).toBe("message_queued");
    first.open();
    const resumed = await api(`/api/sessions/${sessionId}/events/stream?runId=${runId}`, {
      headers: { "last-event-id": String(head.frames[0]!.id) },
    });
    expect(resumed.headers.get("x-run-id")).toBe(runId);
    const { frames } = await readSse(resumed);
    // Resumed, it starts at its run's start: the queue events before it are not sent again.
    expect(frames[0]!.data).toMatchObject({ type: "agent_started", runId });
    expect(frames.filter((f) => f.data.type === "agent_started").map((f) => f.data.runId)).toEqual([runId]);
    expect(frames.at(-1)!.data).toMatchObject({ type: "agent_completed", runId });
    await readSse(await running);
  });

  it("a follow-up's stream resumed from any of its seqs is the uncut stream's tail from its run's start (hunt 69)", async () => {
    const { sessionId, first, running } = await sessionWithHeldRun("one");
    const follow = await prompt(sessionId, { text: "two", whenBusy: "followUp" });
    const runId = follow.headers.get("x-run-id")!;
    // Another client's follow-up, queued while this one waits: its events are in the log between them.
    const other = await prompt(sessionId, { text: "three", whenBusy: "followUp" });
    first.open();
    const uncut = (await readSse(follow)).frames;
    await readSse(other);
    await readSse(await running);
    const startedAt = uncut.findIndex((f) => f.data.type === "agent_started");
    expect(uncut.slice(0, startedAt + 1).map((f) => f.data.type)).toEqual(["message_queued", "queue_updated", "agent_started"]);
    expect(uncut[startedAt]!.data.runId).toBe(runId);
    for (const [i, frame] of uncut.entries()) {
      const resumed = await api(`/api/sessions/${sessionId}/events/stream?runId=${runId}`, {
        headers: { "last-event-id": String(frame.id) },
      });
      const expected = uncut.slice(Math.max(i + 1, startedAt)).map((f) => f.id);
      if (expected.length === 0) {
        expect(resumed.status).toBe(204);
        continue;
      }
      expect((await readSse(resumed)).frames.map((f) => f.id)).toEqual(expected);
    }
  });

  it("a withdrawn follow-up's stream resumes by Last-Event-ID and runId to its queued_message_withdrawn; after it, 204", async () => {
    const { sessionId, first, running } = await sessionWithHeldRun("one");
    const follow = await prompt(sessionId, { text: "never mind", whenBusy: "followUp" });
    const runId = follow.headers.get("x-run-id")!;
    const head = await readSse(follow, 2); // the client drops after message_queued and queue_updated
    expect(types(head.frames)).toEqual(["message_queued", "queue_updated"]);
    const messageId = head.frames[0]!.data.messageId as string;
    expect((await api(`/api/sessions/${sessionId}/queue/${messageId}`, { method: "DELETE" })).status).toBe(200);
    const withdrawnSeq = (await store.loadEventsAfter(sessionId, 0)).find(({ event }) => event.type === "queued_message_withdrawn")!.seq;
    const resume = (lastEventId: number, id = runId) =>
      api(`/api/sessions/${sessionId}/events/stream?runId=${id}`, { headers: { "last-event-id": String(lastEventId) } });

    const resumed = await resume(head.frames[1]!.id);
    expect([resumed.status, resumed.headers.get("x-run-id")]).toEqual([200, runId]);
    const { frames, ended } = await readSse(resumed);
    expect(ended).toBe(true);
    expect(frames.map((f) => [f.id, f.data.type, f.data.runId, f.data.messageId, f.data.reason])).toEqual([
      [withdrawnSeq, "queued_message_withdrawn", runId, messageId, "withdrawn_by_client"],
    ]);
    // Resumed after the event that ended it (an EventSource reconnecting): nothing is left.
    expect((await resume(withdrawnSeq)).status).toBe(204);
    // A run id the session never had is still unknown.
    const unknown = await resume(head.frames[1]!.id, "r_01jd8x9a1b2c3d4e5f6g7h8j9k");
    expect([unknown.status, ((await unknown.json()) as { error: { code: string } }).error.code]).toEqual([404, "run_not_found"]);
    first.open();
    await readSse(await running);
  });

  it("a follow-up withdrawn at recovery (the run before it was interrupted) resumes to its queued_message_withdrawn", async () => {
    const { sessionId } = await sessionWithModel(async (body, n) => {
      if (n === 1) await new Promise(() => {}); // the object dies while this request is open
      return echoAnswer(body);
    });
    void prompt(sessionId, { text: "doomed" }).then((r) => r.body?.cancel());
    await until(async () => (await store.info(sessionId))!.status === "running", "the run");
    const follow = await prompt(sessionId, { text: "only after a success", whenBusy: "followUp", afterFailedRun: "withdraw" });
    const runId = follow.headers.get("x-run-id")!;
    const head = await readSse(follow, 1); // the client drops after message_queued
    await abortAllDurableObjects();
    await until(
      async () => (await store.loadEvents(sessionId)).some((e) => e.type === "queued_message_withdrawn"),
      "the recovery's withdrawal",
    );
    const events = await store.loadEventsAfter(sessionId, 0);
    const withdrawnSeq = events.find(({ event }) => event.type === "queued_message_withdrawn")!.seq;
    const resumed = await api(`/api/sessions/${sessionId}/events/stream?runId=${runId}`, {
      headers: { "last-event-id": String(head.frames[0]!.id) },
    });
    expect(resumed.status).toBe(200);
    const { frames, ended } = await readSse(resumed);
    expect(ended).toBe(true);
    // The interrupted run's closing records lie between; they belong to the run before it and are skipped.
    expect(frames.map((f) => [f.id, f.data.type, f.data.runId, f.data.reason])).toEqual([
      [withdrawnSeq, "queued_message_withdrawn", runId, "previous_run_failed"],
    ]);
  });

  it("a verdict on a run still going is 409 run_in_progress and stores nothing; once the run has ended it is recorded", async () => {
    const { sessionId, first, running } = await sessionWithHeldRun("one");
    const runId = (await running).headers.get("x-run-id")!;
    const verdict = { runId, judgeName: "ci", result: "fail", artifactRefs: ["a.txt"] };
    const early = await postJson(`/api/sessions/${sessionId}/judgements`, verdict);
    expect([early.status, ((await early.json()) as { error: { code: string; message: string } }).error]).toEqual([
      409,
      {
        code: "run_in_progress",
        message: `run '${runId}' is still going; post the verdict once it has ended`,
        requestId: expect.any(String),
      },
    ]);
    // A follow-up queued behind it has its run id already, and no run yet (hunt 95: 404 run_not_found).
    const follow = await prompt(sessionId, { text: "two", whenBusy: "followUp" });
    const queuedId = follow.headers.get("x-run-id")!;
    const queued = await postJson(`/api/sessions/${sessionId}/judgements`, { ...verdict, runId: queuedId });
    expect([queued.status, ((await queued.json()) as { error: { code: string; message: string } }).error]).toEqual([
      409,
      {
        code: "run_in_progress",
        message: `run '${queuedId}' is queued and has not started; post the verdict once it has ended`,
        requestId: expect.any(String),
      },
    ]);
    first.open();
    await readSse(await running);
    await readSse(follow);
    expect(await (await api(`/api/sessions/${sessionId}/attributions`)).json()).toEqual({ attributions: [], nextCursor: null });
    const late = await postJson(`/api/sessions/${sessionId}/judgements`, verdict);
    expect(late.status).toBe(201);
    expect(
      ((await (await api(`/api/sessions/${sessionId}/attributions`)).json()) as { attributions: unknown[] }).attributions,
    ).toHaveLength(1);
  });

  it("a stream asked for a run the session does not have is 404 run_not_found, while a run is active and after", async () => {
    const { sessionId, first, running } = await sessionWithHeldRun("one");
    const runId = (await running).headers.get("x-run-id")!;
    const unknown = "r_01jd8x9a1b2c3d4e5f6g7h8j9k";
    const refusal = async () => {
      const res = await api(`/api/sessions/${sessionId}/events/stream?runId=${unknown}`);
      return [res.status, ((await res.json()) as { error: { code: string; message: string } }).error];
    };
    const expected = [
      404,
      { code: "run_not_found", message: `session '${sessionId}' has no run '${unknown}'`, requestId: expect.any(String) },
    ];
    expect(await refusal()).toEqual(expected);
    first.open();
    await readSse(await running);
    expect(await refusal()).toEqual(expected);
    // A finished run's id replays that run (and no run before it), from its start to its terminal event.
    const second = await prompt(sessionId, { text: "two" });
    const secondRun = second.headers.get("x-run-id")!;
    const live = await readSse(second);
    for (const id of [runId, secondRun]) {
      const { frames, ended } = await readSse(await api(`/api/sessions/${sessionId}/events/stream?runId=${id}`));
      const runsSeen = [...new Set(frames.flatMap((f) => (typeof f.data.runId === "string" ? [f.data.runId] : [])))];
      expect([ended, frames[0]!.data.type, frames.at(-1)!.data.type, runsSeen]).toEqual([true, "agent_started", "agent_completed", [id]]);
      if (id === secondRun) expect(frames.map((f) => f.id)).toEqual(live.frames.map((f) => f.id));
    }
    // Resumed after its terminal event (an EventSource reconnecting just after the last frame): 204,
    // never the run after it. One event before it still gets that event, and only it.
    const firstEnd = (await readSse(await api(`/api/sessions/${sessionId}/events/stream?runId=${runId}`))).frames.at(-1)!.id;
    const asks: [string, Record<string, string>][] = [
      ["", { "last-event-id": String(firstEnd) }],
      [`&after=${firstEnd}`, {}],
    ];
    for (const [query, headers] of asks) {
      expect((await api(`/api/sessions/${sessionId}/events/stream?runId=${runId}${query}`, { headers })).status).toBe(204);
    }
    const tail = await readSse(await api(`/api/sessions/${sessionId}/events/stream?runId=${runId}&after=${Number(firstEnd) - 1}`));
    expect(tail.frames.map((f) => [f.id, f.data.type])).toEqual([[firstEnd, "agent_completed"]]);
  });

  it("a Retry-After longer than the run has left ends the run at once with agent_error rate_limited", async () => {
    const { sessionId, requests } = await sessionWithModel(() =>
      jsonResponse(429, { error: { message: "slow down" } }, { "retry-after": "600" }),
    );
    const { frames } = await readSse(await prompt(sessionId, { text: "go", timeoutMs: 5_000 }));
    expect(requests).toHaveLength(1);
    const last = frames.at(-1)!.data;
    expect(last).toMatchObject({ type: "agent_error", code: "rate_limited" });
    expect(String(last.message)).toContain("retry after 600 s");
  });
});

/**
 * Resumes a steer's stream (`runId` and its `messageId`) with no Last-Event-ID, before its first
 * frame and after each one: each gives the rest of the uncut stream exactly (never the events before
 * the steer), and after the last it is 204.
 */
async function expectResumesLikeUncut(sessionId: string, runId: string, uncut: SseFrame[]) {
  const messageId = uncut[0]!.data.messageId as string;
  const got: [number, number, number[]][] = [];
  const cuts = [0, uncut[0]!.id - 1, ...uncut.map((f) => f.id)];
  for (const cut of cuts) {
    const res = await api(`/api/sessions/${sessionId}/events/stream?runId=${runId}&messageId=${messageId}`, {
      headers: { "last-event-id": String(cut) },
    });
    got.push([cut, res.status, res.status === 200 ? (await readSse(res)).frames.map((f) => f.id) : []]);
  }
  const want = cuts.map((cut, i): [number, number, number[]] => {
    const rest = uncut.slice(Math.max(0, i - 1));
    return i === cuts.length - 1 ? [cut, 204, []] : [cut, 200, rest.map((f) => f.id)];
  });
  expect(got).toEqual(want);
}

/** A session whose first model call fails (400) once `first` opens; later calls echo. */
async function sessionWhoseFirstRunFails() {
  const first = gate();
  const { sessionId } = await sessionWithModel(async (body, n) => {
    if (n === 1) {
      await first.wait();
      return jsonResponse(400, { error: { message: "bad things" } });
    }
    return echoAnswer(body);
  });
  return { sessionId, first };
}

describe("a run's start and the prompts other clients send meanwhile (hunt 69)", () => {
  it("a run logs agent_started as it takes the slot: a follow-up sent while its setup reads the workspace comes after it", async () => {
    const tar = await tarOf({ "a.txt": "a\n" });
    const upload = await api("/api/workspaces", { method: "POST", body: tar, headers: { "content-type": "application/x-tar" } });
    const { workspaceId } = (await upload.json()) as { workspaceId: string };
    const { sessionId } = (await (await postJson("/api/sessions", { workspaceId })).json()) as { sessionId: string };
    // The run's setup opens the workspace: held there, the run has taken the slot and not begun.
    const held = { open: false, entered: false };
    const bucket = new Proxy(env.STORE, {
      get(target, property) {
        const value = Reflect.get(target, property);
        if (property !== "get") return typeof value === "function" ? value.bind(target) : value;
        return async (key: string, ...rest: unknown[]) => {
          if (key.startsWith(`workspaces/${workspaceId}/`)) {
            held.entered = true;
            await until(() => held.open, "the gate");
          }
          return (value as (key: string, ...rest: unknown[]) => Promise<unknown>).call(target, key, ...rest);
        };
      },
    });
    useSessionDeps(sessionId, {
      ids: counterIds(),
      bucket,
      modelFetch: async (_input, init) => echoAnswer(JSON.parse(String(init?.body))),
    });
    const running = prompt(sessionId, { text: "one" });
    await until(() => held.entered, "the run's setup");
    const follow = await prompt(sessionId, { text: "two", whenBusy: "followUp" });
    held.open = true;
    const first = await readSse(await running);
    const second = await readSse(follow);
    const log = (await store.loadEventsAfter(sessionId, 0)).map(({ event: e }) => ("runId" in e ? `${e.type} ${e.runId}` : e.type));
    const [runA, runB] = [first.frames[0]!.data.runId, follow.headers.get("x-run-id")];
    expect(log.slice(0, 4)).toEqual([`agent_started ${runA}`, `message_queued ${runB}`, "queue_updated", "user_message_appended"]);
    expect(types(first.frames).slice(0, 4)).toEqual(["agent_started", "message_queued", "queue_updated", "user_message_appended"]);
    expect(types(second.frames).slice(0, 3)).toEqual(["message_queued", "queue_updated", "agent_started"]);
    expect(second.frames.at(-1)!.data).toMatchObject({ type: "agent_completed", runId: runB });
  });
});

describe("a steer's stream resumed with its message, when its re-queued follow-up was withdrawn", () => {
  it("after the queued_message_withdrawn that ended it (re-queued, then withdrawn: afterFailedRun withdraw) is 204, as the uncut stream ended", async () => {
    const { sessionId, first } = await sessionWhoseFirstRunFails();
    const running = prompt(sessionId, { text: "fails" });
    await until(async () => (await store.info(sessionId))!.status === "running", "the run");
    const runId = (await running).headers.get("x-run-id")!;
    const steer = await prompt(sessionId, { text: "steer me", whenBusy: "steer", afterFailedRun: "withdraw" });
    first.open();
    await readSse(await running);
    const { frames: uncut, ended } = await readSse(steer);
    expect(ended).toBe(true);
    expect(uncut.at(-1)!.data.type).toBe("queued_message_withdrawn");
    // From the withdrawal that ended it: 204 (an empty 200 made an EventSource reconnect for ever).
    await expectResumesLikeUncut(sessionId, runId, uncut);
  });

  it("after the queued_message_withdrawn of its re-queued message (DELETE /queue/:id while a follow-up runs ahead) is 204", async () => {
    const first = gate();
    const second = gate();
    const { sessionId } = await sessionWithModel(async (body, n, signal) => {
      if (n === 1) await first.wait(signal);
      if (n === 2) await second.wait(signal);
      return echoAnswer(body);
    });
    const running = prompt(sessionId, { text: "long task" });
    await until(async () => (await store.info(sessionId))!.status === "running", "the run");
    const runId = (await running).headers.get("x-run-id")!;
    const ahead = await prompt(sessionId, { text: "ahead", whenBusy: "followUp" });
    const steer = await prompt(sessionId, { text: "steer me", whenBusy: "steer" });
    await api(`/api/sessions/${sessionId}/abort`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    await readSse(await running);
    // The steer is a follow-up now, behind "ahead" (whose run is held by `second`).
    const head = await readSse(steer, 1);
    const messageId = head.frames[0]!.data.messageId as string;
    await until(
      async () =>
        (await store.loadEvents(sessionId)).some((e) => e.type === "message_queued" && e.mode === "followUp" && e.messageId === messageId),
      "re-queued",
    );
    expect((await api(`/api/sessions/${sessionId}/queue/${messageId}`, { method: "DELETE" })).status).toBe(200);
    second.open();
    await readSse(ahead);
    // The uncut stream, as a fresh one from before the steer's message_queued.
    const res = await api(`/api/sessions/${sessionId}/events/stream?runId=${runId}&messageId=${messageId}`, {
      headers: { "last-event-id": String(head.frames[0]!.id - 1) },
    });
    const { frames: uncut } = await readSse(res);
    expect(uncut.at(-1)!.data.type).toBe("queued_message_withdrawn");
    await expectResumesLikeUncut(sessionId, runId, uncut);
  });
});
