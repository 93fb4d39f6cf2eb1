import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { HarnessError } from "../../src/domain";
import { MAX_CONCURRENT_INGESTS, MAX_WAITING_INGESTS } from "../../src/domain/limits";
import { IngestSlots, ingestSlots, type SlotClock } from "../../src/workspace/ingest-slots";
import { SearchText } from "../../src/workspace/search/search-text";
import { SEARCH_TEXT_CACHE_BYTES, searchTextCache } from "../../src/workspace/search/text-cache";
import { keysUnder, tarOf } from "./archives";

/** An ingest that runs until the test lets it finish (or fail). */
function gate() {
  let finish!: () => void;
  let fail!: (error: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return { done, finish, fail };
}

/** Time for uploads in line to see a slot handed to them (they look every 20 ms). */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 10));
};

/** Real time, looking every millisecond. */
const fastClock: SlotClock = { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)), pollMs: 1 };

/**
 * A clock the test moves, whose sleeps end at once (a turn of the event loop); a sleep asked for
 * while `frozen` ends only when the test wakes it (`parked`), or never, as the timers of a request
 * cancelled by the runtime never fire.
 */
function testClock() {
  const clock = {
    at: 0,
    frozen: false,
    parked: [] as (() => void)[],
    pollMs: 20,
    now: () => clock.at,
    sleep: (_ms: number) => new Promise<void>((resolve) => (clock.frozen ? clock.parked.push(resolve) : setTimeout(resolve, 0))),
  };
  return clock;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "resolved";
  } catch (error) {
    return error instanceof HarnessError ? error.code : String(error);
  }
}

describe("IngestSlots", () => {
  it("runs `max` at once; the rest start in arrival order as slots free up", async () => {
    const slots = new IngestSlots(2, 4, 60_000, undefined, fastClock);
    const started: string[] = [];
    const gates = { a: gate(), b: gate(), c: gate(), d: gate() };
    const runs = (["a", "b", "c", "d"] as const).map((name) =>
      slots.run(async () => {
        started.push(name);
        await gates[name].done;
        return name;
      }),
    );
    const settled = Promise.allSettled(runs);
    await turns();
    expect(started).toEqual(["a", "b"]);
    expect(slots.load).toEqual({ running: 2, waiting: 2 });

    gates.b.finish();
    await turns();
    expect(started).toEqual(["a", "b", "c"]);
    expect(slots.load).toEqual({ running: 2, waiting: 1 });

    // A failed ingest frees its slot too.
    gates.a.fail(new Error("broken archive"));
    await turns();
    expect(started).toEqual(["a", "b", "c", "d"]);
    expect(slots.load).toEqual({ running: 2, waiting: 0 });

    gates.c.finish();
    gates.d.finish();
    expect((await settled).map((s) => (s.status === "fulfilled" ? s.value : (s.reason as Error).message))).toEqual([
      "broken archive",
      "b",
      "c",
      "d",
    ]);
    expect(slots.load).toEqual({ running: 0, waiting: 0 });
  });

  it("refuses at once with ingest_busy when the line is full, without running the ingest", async () => {
    const slots = new IngestSlots(1, 1, 60_000, undefined, fastClock);
    const first = gate();
    const running = slots.run(() => first.done);
    const waiting = slots.run(async () => "second");
    let ran = false;
    expect(
      await codeOf(
        slots.run(async () => {
          ran = true;
        }),
      ),
    ).toBe("ingest_busy");
    expect(ran).toBe(false);
    expect(slots.load).toEqual({ running: 1, waiting: 1 });
    first.finish();
    await running;
    expect(await waiting).toBe("second");
    expect(slots.load).toEqual({ running: 0, waiting: 0 });
  });

  it("refuses a wait that runs out, and the slot it never got goes to the next in line", async () => {
    const slots = new IngestSlots(1, 4, 30, undefined, fastClock);
    const first = gate();
    const running = slots.run(() => first.done);
    let ran = false;
    const timedOut = codeOf(
      slots.run(async () => {
        ran = true;
      }),
    );
    expect(await timedOut).toBe("ingest_busy");
    expect(slots.load).toEqual({ running: 1, waiting: 0 });
    const later = slots.run(async () => "later");
    first.finish();
    await running;
    expect(await later).toBe("later");
    expect(ran).toBe(false);
    expect(slots.load).toEqual({ running: 0, waiting: 0 });
  });
});

describe("IngestSlots and uploads whose requests are gone", () => {
  it("skip an upload in line that stopped looking for its slot, and take one back again if it looks later", async () => {
    const clock = testClock();
    const slots = new IngestSlots(1, 4, 60_000, undefined, clock);
    const first = gate();
    const started: string[] = [];
    const running = slots.run(() => first.done);
    // "gone" waits, then its request is cancelled: its timer never fires again.
    const gone = slots.run(async () => {
      started.push("gone");
    });
    await turns(1);
    clock.frozen = true;
    await turns(1);
    clock.frozen = false;
    const next = slots.run(async () => {
      started.push("next");
      return "next";
    });
    await turns(1);
    expect(slots.load).toEqual({ running: 1, waiting: 2 });
    clock.at += 6_000;
    await turns(1);
    first.finish();
    await running;
    expect(await next).toBe("next");
    expect(started).toEqual(["next"]);
    expect(slots.load).toEqual({ running: 0, waiting: 0 });
    void gone;
  });

  it("hand on a slot given to an upload that never came for it, and revoke it should it come later", async () => {
    const clock = testClock();
    const slots = new IngestSlots(1, 4, 60_000, undefined, clock);
    const first = gate();
    const started: string[] = [];
    const running = slots.run(() => first.done);
    const late = slots.run(async () => {
      started.push("late");
      return "late";
    });
    await turns(1);
    // Its timer stops just before the slot is handed to it.
    clock.frozen = true;
    await turns(1);
    first.finish();
    await running;
    await turns(1);
    expect(slots.load).toEqual({ running: 1, waiting: 0 });
    clock.frozen = false;
    clock.at += 6_000;
    // The next upload finds the unclaimed slot taken back and handed to it.
    const second = gate();
    const next = slots.run(async () => {
      started.push("next");
      await second.done;
      return "next";
    });
    await turns(2);
    expect([started, slots.load]).toEqual([["next"], { running: 1, waiting: 0 }]);
    // It was only held up: it looks again, finds the slot revoked, and waits in line for the next one.
    for (const wake of clock.parked.splice(0)) wake();
    await turns(2);
    expect([started, slots.load]).toEqual([["next"], { running: 1, waiting: 1 }]);
    second.finish();
    expect([await next, await late]).toEqual(["next", "late"]);
    expect([started, slots.load]).toEqual([["next", "late"], { running: 0, waiting: 0 }]);
  });
});

describe("the isolate's shared caches while it ingests", () => {
  it("give back half of the text cache per running ingest, all of it with two, and take it again when they end", async () => {
    const MiB = 1024 * 1024;
    const held = [gate(), gate()];
    const fill = () => {
      searchTextCache.clear();
      const search = searchTextCache.beginSearch();
      for (let i = 0; i < 4; i++) searchTextCache.set(`t${i}`, new SearchText(["x"], 8 * MiB), search);
    };
    const cached = () => [0, 1, 2, 3].map((i) => searchTextCache.peek(`t${i}`) !== undefined);
    fill();
    expect([searchTextCache.capacity, searchTextCache.bytes]).toEqual([SEARCH_TEXT_CACHE_BYTES, 32 * MiB]);
    const runs = held.map((g) => ingestSlots.run(() => g.done));
    try {
      await turns(1);
      // Both took their slots: the caches hold nothing.
      expect([ingestSlots.load.running, searchTextCache.capacity, searchTextCache.bytes, ...cached()]).toEqual([
        2,
        0,
        0,
        false,
        false,
        false,
        false,
      ]);
      held[0]!.finish();
      await turns();
      expect([ingestSlots.load.running, searchTextCache.capacity]).toEqual([1, SEARCH_TEXT_CACHE_BYTES / 2]);
      fill();
      // With one running, two of the four 8 MiB texts fit in the 20 MiB left.
      expect([searchTextCache.bytes, ...cached()]).toEqual([16 * MiB, true, true, false, false]);
    } finally {
      for (const g of held) g.finish();
      await Promise.all(runs);
      searchTextCache.clear();
    }
    expect([ingestSlots.load.running, searchTextCache.capacity]).toEqual([0, SEARCH_TEXT_CACHE_BYTES]);
  });
});

describe("POST /api/workspaces through the isolate's slots", () => {
  it("answers 503 ingest_busy with Retry-After when the slots and the line are full, and stores nothing", async () => {
    // Fill the isolate's slots and its line with ingests that hold until released.
    const held = gate();
    const holders = Array.from({ length: MAX_CONCURRENT_INGESTS + MAX_WAITING_INGESTS }, () => ingestSlots.run(() => held.done));
    // Released whatever happens: the slots are the isolate's, shared with every other test in it.
    try {
      await turns();
      expect(ingestSlots.load).toEqual({ running: MAX_CONCURRENT_INGESTS, waiting: MAX_WAITING_INGESTS });
      const before = await keysUnder(env.STORE, "workspaces/");

      const res = await exports.default.fetch(
        new Request("http://localhost/api/workspaces", {
          method: "POST",
          body: await tarOf({ "a.txt": "a\n" }),
          headers: { "content-type": "application/x-tar" },
        }),
      );
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect([res.status, res.headers.get("retry-after"), body.error.code]).toEqual([503, "5", "ingest_busy"]);
      expect(body.error.message).toBe(
        `this server is already taking its maximum of uploads and ${MAX_WAITING_INGESTS} more are waiting; retry after a few seconds`,
      );
      expect(await keysUnder(env.STORE, "workspaces/")).toEqual(before);
    } finally {
      held.finish();
      await Promise.all(holders);
    }
    expect(ingestSlots.load).toEqual({ running: 0, waiting: 0 });
    // The same upload goes through once the slots are free.
    const again = await exports.default.fetch(
      new Request("http://localhost/api/workspaces", {
        method: "POST",
        body: await tarOf({ "a.txt": "a\n" }),
        headers: { "content-type": "application/x-tar" },
      }),
    );
    expect(again.status).toBe(201);
  });
});

describe("conversation and trace imports through the same slots", () => {
  const T = "2026-11-30T03:00:00.000Z";
  const conversation = `${JSON.stringify({ sessionId: "s_rec", createdAt: T, kind: "user", id: "m_1", parentId: null, text: "hi" })}\n`;
  const post = (path: string, body: BodyInit, type: string) =>
    exports.default.fetch(new Request(`http://localhost${path}`, { method: "POST", body, headers: { "content-type": type } }));
  const sessionIds = async () =>
    (
      (await (await exports.default.fetch("http://localhost/api/sessions?limit=200")).json()) as { items: { sessionId: string }[] }
    ).items.map((s) => s.sessionId);

  it("answer 503 ingest_busy when the slots and the line are full, and store nothing", async () => {
    const held = gate();
    const holders = Array.from({ length: MAX_CONCURRENT_INGESTS + MAX_WAITING_INGESTS }, () => ingestSlots.run(() => held.done));
    try {
      await turns();
      const before = await sessionIds();
      const imported = await post("/api/sessions/import", conversation, "application/x-ndjson");
      const traces = await post("/api/projects/p_default/traces", '{"x":1}\n', "application/x-ndjson");
      const codes = await Promise.all(
        [imported, traces].map(async (r) => [r.status, ((await r.json()) as { error: { code: string } }).error.code]),
      );
      expect(codes).toEqual([
        [503, "ingest_busy"],
        [503, "ingest_busy"],
      ]);
      expect(await sessionIds()).toEqual(before);
    } finally {
      held.finish();
      await Promise.all(holders);
    }
  });

  it("wait in line while the slots are held, and run once one is free", async () => {
    const held = gate();
    const holders = Array.from({ length: MAX_CONCURRENT_INGESTS }, () => ingestSlots.run(() => held.done));
    try {
      await turns();
      let settled = 0;
      const waiting = [
        post("/api/sessions/import", conversation, "application/x-ndjson"),
        post("/api/projects/p_default/traces", '{"x":1}\n', "application/x-ndjson"),
      ].map((answer) => answer.finally(() => settled++));
      await turns(10);
      expect([settled, ingestSlots.load]).toEqual([0, { running: MAX_CONCURRENT_INGESTS, waiting: 2 }]);
      held.finish();
      expect((await Promise.all(waiting)).map((r) => r.status)).toEqual([201, 201]);
    } finally {
      held.finish();
      await Promise.all(holders);
    }
    expect(ingestSlots.load).toEqual({ running: 0, waiting: 0 });
  });

  it("take turns with archives: twice as many of each as there are slots all succeed, and the slots are free after", async () => {
    const n = MAX_CONCURRENT_INGESTS * 2;
    const answers = await Promise.all([
      ...Array.from({ length: n }, async (_, i) => post("/api/workspaces", await tarOf({ "a.txt": `${i}\n` }), "application/x-tar")),
      ...Array.from({ length: n }, () => post("/api/sessions/import", conversation, "application/x-ndjson")),
      ...Array.from({ length: n }, () => post("/api/projects/p_default/traces", '{"x":1}\n', "application/x-ndjson")),
    ]);
    expect(answers.map((r) => r.status)).toEqual(Array(n * 3).fill(201));
    await Promise.all(answers.map((r) => r.arrayBuffer()));
    expect(ingestSlots.load).toEqual({ running: 0, waiting: 0 });
  });
});
