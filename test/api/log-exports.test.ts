import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AgentEvent, AgentMessage } from "../../src/domain";
import { DurableSessionStore } from "../../src/session/session-store";
import { SqliteOverlay } from "../../src/workspace/overlay";
import { tarOf } from "../workspace/archives";

// GET .../messages, /events and /trace read from a seq on (hunt 35: the viewer re-read a long
// session's whole history, megabytes, after every message of every run).

const api = (path: string) => exports.default.fetch(new Request(`http://localhost${path}`));
const store = new DurableSessionStore(env);
const at = "2026-11-30T03:00:00.000Z";

async function session(): Promise<string> {
  const res = await exports.default.fetch(
    new Request("http://localhost/api/sessions", { method: "POST", body: "{}", headers: { "content-type": "application/json" } }),
  );
  return ((await res.json()) as { sessionId: string }).sessionId;
}

const user = (sid: string, id: string, parentId: string | null, text = `text of ${id}`): AgentMessage => ({
  kind: "user",
  id,
  sessionId: sid,
  parentId,
  createdAt: at,
  text,
});
const started = (sid: string, eventId: string, runId: string): AgentEvent => ({
  type: "agent_started",
  eventId,
  sessionId: sid,
  createdAt: at,
  runId,
});

/**
 * A session with 48 messages, 12 MB: more than the streams between the object and a client buffer,
 * so a download nobody reads stays open.
 */
async function sessionOf12MB(): Promise<string> {
  const sid = await session();
  let parent: string | null = null;
  for (let i = 1; i <= 48; i++) {
    await store.appendMessage(sid, user(sid, `m_${i}`, parent, `${i} `.padEnd(256 * 1024, "x")));
    parent = `m_${i}`;
  }
  await store.stub(sid).flush();
  return sid;
}

async function read(path: string) {
  const res = await api(path);
  const lines = (await res.text()).split("\n").filter(Boolean);
  return { status: res.status, through: res.headers.get("x-log-seq"), lines: lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("log exports from a seq", () => {
  it("?after= keeps the records after that seq; x-log-seq is where the read ended, flushed to R2 or not", async () => {
    const sid = await session();
    await store.appendMessage(sid, user(sid, "m_1", null)); // seq 1
    await store.appendEvent(sid, started(sid, "e_1", "r_1")); // seq 2
    await store.appendMessage(sid, user(sid, "m_2", "m_1")); // seq 3
    await store.stub(sid).flush(); // the first three in R2 segments now
    await store.appendEvent(sid, started(sid, "e_2", "r_2")); // seq 4
    await store.appendMessage(sid, user(sid, "m_3", "m_2")); // seq 5

    const all = await read(`/api/sessions/${sid}/messages`);
    expect([all.status, all.through, all.lines.map((m) => m.id)]).toEqual([200, "5", ["m_1", "m_2", "m_3"]]);
    const since = (after: number) => read(`/api/sessions/${sid}/messages?after=${after}`);
    expect((await since(1)).lines.map((m) => m.id)).toEqual(["m_2", "m_3"]);
    expect((await since(3)).lines.map((m) => m.id)).toEqual(["m_3"]);
    expect(await since(5)).toEqual({ status: 200, through: "5", lines: [] });

    // What a client does: pass x-log-seq back, and get only what came since.
    await store.appendMessage(sid, user(sid, "m_4", "m_3")); // seq 6
    expect((await since(Number(all.through))).lines.map((m) => m.id)).toEqual(["m_4"]);

    const events = await read(`/api/sessions/${sid}/events?after=2`);
    expect([events.through, events.lines.map((e) => [e.seq, e.eventId])]).toEqual(["6", [[4, "e_2"]]]);
    const trace = await read(`/api/sessions/${sid}/trace?after=0`);
    expect([trace.status, trace.through, trace.lines]).toEqual([200, "6", []]);
  });

  it("an after that is not a seq is 400 invalid_query", async () => {
    const sid = await session();
    for (const after of ["-1", "x", "1.5", "9999999999999999"]) {
      const res = await api(`/api/sessions/${sid}/events?after=${after}`);
      expect([after, res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([after, 400, "invalid_query"]);
    }
  });

  it("a file the session changed streams from the object as one of its downloads; the snapshot's stream from R2 (hunt 84)", async () => {
    const tar = await tarOf({ "a.txt": "from the snapshot\n" });
    const upload = await exports.default.fetch(
      new Request("http://localhost/api/workspaces", { method: "POST", body: tar, headers: { "content-type": "application/x-tar" } }),
    );
    const { workspaceId } = (await upload.json()) as { workspaceId: string };
    const created = await exports.default.fetch(
      new Request("http://localhost/api/sessions", {
        method: "POST",
        body: JSON.stringify({ workspaceId }),
        headers: { "content-type": "application/json" },
      }),
    );
    const sid = ((await created.json()) as { sessionId: string }).sessionId;
    // 12 MB written by the session (as a run's write would store it): more than the streams between the object and a client buffer.
    const big = new Uint8Array(12_000_000).fill(0x61);
    await runInDurableObject(store.stub(sid), (_instance, state) => new SqliteOverlay(state.storage.sql).put("big.txt", big, 0o644));
    // A HEAD answers the length and takes no place (it held one for 60 s, hunt 85).
    const heads = [];
    for (let i = 0; i < 5; i++) {
      heads.push(await exports.default.fetch(new Request(`http://localhost/api/sessions/${sid}/files/big.txt`, { method: "HEAD" })));
    }
    expect(heads.map((res) => [res.status, res.headers.get("content-length")])).toEqual(Array(5).fill([200, "12000000"]));
    const open = [];
    for (let i = 0; i < 4; i++) open.push(await api(`/api/sessions/${sid}/files/big.txt`));
    expect(open.map((res) => [res.status, res.headers.get("content-length")])).toEqual(Array(4).fill([200, "12000000"]));
    const refused = await api(`/api/sessions/${sid}/files/big.txt`);
    expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([429, "too_many_downloads"]);
    // The snapshot's files are not the object's to produce: they are served meanwhile.
    const plain = await api(`/api/sessions/${sid}/files/a.txt`);
    expect([plain.status, await plain.text()]).toEqual([200, "from the snapshot\n"]);
    // Read to its end, a download gives its place back.
    expect((await open[0]!.arrayBuffer()).byteLength).toBe(12_000_000);
    const again = await api(`/api/sessions/${sid}/files/big.txt`);
    expect(again.status).toBe(200);
    for (const res of [...open.slice(1), again]) await res.body?.cancel();
  });

  it("a session serves 4 downloads at once: a fifth is 429 too_many_downloads with Retry-After; one read to its end frees its place", async () => {
    const sid = await sessionOf12MB();
    const path = `/api/sessions/${sid}/messages`;
    const open = [];
    for (let i = 0; i < 4; i++) open.push(await api(path));
    expect(open.map((res) => res.status)).toEqual([200, 200, 200, 200]);

    const refused = await api(path);
    expect([refused.status, refused.headers.get("retry-after"), await refused.json()]).toEqual([
      429,
      "5",
      {
        error: {
          code: "too_many_downloads",
          message: `session '${sid}' is already serving 4 downloads of its logs, changes, changed files and attribution pages; retry once one of them has ended`,
          requestId: expect.any(String),
        },
      },
    ]);
    // The other logs of the session count too: they are served by the same object, and so do its
    // attribution pages (made as they are read: several built whole at once filled an isolate, hunt 86).
    expect((await api(`/api/sessions/${sid}/events`)).status).toBe(429);
    const attributions = await api(`/api/sessions/${sid}/attributions`);
    expect([attributions.status, ((await attributions.json()) as { error: { code: string } }).error.code]).toEqual([
      429,
      "too_many_downloads",
    ]);
    // Unread past the grace (5 s), as after clients that hung up: the answer says when the first is
    // cut short (60 s after it began to wait), not 5 s (hunt 71).
    await new Promise((resolve) => setTimeout(resolve, 5_200));
    const later = await api(path);
    const wait = Number(later.headers.get("retry-after"));
    expect([later.status, wait >= 50 && wait <= 55]).toEqual([429, true]);
    expect(((await later.json()) as { error: { message: string } }).error.message).toBe(
      `session '${sid}' is already serving 4 downloads of its logs, changes, changed files and attribution pages (their clients read nothing: the first is cut short in ${wait} s); retry once one of them has ended`,
    );

    const whole = (await open[0]!.text()).split("\n").filter(Boolean);
    expect([whole.length, JSON.parse(whole[47]!).id]).toEqual([48, "m_48"]);
    const fifth = await api(path);
    expect(fifth.status).toBe(200);
    expect((await api(path)).status).toBe(429);

    // A download its client cancels frees its place once the cancel reaches the object, which
    // workerd's local RPC streams do not pass on (test/workspace/downloads.test.ts covers it,
    // and the stall cutoff that frees it here after 60 s).
    for (const res of [open[1]!, open[2]!, open[3]!, fifth]) await res.body!.cancel();
  });

  it("HEAD of a log answers its headers and takes no download place (hunt 51: four HEADs held them for 61 s)", async () => {
    const sid = await sessionOf12MB();
    const path = `/api/sessions/${sid}/messages`;
    for (let i = 0; i < 6; i++) {
      const res = await exports.default.fetch(new Request(`http://localhost${path}`, { method: "HEAD" }));
      expect([res.status, res.headers.get("content-type"), res.headers.get("x-log-seq"), await res.text()]).toEqual([
        200,
        "application/x-ndjson; charset=utf-8",
        "48",
        "",
      ]);
    }
    const head = async (route: string) => {
      const res = await exports.default.fetch(new Request(`http://localhost/api/sessions/${sid}/${route}`, { method: "HEAD" }));
      return [route, res.status, res.headers.get("content-type"), res.headers.get("x-log-seq"), await res.text()];
    };
    for (let i = 0; i < 6; i++) {
      expect(await head("events")).toEqual(["events", 200, "application/x-ndjson; charset=utf-8", "48", ""]);
      expect(await head("trace")).toEqual(["trace", 200, "application/x-ndjson; charset=utf-8", "48", ""]);
      // Its log holds messages and no event, and no run is active: nothing to stream.
      expect(await head("events/stream?after=0")).toEqual(["events/stream?after=0", 204, null, null, ""]);
    }
    // The stream's HEAD answers the status its GET would (hunt 53: 200 where GET said 204), opening nothing.
    expect((await exports.default.fetch(new Request(`http://localhost/api/sessions/${sid}/events/stream?after=0`))).status).toBe(204);
    expect(await head("events/stream?after=49")).toEqual(["events/stream?after=49", 400, "application/json", null, ""]);
    expect(await head("events/stream?runId=r_nope")).toEqual(["events/stream?runId=r_nope", 404, "application/json", null, ""]);
    // This session has no workspace: HEAD says so as GET does.
    expect(await head("changes")).toEqual(["changes", 404, "application/json", null, ""]);
    // All four places are free: four downloads at once, the first read whole.
    const open = [];
    for (let i = 0; i < 4; i++) open.push(await api(path));
    expect(open.map((res) => res.status)).toEqual([200, 200, 200, 200]);
    expect((await open[0]!.text()).split("\n").filter(Boolean).length).toBe(48);
    for (const res of open.slice(1)) await res.body!.cancel();
  });
});
