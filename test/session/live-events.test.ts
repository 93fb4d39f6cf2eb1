import { afterEach, describe, expect, it, vi } from "vitest";
import type { AgentEvent } from "../../src/domain";
import {
  MAX_STALLED_EVENT_STREAMS_PER_ISOLATE,
  MAX_STALLED_EVENT_STREAMS_PER_SESSION,
  SSE_STALL_GRACE_MS,
  SSE_STALLED_STREAM_MS,
} from "../../src/domain/limits";
import {
  EventHub,
  isolateStalledStreams,
  type SeqEvent,
  SSE_CHUNK_MAX_CHARS,
  SSE_MAX_UNREAD_BYTES,
  SSE_REPLAY_AHEAD_BYTES,
} from "../../src/session/live-events";
import { SSE_PING, SSE_RETRY, sseFrame } from "../../src/session/sse";
import { StalledStreams } from "../../src/workspace/stalled-streams";
import { deltaEvent } from "../helpers/records";

const done: AgentEvent = {
  type: "agent_completed",
  eventId: "e_9",
  sessionId: "s_1",
  createdAt: "2026-11-30T02:51:00.000Z",
  runId: "r_1",
  stopReason: "STOP",
};

/** The frame of an event as streams send it: its seq as the id and first in the data. */
const frame = (seq: number, event: AgentEvent) => sseFrame(seq, "agent_event", JSON.stringify({ seq, ...event }));

/** A replay of `events`, `size` per batch. */
async function* batches(events: SeqEvent[], size = Number.POSITIVE_INFINITY): AsyncGenerator<SeqEvent[]> {
  for (let i = 0; i < events.length; i += size) yield events.slice(i, i + size);
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

/** A live stream (fake timers) whose client has read nothing of `chunks` published events of 64 KiB. */
async function liveStreamBehind(hub: EventHub, chunks: number): Promise<ReadableStreamDefaultReader<Uint8Array>> {
  const reader = hub
    .open(
      0,
      () => batches([]),
      () => true,
    )
    .body.getReader();
  await vi.advanceTimersByTimeAsync(10);
  for (let i = 0; i < chunks; i++) {
    hub.publish({ seq: i + 1, event: deltaEvent("s_1", `e_${i}`, "z".repeat(64 * 1024)) });
    await vi.advanceTimersByTimeAsync(1);
  }
  return reader;
}

/** What is left of a stream a test already reads from, to its end. */
async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  let text = "";
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value);
  return text;
}

describe("sseFrame", () => {
  it("formats id, event and data lines", () => {
    expect(sseFrame(7, "agent_event", '{"a":1}')).toBe('id: 7\nevent: agent_event\ndata: {"a":1}\n\n');
    expect(sseFrame(1, "x", "a\nb")).toBe("id: 1\nevent: x\ndata: a\ndata: b\n\n");
  });

  it("refuses line breaks in the event name and bad ids", () => {
    expect(() => sseFrame(1, "a\nid: 9", "{}")).toThrow("an SSE event name cannot contain a line break");
    expect(() => sseFrame(-1, "a", "{}")).toThrow("an SSE id must be a non-negative integer");
    expect(() => sseFrame(1.5, "a", "{}")).toThrow("an SSE id must be a non-negative integer");
  });
});

describe("EventHub", () => {
  afterEach(() => vi.useRealTimers());

  it("replays after the given seq, then ends when no run is active", async () => {
    const hub = new EventHub();
    const stream = hub.open(
      1,
      () => batches([{ seq: 2, event: deltaEvent("s_1", "e_2", "b") }]),
      () => false,
    ).body;
    expect(await readAll(stream)).toBe(SSE_RETRY + frame(2, deltaEvent("s_1", "e_2", "b")));
    expect(hub.size).toBe(0);
  });

  it("events published during the replay are sent once, in order, and a live terminal event ends the stream", async () => {
    const hub = new EventHub();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const e2 = deltaEvent("s_1", "e_2", "b");
    const e3 = deltaEvent("s_1", "e_3", "c");
    const stream = hub.open(
      1,
      async function* () {
        await gate;
        yield [
          { seq: 2, event: e2 },
          { seq: 3, event: e3 },
        ];
      },
      () => true,
    ).body;
    // Published while the replay is still reading: seq 3 overlaps the replay, seq 4 does not.
    hub.publish({ seq: 3, event: e3 });
    hub.publish({ seq: 4, event: done });
    release();
    expect(await readAll(stream)).toBe(SSE_RETRY + frame(2, e2) + frame(3, e3) + frame(4, done));
    expect(hub.size).toBe(0);
  });

  it("sends a ping comment every 15 s while tailing", async () => {
    vi.useFakeTimers();
    const hub = new EventHub();
    const reader = hub
      .open(
        0,
        () => batches([]),
        () => true,
      )
      .body.getReader();
    await vi.advanceTimersByTimeAsync(1);
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(SSE_RETRY);
    await vi.advanceTimersByTimeAsync(15_000);
    await vi.advanceTimersByTimeAsync(1); // the chunk leaves in the next timer task
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(SSE_PING);
    hub.publish({ seq: 1, event: done });
    await vi.advanceTimersByTimeAsync(1);
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(frame(1, done));
    expect((await reader.read()).done).toBe(true);
  });

  it("frames published in one synchronous burst leave as one chunk, and the stream ends in a later task", async () => {
    const hub = new EventHub();
    const reader = hub
      .open(
        0,
        () => batches([]),
        () => true,
      )
      .body.getReader();
    await new Promise((r) => setTimeout(r, 0)); // the replay has been sent; the stream is live
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(SSE_RETRY);
    const burst = Array.from({ length: 50 }, (_, i) => ({ seq: i + 1, event: deltaEvent("s_1", `e_${i + 1}`, "x") }));
    for (const item of burst) hub.publish(item);
    hub.publish({ seq: 51, event: done });
    const expected = burst.map(({ seq, event }) => frame(seq, event)).join("") + frame(51, done);
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe(expected);
    expect((await reader.read()).done).toBe(true);
  });

  it("a burst larger than SSE_CHUNK_MAX_CHARS is split into chunks of about that size", async () => {
    const hub = new EventHub();
    const reader = hub
      .open(
        0,
        () => batches([]),
        () => true,
      )
      .body.getReader();
    await new Promise((r) => setTimeout(r, 0));
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(SSE_RETRY);
    const big = "y".repeat(10_000);
    for (let i = 1; i <= 20; i++) hub.publish({ seq: i, event: deltaEvent("s_1", `e_${i}`, big) });
    hub.publish({ seq: 21, event: done });
    const sizes: number[] = [];
    let text = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      sizes.push(r.value.byteLength);
      text += new TextDecoder().decode(r.value);
    }
    expect(text.split("\n\n").length - 1).toBe(21);
    // Each chunk is cut as soon as SSE_CHUNK_MAX_CHARS (65536) is reached: 7 frames of ~10 KB each.
    expect(sizes.length).toBe(3);
    expect(sizes.slice(0, 2).every((n) => n >= SSE_CHUNK_MAX_CHARS && n < SSE_CHUNK_MAX_CHARS + 10_200)).toBe(true);
  });

  it("replays at the client's pace: a long replay stops about SSE_REPLAY_AHEAD_BYTES ahead of an unread stream", async () => {
    const hub = new EventHub();
    // 400 events of 8 KiB: 3.2 MB of frames.
    const events = Array.from({ length: 400 }, (_, i) => ({ seq: i + 1, event: deltaEvent("s_1", `e_${i}`, "z".repeat(8 * 1024)) }));
    let replayed = 0;
    const stream = hub.open(
      0,
      () =>
        batches(
          events.map((e) => ({
            ...e,
            get json() {
              replayed = Math.max(replayed, e.seq);
              return undefined;
            },
          })),
        ),
      () => false,
    ).body;
    const reader = stream.getReader();
    await new Promise((r) => setTimeout(r, 50));
    // Nothing read yet: about SSE_REPLAY_AHEAD_BYTES of frames (plus the chunk being built) went out.
    expect(replayed).toBeGreaterThan(SSE_REPLAY_AHEAD_BYTES / (8 * 1024) - 2);
    expect(replayed).toBeLessThan((SSE_REPLAY_AHEAD_BYTES + 2 * SSE_CHUNK_MAX_CHARS) / (8 * 1024) + 2);
    // Reading lets it go on, to the end.
    let text = "";
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(replayed).toBe(400);
    expect(text.split("event: agent_event").length - 1).toBe(400);
    expect(hub.size).toBe(0);
  });

  it("reads the replay's batches only as its client reads, and none after a cancel", async () => {
    const hub = new EventHub();
    // 40 batches (segments) of 10 events of 8 KiB: 80 KiB of frames each.
    const events = Array.from({ length: 400 }, (_, i) => ({ seq: i + 1, event: deltaEvent("s_1", `e_${i}`, "z".repeat(8 * 1024)) }));
    let pulled = 0;
    let finished = false;
    async function* replay(): AsyncGenerator<SeqEvent[]> {
      try {
        for (let i = 0; i < events.length; i += 10) {
          pulled++;
          yield events.slice(i, i + 10);
        }
      } finally {
        finished = true;
      }
    }
    const reader = hub.open(0, replay, () => false).body.getReader();
    await new Promise((r) => setTimeout(r, 50));
    // Unread: the batches that fill SSE_REPLAY_AHEAD_BYTES (and the chunk being built), not all 40.
    expect(pulled).toBeGreaterThanOrEqual(Math.floor(SSE_REPLAY_AHEAD_BYTES / (80 * 1024)));
    expect(pulled).toBeLessThanOrEqual(Math.ceil((SSE_REPLAY_AHEAD_BYTES + 2 * SSE_CHUNK_MAX_CHARS) / (80 * 1024)) + 1);
    expect(finished).toBe(false);
    const before = pulled;
    await reader.cancel();
    await new Promise((r) => setTimeout(r, 10));
    // The cancel ended the replay where it was: its reads stop and the generator is closed.
    expect(pulled).toBe(before);
    expect(finished).toBe(true);
    expect(hub.size).toBe(0);
  });

  it("ends a live stream with an error once its client has left SSE_MAX_UNREAD_BYTES unread", async () => {
    const hub = new EventHub();
    const stream = hub.open(
      0,
      () => batches([]),
      () => true,
    ).body;
    const reader = stream.getReader();
    await new Promise((r) => setTimeout(r, 10));
    expect(hub.size).toBe(1);
    // A run streams 6 MB that nobody reads, in bursts (a task each).
    for (let i = 0; i < 750; i++) {
      hub.publish({ seq: i + 1, event: deltaEvent("s_1", `e_${i}`, "z".repeat(8 * 1024)) });
      if (i % 50 === 49) await new Promise((r) => setTimeout(r, 0));
    }
    await new Promise((r) => setTimeout(r, 10));
    expect(hub.size).toBe(0);
    expect(SSE_MAX_UNREAD_BYTES).toBe(4 * 1024 * 1024);
    await expect(reader.read()).rejects.toThrow(
      `the client left more than ${SSE_MAX_UNREAD_BYTES} bytes unread; resume from Last-Event-ID`,
    );
  });

  it("ends a stream whose client stopped reading mid-replay once the live events held behind it pass SSE_MAX_UNREAD_BYTES", async () => {
    const hub = new EventHub();
    // A replay of 2 MB, more than the stream sends ahead of its client: it waits for a read that never comes.
    const old = Array.from({ length: 250 }, (_, i) => ({ seq: i + 1, event: deltaEvent("s_1", `e_${i}`, "o".repeat(8 * 1024)) }));
    const reader = hub
      .open(
        0,
        () => batches(old, 10),
        () => true,
      )
      .body.getReader();
    await new Promise((r) => setTimeout(r, 20));
    expect(hub.size).toBe(1);
    // The next run streams 5 MB meanwhile.
    for (let i = 0; i < 600; i++) {
      const event = deltaEvent("s_1", `e_live_${i}`, "z".repeat(8 * 1024));
      hub.publish({ seq: 251 + i, event, json: JSON.stringify(event) });
    }
    expect(hub.size).toBe(0);
    const error = await (async () => {
      for (;;) await reader.read();
    })().catch((err: Error) => err.message);
    expect(error).toBe(`the client left more than ${SSE_MAX_UNREAD_BYTES} bytes unread; resume from Last-Event-ID`);
  });

  it("does not end a stream that reads promptly through a replay of what the live run appends meanwhile", async () => {
    const hub = new EventHub();
    const events = Array.from({ length: 700 }, (_, i) => {
      const event = deltaEvent("s_1", `e_${i}`, "z".repeat(8 * 1024));
      return { seq: i + 1, event, json: JSON.stringify(event) };
    });
    // 5.6 MB a run appends while the replay reads it from the log: each batch is published live first.
    const replay = async function* () {
      for (let i = 0; i < events.length; i += 50) {
        for (const item of events.slice(i, i + 50)) hub.publish(item);
        yield events.slice(i, i + 50);
      }
    };
    const reader = hub.open(0, replay, () => true).body.getReader();
    let text = "";
    const decoder = new TextDecoder();
    while (!text.includes("id: 700\n")) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    expect([...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual(events.map((e) => e.seq));
    expect(hub.size).toBe(1);
    await reader.cancel();
  });

  it("ready rejects when the replay's first batch cannot be read, and the stream is detached; a later failure errors the stream instead", async () => {
    const hub = new EventHub();
    const unreadable = new Error("segment missing");
    const failing = hub.open(
      0,
      // biome-ignore lint/correctness/useYield: a replay that fails before its first batch
      async function* () {
        throw unreadable;
      },
      () => true,
    );
    await expect(failing.ready).rejects.toBe(unreadable);
    expect(hub.size).toBe(0);
    await failing.body.cancel();

    const e1 = deltaEvent("s_1", "e_1", "a");
    const later = hub.open(
      0,
      async function* () {
        yield [{ seq: 1, event: e1 }];
        throw unreadable;
      },
      () => true,
    );
    await expect(later.ready).resolves.toBeUndefined();
    await expect(readAll(later.body)).rejects.toBe(unreadable);
    expect(hub.size).toBe(0);
  });

  it("lets go of a replay whose client has read nothing for SSE_STALLED_STREAM_MS (a client gone without its cancel, hunt 36)", async () => {
    vi.useFakeTimers();
    const hub = new EventHub();
    const events = Array.from({ length: 100 }, (_, i) => ({ seq: i + 1, event: deltaEvent("s_1", `e_${i}`, "z".repeat(8 * 1024)) }));
    const { body } = hub.open(
      0,
      () => batches(events),
      () => true,
    );
    const reader = body.getReader();
    await vi.advanceTimersByTimeAsync(SSE_STALLED_STREAM_MS - 1_000);
    expect(hub.size).toBe(1); // waiting for its client to read, within the deadline
    await vi.advanceTimersByTimeAsync(1_000);
    expect(hub.size).toBe(0);
    await expect(reader.read()).rejects.toThrow("the client read nothing for 60 s; resume from Last-Event-ID");
  });

  it("lets go of a live stream whose client has read nothing for SSE_STALLED_STREAM_MS, counted from its last read", async () => {
    expect(SSE_STALLED_STREAM_MS).toBe(60_000);
    vi.useFakeTimers();
    // Bounds that never end it: only the time does.
    const hub = new EventHub(100, SSE_STALL_GRACE_MS, new StalledStreams(100, "unused"));
    // 512 KiB unread: past the queue's 256 KiB, well under SSE_MAX_UNREAD_BYTES.
    const reader = await liveStreamBehind(hub, 8);
    await vi.advanceTimersByTimeAsync(30_000);
    // One chunk read half way: the 60 s start again from there (it ends at the first look after them).
    expect((await reader.read()).done).toBe(false);
    await vi.advanceTimersByTimeAsync(SSE_STALLED_STREAM_MS - 1_000);
    expect([hub.size, hub.stalledCount]).toEqual([1, 1]);
    await vi.advanceTimersByTimeAsync(1_000 + SSE_STALL_GRACE_MS);
    expect([hub.size, hub.stalledCount]).toEqual([0, 0]);
    await expect(readRest(reader)).rejects.toThrow("the client read nothing for 60 s; resume from Last-Event-ID");
  });

  it("keeps at most isolate.max stalled streams across sessions: when one more stalls, the one stalled longest in any session ends", async () => {
    expect([isolateStalledStreams.max, MAX_STALLED_EVENT_STREAMS_PER_ISOLATE]).toEqual([16, 16]);
    vi.useFakeTimers();
    const isolate = new StalledStreams(
      3,
      "more than 3 event streams went unread on this server and this one longest; resume from Last-Event-ID",
    );
    const sessions = [new EventHub(2, 1_000, isolate), new EventHub(2, 1_000, isolate)];
    const events = Array.from({ length: 200 }, (_, i) => ({ seq: i + 1, event: deltaEvent("s_1", `e_${i}`, "z".repeat(8 * 1024)) }));
    const open = (hub: EventHub) =>
      hub
        .open(
          0,
          () => batches(events, 10),
          () => true,
        )
        .body.getReader();
    // Session 0's two streams stall first, then session 1's: each session is within its own bound of 2.
    const first = [open(sessions[0]!), open(sessions[0]!)];
    await vi.advanceTimersByTimeAsync(1_500);
    expect([sessions[0]!.stalledCount, isolate.size]).toEqual([2, 2]);
    const second = [open(sessions[1]!), open(sessions[1]!)];
    await vi.advanceTimersByTimeAsync(1_500);
    // The fourth stall passed the isolate's 3: session 0's first stream, stalled longest, ended.
    expect([sessions[0]!.size, sessions[0]!.stalledCount, sessions[1]!.size, sessions[1]!.stalledCount, isolate.size]).toEqual([
      1, 1, 2, 2, 3,
    ]);
    await expect(readRest(first[0]!)).rejects.toThrow(
      "more than 3 event streams went unread on this server and this one longest; resume from Last-Event-ID",
    );
    // The others get the whole log once they read.
    await vi.advanceTimersByTimeAsync(1);
    vi.useRealTimers();
    for (const hub of sessions) hub.publish({ seq: 201, event: done });
    for (const reader of [first[1]!, ...second])
      expect((await readRest(reader)).endsWith(frame(200, events[199]!.event) + frame(201, done))).toBe(true);
    expect([sessions[0]!.size, sessions[1]!.size, isolate.size]).toEqual([0, 0, 0]);
  });

  it("keeps at most maxStalled streams whose clients read nothing: when one more stalls, the one stalled longest ends; streams that wait or read go on", async () => {
    expect([new EventHub().maxStalled, MAX_STALLED_EVENT_STREAMS_PER_SESSION, SSE_STALL_GRACE_MS]).toEqual([8, 8, 5_000]);
    vi.useFakeTimers();
    const hub = new EventHub(2, 1_000);
    // 200 events of 8 KiB: a replay that fills its queue (SSE_REPLAY_AHEAD_BYTES) and waits.
    const events = Array.from({ length: 200 }, (_, i) => ({ seq: i + 1, event: deltaEvent("s_1", `e_${i}`, "z".repeat(8 * 1024)) }));
    const open = (replay: SeqEvent[]) =>
      hub
        .open(
          0,
          () => batches(replay, 10),
          () => true,
        )
        .body.getReader();
    // Following queued runs: nothing to read yet, so never stalled.
    const waiting = [open([]), open([]), open([])];
    const unread = [open(events), open(events), open(events)];
    // Read a chunk every 500 ms, within the grace: never stalled although its queue refills each time.
    const reading = open(events);
    const readFor = async (ms: number) => {
      for (let t = 0; t < ms; t += 500) {
        const read = reading.read();
        await vi.advanceTimersByTimeAsync(500);
        expect((await read).done).toBe(false);
      }
    };
    await vi.advanceTimersByTimeAsync(10);
    expect([hub.size, hub.stalledCount]).toEqual([7, 0]);
    await readFor(2_000);
    // The three unread ones stalled in the order they filled: the first is ended, two stay.
    expect([hub.size, hub.stalledCount]).toEqual([6, 2]);
    await expect(readRest(unread[0]!)).rejects.toThrow(
      "more than 2 of the session's event streams went unread and this one longest; resume from Last-Event-ID",
    );
    // Another stall ends the next one stalled longest.
    const fourth = open(events);
    await readFor(1_500);
    expect([hub.size, hub.stalledCount]).toEqual([6, 2]);
    await expect(readRest(unread[1]!)).rejects.toThrow("this one longest");
    // The waiting streams and the reader get every event, the stalled ones too once they read.
    // (Timers set while faked never fire once real: none may be pending at the switch.)
    await vi.advanceTimersByTimeAsync(1);
    vi.useRealTimers();
    hub.publish({ seq: 201, event: done });
    for (const reader of waiting) expect(await readRest(reader)).toBe(SSE_RETRY + frame(201, done));
    for (const reader of [reading, unread[2]!, fourth])
      expect((await readRest(reader)).endsWith(frame(200, events[199]!.event) + frame(201, done))).toBe(true);
    expect([hub.size, hub.stalledCount]).toEqual([0, 0]);
  });

  it("a client far behind a live run that still reads (without a pull) is not stalled; one that stops is", async () => {
    vi.useFakeTimers();
    const hub = new EventHub(0, 1_000);
    // 1 MiB unread: far past the queue's 256 KiB, so reading a chunk does not make it pull.
    const reader = await liveStreamBehind(hub, 16);
    await reader.read();
    await vi.advanceTimersByTimeAsync(400);
    await reader.read();
    await vi.advanceTimersByTimeAsync(600);
    // It read within the grace: not stalled (with maxStalled 0 a stall would have ended it).
    expect([hub.size, hub.stalledCount]).toEqual([1, 0]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(hub.size).toBe(0);
    await expect(readRest(reader)).rejects.toThrow("more than 0 of the session's event streams went unread");
  });

  it("a cancelled reader is detached", async () => {
    const hub = new EventHub();
    const reader = hub
      .open(
        0,
        () => batches([]),
        () => true,
      )
      .body.getReader();
    await new Promise((r) => setTimeout(r, 0));
    expect(hub.size).toBe(1);
    await reader.cancel();
    expect(hub.size).toBe(0);
  });
});
