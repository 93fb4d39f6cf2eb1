import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { counterIds, HarnessError } from "../../src/domain";
import { DurableSessionStore } from "../../src/session/session-store";
import { deltaEvent, userMessage } from "../helpers/records";

function store(prefix: string) {
  // Each test gets its own id space, so sessions never collide within this file's storage.
  const ids = counterIds();
  return new DurableSessionStore(env, { next: (kind) => ids.next(kind).replace("_", `_${prefix}`) }, () =>
    Date.parse("2026-11-30T03:00:00Z"),
  );
}

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(HarnessError);
    return (err as HarnessError).code;
  }
  throw new Error("expected a HarnessError");
}

describe("DurableSessionStore", () => {
  it("creates a session on its owner's workspace, lists it in the owner's index and finds it", async () => {
    const s = store("create");
    await env.STORE.put(
      "workspaces/w_1/meta.json",
      JSON.stringify({ workspaceId: "w_1", owner: "acme", format: "tar", files: 0, bytes: 0, createdAt: "2026-11-30T03:00:00.000Z" }),
    );
    expect(await code(s.create({ workspaceId: "w_1", owner: "globex" }))).toBe("workspace_not_found");
    expect(await code(s.create({ workspaceId: "w_2", owner: "acme" }))).toBe("workspace_not_found");
    const meta = await s.create({ workspaceId: "w_1", title: "demo", owner: "acme" });
    expect(meta).toEqual({
      id: "s_create1",
      workspaceId: "w_1",
      projectId: null,
      title: "demo",
      createdAt: "2026-11-30T03:00:00.000Z",
      updatedAt: "2026-11-30T03:00:00.000Z",
    });
    expect(await s.find("s_create1")).toEqual({ ...meta, owner: "acme" });
    expect(await s.findOwned("s_create1", "acme")).toEqual({
      id: "s_create1",
      workspaceId: "w_1",
      projectId: null,
      title: "demo",
      createdAt: meta.createdAt,
    });
    expect(await s.findOwned("s_create1", "globex")).toBeNull();
  });

  it("preserves append order for messages and events", async () => {
    const s = store("order");
    const { id } = await s.create({});
    const msgs = ["m_1", "m_2", "m_3"].map((m, i) => userMessage(id, m, `t${i}`));
    for (const m of msgs) await s.appendMessage(id, m);
    const evs = ["e_1", "e_2"].map((e) => deltaEvent(id, e, e));
    expect(await s.appendEvent(id, evs[0]!)).toBe(4);
    expect(await s.appendEvent(id, evs[1]!)).toBe(5);
    expect(await s.loadMessages(id)).toEqual(msgs);
    expect(await s.loadEvents(id)).toEqual(evs);
  });

  it("updatedAt is the newest message's time; events do not touch the session row", async () => {
    const s = store("updated");
    const { id } = await s.create({});
    await s.appendMessage(id, { ...userMessage(id, "m_1"), createdAt: "2026-11-30T04:00:00.000Z" });
    await s.appendEvent(id, { ...deltaEvent(id, "e_1", "x"), createdAt: "2026-11-30T05:00:00.000Z" });
    expect((await s.info(id))!.updatedAt).toBe("2026-11-30T04:00:00.000Z");
    await s.appendMessage(id, { ...userMessage(id, "m_2", "again", "m_1"), createdAt: "2026-11-30T04:30:00.000Z" });
    expect((await s.info(id))!.updatedAt).toBe("2026-11-30T04:30:00.000Z");
  });

  it("unknown session: find gives null, append and load fail with session_not_found", async () => {
    const s = store("unknown");
    expect(await s.find("s_nothere")).toBeNull();
    expect(await code(s.appendMessage("s_nothere", userMessage("s_nothere", "m_1")))).toBe("session_not_found");
    expect(await code(s.appendEvent("s_nothere", deltaEvent("s_nothere", "e_1", "x")))).toBe("session_not_found");
    expect(await code(s.loadMessages("s_nothere"))).toBe("session_not_found");
    expect(await code(s.loadEvents("s_nothere"))).toBe("session_not_found");
  });

  it("refuses a record whose sessionId differs from the session", async () => {
    const s = store("mismatch");
    const { id } = await s.create({});
    const err = s.appendMessage(id, userMessage("s_other", "m_1"));
    expect(await code(err)).toBe("invalid_record");
    await expect(s.appendMessage(id, userMessage("s_other", "m_1"))).rejects.toThrow(`record 0 belongs to session 's_other', not '${id}'`);
    expect(await s.loadMessages(id)).toEqual([]);
  });

  it("refuses malformed ids before touching storage", async () => {
    const s = store("ids");
    for (const bad of ["../s_1", "s_a/b", "s_..", "s_a\0b", `s_${"x".repeat(65)}`, "w_1", ""]) {
      expect(() => s.stub(bad)).toThrow(HarnessError);
      expect(await code(s.find(bad))).toBe("invalid_session_id");
      expect(await code(s.appendMessage(bad, userMessage(bad, "m_1")))).toBe("invalid_session_id");
      expect(await code(s.loadMessages(bad))).toBe("invalid_session_id");
    }
  });

  it("8 concurrent appenders x 250 records: seqs 1..N, each appender's order kept, nothing lost", async () => {
    const s = store("race");
    const { id } = await s.create({});
    const APPENDERS = 8;
    const PER_APPENDER = 250;
    const seqsByAppender = await Promise.all(
      Array.from({ length: APPENDERS }, async (_, a) => {
        const seqs: number[] = [];
        for (let i = 0; i < PER_APPENDER; i++) seqs.push(await s.appendEvent(id, deltaEvent(id, `e_${a}_${i}`, `${a}:${i}`)));
        return seqs;
      }),
    );
    const all = seqsByAppender.flat().sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: APPENDERS * PER_APPENDER }, (_, i) => i + 1));
    for (const seqs of seqsByAppender) expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    // The log, read back in seq order, holds each appender's records in its own order.
    const texts = (await s.loadEvents(id)).map((e) => (e.type === "assistant_delta" ? e.text : ""));
    expect(texts).toHaveLength(APPENDERS * PER_APPENDER);
    for (let a = 0; a < APPENDERS; a++) {
      expect(texts.filter((t) => t.startsWith(`${a}:`))).toEqual(Array.from({ length: PER_APPENDER }, (_, i) => `${a}:${i}`));
    }
    // Interleaving really happened: the first 8 seqs do not all belong to one appender.
    expect(new Set(texts.slice(0, APPENDERS).map((t) => t.split(":")[0])).size).toBeGreaterThan(1);
  });
});
