import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { readSse } from "../helpers/sse-client";
import { api, prompt, sessionWithHeldRun, store } from "./helpers";

/** The newest seq the session's log holds (messages, events and trace share it). */
const newestSeq = (sessionId: string) =>
  runInDurableObject(
    store.stub(sessionId),
    (_instance, state) => state.storage.sql.exec<{ seq: number }>(`SELECT IFNULL(MAX(seq), 0) AS seq FROM log`).one().seq,
  );

describe("GET .../events/stream with a Last-Event-ID the session never sent", () => {
  it("an id past the session's newest seq is 400 invalid_last_event_id naming the newest, during a run and after it", async () => {
    const { sessionId, first, running } = await sessionWithHeldRun("one");
    const newest = await newestSeq(sessionId);
    const future = newest + 10_000;
    const refusal = async (init: { query?: string; lastEventId?: string }) => {
      const res = await api(`/api/sessions/${sessionId}/events/stream${init.query ?? ""}`, {
        headers: init.lastEventId === undefined ? {} : { "last-event-id": init.lastEventId },
      });
      if (res.status !== 400) return [res.status, await res.body?.cancel()];
      return [res.status, ((await res.json()) as { error: Record<string, unknown> }).error];
    };
    const expected = (latest: number) => [
      400,
      {
        code: "invalid_last_event_id",
        message: `Last-Event-ID / after ${future} is past the newest event id of session '${sessionId}' (${latest}); resume from an id its streams sent`,
        requestId: expect.any(String),
      },
    ];
    expect(await refusal({ lastEventId: String(future) })).toEqual(expected(newest));
    expect(await refusal({ query: `?after=${future}` })).toEqual(expected(newest));
    expect(await refusal({ query: "?runId=r_1", lastEventId: String(future) })).toEqual(expected(newest));
    // The newest seq itself is a place to resume from: the run is tailed live.
    const tail = await api(`/api/sessions/${sessionId}/events/stream`, { headers: { "last-event-id": String(newest) } });
    expect([tail.status, tail.headers.get("x-run-id")]).toEqual([200, "r_1"]);
    first.open();
    const [live, tailed] = await Promise.all([readSse(await running), readSse(tail)]);
    expect(tailed.frames.map((f) => f.id)).toEqual(live.frames.filter((f) => f.id > newest).map((f) => f.id));
    expect(tailed.frames.at(-1)!.data.type).toBe("agent_completed");

    const after = await newestSeq(sessionId);
    expect(await refusal({ lastEventId: String(future) })).toEqual(expected(after));
    expect((await api(`/api/sessions/${sessionId}/events/stream`, { headers: { "last-event-id": String(after) } })).status).toBe(204);
  });
});

describe("a replayed event's text", () => {
  it("is the stored line's, as GET .../events and the live stream send it, byte for byte (hunt 50)", async () => {
    const { sessionId, first, running } = await sessionWithHeldRun("one");
    const followUp = await prompt(sessionId, { text: "two", whenBusy: "followUp" });
    first.open();
    const streamed = [await (await running).text(), await followUp.text()].join("");
    const exported = (await (await api(`/api/sessions/${sessionId}/events`)).text()).trim().split("\n");
    const replayed = await (await api(`/api/sessions/${sessionId}/events/stream`, { headers: { "last-event-id": "0" } })).text();
    // Data lines keyed by seq: the JSON text as each path sent it.
    const byText = (body: string) =>
      new Map(body.split("\n").flatMap((l) => (l.startsWith("data: ") ? [[JSON.parse(l.slice(6)).seq, l.slice(6)]] : [])));
    const replay = byText(replayed);
    const types = exported.map((line) => JSON.parse(line).type);
    expect(types).toContain("message_queued");
    expect(types).toContain("queue_updated");
    expect([...replay.values()]).toEqual(exported);
    // The prompts' own streams (replayed from their start, then live) sent the same text for each seq.
    for (const [seq, text] of byText(streamed)) expect([seq, text]).toEqual([seq, replay.get(seq)]);
  });
});
