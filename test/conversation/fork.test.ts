import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type AgentMessage, counterIds, randomIds } from "../../src/domain";
import { FORKED_TOOL_RESULT_TEXT } from "../../src/session/session-fork";
import { DurableSessionStore } from "../../src/session/session-store";
import { readSse } from "../helpers/sse-client";
import type { SessionDO } from "../helpers/test-worker";
import { useSessionDeps } from "../helpers/test-worker";
import { tarOf } from "../workspace/archives";
import {
  type Answer,
  api,
  echoAnswer,
  gate,
  postJson,
  prompt,
  sessionWithModel,
  store,
  textAnswer,
  toolCallAnswer,
  until,
} from "./helpers";

const changes = async (id: string) => (await api(`/api/sessions/${id}/changes`)).text();
const fork = async (id: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
  const res = await postJson(`/api/sessions/${id}/fork`, body, headers);
  return { status: res.status, body: (await res.json()) as { sessionId: string; forkedFrom: unknown; error?: { code: string } } };
};

/** A session over a small workspace whose model plays `answers` in order. */
async function workspaceSession(answers: Answer[]) {
  const tar = await tarOf({ "README.md": "# Demo\n", "a.txt": "v0\n" });
  const upload = await api("/api/workspaces", { method: "POST", body: tar, headers: { "content-type": "application/x-tar" } });
  const { workspaceId } = (await upload.json()) as { workspaceId: string };
  const created = await postJson("/api/sessions", { workspaceId, title: "source" });
  const { sessionId } = (await created.json()) as { sessionId: string };
  let n = 0;
  useSessionDeps(sessionId, { ids: counterIds(), modelFetch: async (_i, init) => answers[n++]!(JSON.parse(String(init?.body))) });
  return sessionId;
}

describe("POST /api/sessions/:id/fork", () => {
  it("a fork at an earlier message has the history and the workspace of that point; later edits stay in the source", async () => {
    const source = await workspaceSession([
      toolCallAnswer("tc_1", "write", { path: "a.txt", content: "v1\n" }),
      textAnswer("wrote v1"),
      toolCallAnswer("tc_2", "write", { path: "a.txt", content: "v2\n" }),
      toolCallAnswer("tc_3", "write", { path: "b.txt", content: "new\n" }),
      textAnswer("wrote v2 and b"),
    ]);
    await readSse(await prompt(source, { text: "write v1", allowWrite: true }));
    const atFirst = await changes(source);
    const firstMessages = await store.loadMessages(source);
    await readSse(await prompt(source, { text: "write v2 and b", allowWrite: true }));
    const atEnd = await changes(source);
    expect(atEnd).not.toBe(atFirst);
    const sourceMessages = await store.loadMessages(source);

    const early = await fork(source, { atMessageId: firstMessages.at(-1)!.id, title: "early" });
    expect(early.status).toBe(201);
    expect(early.body.forkedFrom).toEqual({ sessionId: source, messageId: firstMessages.at(-1)!.id });
    const forkId = early.body.sessionId;
    expect(await changes(forkId)).toBe(atFirst);
    expect(await (await api(`/api/sessions/${forkId}/files/a.txt`)).text()).toBe("v1\n");
    expect((await api(`/api/sessions/${forkId}/files/b.txt`)).status).toBe(404);
    const copied = await store.loadMessages(forkId);
    expect(copied.map((m) => [m.id, m.parentId])).toEqual(firstMessages.map((m) => [m.id, m.parentId]));
    expect(copied.every((m) => m.sessionId === forkId)).toBe(true);
    const described = (await (await api(`/api/sessions/${forkId}`)).json()) as Record<string, unknown>;
    expect(described).toMatchObject({ title: "early", forkedFrom: { sessionId: source, messageId: firstMessages.at(-1)!.id } });

    // The default is the newest message: the whole workspace as it is now.
    const latest = await fork(source);
    expect(await changes(latest.body.sessionId)).toBe(atEnd);
    // A fork of the fork at its first message (before the write) sees no change at all.
    const beforeWrite = await fork(forkId, { atMessageId: copied[0]!.id });
    expect(await changes(beforeWrite.body.sessionId)).toBe("");
    // The source is untouched.
    expect(await changes(source)).toBe(atEnd);
    expect(await store.loadMessages(source)).toEqual(sourceMessages);
  });

  it("a fork that fails half-way is removed, and a retry with its id makes it whole; a change no longer there as listed is fork_source_changed", async () => {
    const source = await workspaceSession([
      toolCallAnswer("tc_1", "write", { path: "a.txt", content: "v1\n" }),
      toolCallAnswer("tc_2", "write", { path: "b.txt", content: "b\n" }),
      textAnswer("wrote"),
    ]);
    await readSse(await prompt(source, { text: "write", allowWrite: true }));
    // The source answers the second batch's bytes with fork_source_changed (as when a run rewrote a
    // listed file meanwhile): the fork stops after staging its first part.
    // One change per RPC call, so the fork has two parts.
    const failing = new DurableSessionStore(env, randomIds, Date.now, { bytes: 1024, changes: 1 });
    const real = failing.stub.bind(failing);
    let reads = 0;
    failing.stub = (id: string) => {
      const stub = real(id);
      if (id !== source) return stub;
      return new Proxy(stub, {
        get: (target, name) =>
          name === "forkChangeBytes"
            ? async (refs: Parameters<typeof stub.forkChangeBytes>[0]) =>
                ++reads === 1 ? target.forkChangeBytes(refs) : { ok: false, code: "fork_source_changed", message: "changed" }
            : Reflect.get(target, name),
      });
    };
    const changesBefore = await changes(source);
    await expect(failing.fork(source, null, { newId: "s_forkretry" })).rejects.toMatchObject({ code: "fork_source_changed" });
    expect(reads).toBe(2);
    expect(await store.find("s_forkretry")).toBeNull();
    const retried = await store.fork(source, null, { newId: "s_forkretry" });
    expect(retried.id).toBe("s_forkretry");
    expect(await changes("s_forkretry")).toBe(changesBefore);
    expect((await store.loadMessages("s_forkretry")).map((m) => m.id)).toEqual((await store.loadMessages(source)).map((m) => m.id));

    const missing = await store
      .stub(source)
      .forkChangeBytes([{ path: "gone.txt", deleted: false, mode: 0o644, size: 3, stamp: 1, version: null }]);
    expect(missing).toMatchObject({ ok: false, code: "fork_source_changed" });
  });

  it("once the source's deletion has begun, a fork's read is session_not_found and a /changes stream breaks off", async () => {
    const source = await workspaceSession([
      toolCallAnswer("tc_1", "write", { path: "a.txt", content: "v1\n" }),
      toolCallAnswer("tc_2", "write", { path: "b.txt", content: "b\n" }),
      textAnswer("wrote"),
    ]);
    await readSse(await prompt(source, { text: "write", allowWrite: true }));
    const outcome = await runInDurableObject(store.stub(source), async (instance: SessionDO) => {
      const changes = await instance.changes();
      const deletion = instance.destroy();
      const forkRead = await instance.forkSource();
      const diff = changes.ok
        ? await new Response(changes.value).text().then(
            () => "whole",
            (e: Error) => e.message,
          )
        : "refused";
      await deletion;
      return { forkRead: forkRead.ok ? "read" : forkRead.code, diff };
    });
    expect(outcome).toEqual({ forkRead: "session_not_found", diff: "the session was deleted while its changes were read" });
  });

  it("a /changes download the session's deletion cuts off fails; it does not end as if the diff were whole", async () => {
    const files = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`f${i}.txt`, `${"x".repeat(2000)}\n`.repeat(20)]));
    const upload = await api("/api/workspaces", {
      method: "POST",
      body: await tarOf(files),
      headers: { "content-type": "application/x-tar" },
    });
    const { workspaceId } = (await upload.json()) as { workspaceId: string };
    const { sessionId } = (await (await postJson("/api/sessions", { workspaceId })).json()) as { sessionId: string };
    const answers = [toolCallAnswer("tc_1", "bash", { command: "rm f*.txt" }), textAnswer("removed")];
    let n = 0;
    useSessionDeps(sessionId, { ids: counterIds(), modelFetch: async (_i, init) => answers[n++]!(JSON.parse(String(init?.body))) });
    await readSse(await prompt(sessionId, { text: "remove", allowWrite: true, allowBash: true }));
    const whole = await (await api(`/api/sessions/${sessionId}/changes`)).text();
    expect(whole.split("\ndiff --git ").length).toBe(300);
    const reader = (await api(`/api/sessions/${sessionId}/changes`)).body!.getReader();
    await reader.read();
    expect((await api(`/api/sessions/${sessionId}`, { method: "DELETE" })).status).toBe(204);
    const outcome = await (async () => {
      for (;;) if ((await reader.read()).done) return "ended";
    })().catch((e: Error) => e.message);
    // The Worker reads an error of the object's stream as an end or as a lost connection: either way not "ended".
    expect(outcome).not.toBe("ended");
  });

  it("the fork continues on its own: a prompt there does not touch the source", async () => {
    const { sessionId } = await sessionWithModel((body) => echoAnswer(body));
    await readSse(await prompt(sessionId, { text: "one" }));
    const { body } = await fork(sessionId);
    useSessionDeps(body.sessionId, { ids: counterIds(), modelFetch: async (_i, init) => echoAnswer(JSON.parse(String(init?.body))) });
    const { frames } = await readSse(await prompt(body.sessionId, { text: "two" }));
    expect(frames.at(-1)!.data.type).toBe("agent_completed");
    const forkMessages = await store.loadMessages(body.sessionId);
    expect(forkMessages.map((m) => m.kind)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(forkMessages[2]!.parentId).toBe(forkMessages[1]!.id);
    expect((await store.loadMessages(sessionId)).map((m) => m.kind)).toEqual(["user", "assistant"]);
  });

  it("a fork at a message whose tool calls have no result yet closes them with error results; the fork's requests carry those (hunt 52)", async () => {
    const source = await workspaceSession([toolCallAnswer("tc_1", "write", { path: "a.txt", content: "v1\n" }), textAnswer("wrote v1")]);
    await readSse(await prompt(source, { text: "write v1", allowWrite: true }));
    const sourceMessages = await store.loadMessages(source);
    expect(sourceMessages.map((m) => m.kind)).toEqual(["user", "assistant", "tool_result", "assistant"]);
    const calling = sourceMessages[1]!;

    const { status, body } = await fork(source, { atMessageId: calling.id });
    expect([status, body.forkedFrom]).toEqual([201, { sessionId: source, messageId: calling.id }]);
    const copied = await store.loadMessages(body.sessionId);
    expect(copied.slice(0, 2)).toEqual(sourceMessages.slice(0, 2).map((m) => ({ ...m, sessionId: body.sessionId })));
    const { id, createdAt, ...closing } = copied[2] as AgentMessage & { createdAt: string };
    expect([copied.length, closing]).toEqual([
      3,
      {
        kind: "tool_result",
        sessionId: body.sessionId,
        parentId: calling.id,
        toolCallId: "tc_1",
        toolName: "write",
        resultText: FORKED_TOOL_RESULT_TEXT,
        error: true,
      },
    ]);
    expect(id).not.toBe(sourceMessages[2]!.id);

    // The fork goes on from there: its request answers the call with that result, nothing made up.
    const requests: { messages: { role: string; content?: unknown; tool_call_id?: string }[] }[] = [];
    useSessionDeps(body.sessionId, {
      modelFetch: async (_i, init) => {
        const request = JSON.parse(String(init?.body));
        requests.push(request);
        return echoAnswer(request);
      },
    });
    await readSse(await prompt(body.sessionId, { text: "go on" }));
    expect(requests[0]!.messages.filter((m) => m.role === "tool")).toEqual([
      { role: "tool", tool_call_id: "tc_1", content: FORKED_TOOL_RESULT_TEXT },
    ]);
    // The source keeps its own result.
    expect(await store.loadMessages(source)).toEqual(sourceMessages);
  });

  it("a fork is listed with the counts of what it copied", async () => {
    const { sessionId } = await sessionWithModel((body) => echoAnswer(body));
    await postJson(`/api/sessions/${sessionId}/fork`, {});
    await readSse(await prompt(sessionId, { text: "one" }));
    const { body } = await fork(sessionId, { title: "listed" });
    const page = (await (await api("/api/sessions?limit=5")).json()) as { items: { id: string; counts: { messages: number } }[] };
    expect(page.items[0]).toMatchObject({ id: body.sessionId, counts: { messages: 2 } });
  });

  it("forking a running session copies its committed records only", async () => {
    const first = gate();
    const { sessionId } = await sessionWithModel(async (body, _n, signal) => {
      await first.wait(signal);
      return echoAnswer(body);
    });
    const running = prompt(sessionId, { text: "in progress" });
    await until(async () => (await store.info(sessionId))!.status === "running", "the run");
    const { status, body } = await fork(sessionId);
    expect(status).toBe(201);
    expect((await store.loadMessages(body.sessionId)).map((m) => m.kind === "user" && m.text)).toEqual(["in progress"]);
    expect((await store.info(body.sessionId))!.status).toBe("idle");
    first.open();
    await readSse(await running);
  });

  it("an unknown atMessageId is 404 message_not_found; the same Idempotency-Key forks once", async () => {
    const { sessionId } = await sessionWithModel((body) => echoAnswer(body));
    await readSse(await prompt(sessionId, { text: "one" }));
    const missing = await fork(sessionId, { atMessageId: "m_nope" });
    expect(missing.status).toBe(404);
    expect(missing.body.error?.code).toBe("message_not_found");
    const a = await fork(sessionId, { title: "f" }, { "idempotency-key": "fork-1" });
    // The source moves on; a repeat answers the fork as it was made (its origin is the older message).
    await readSse(await prompt(sessionId, { text: "two" }));
    const b = await fork(sessionId, { title: "f" }, { "idempotency-key": "fork-1" });
    expect(b).toEqual(a);
    expect(await store.loadMessages(a.body.sessionId)).toHaveLength(2);
    // Deleted, the fork stays deleted when its request is repeated.
    expect((await api(`/api/sessions/${a.body.sessionId}`, { method: "DELETE" })).status).toBe(204);
    const c = await fork(sessionId, { title: "f" }, { "idempotency-key": "fork-1" });
    expect([c.status, c.body.error?.code]).toEqual([404, "session_not_found"]);
    expect((await api(`/api/sessions/${a.body.sessionId}`)).status).toBe(404);
    // Once the source is deleted, a repeat still answers the fork it made; a new key finds no source.
    const other = await fork(sessionId, {}, { "idempotency-key": "fork-2" });
    expect(other.status).toBe(201);
    expect((await api(`/api/sessions/${sessionId}`, { method: "DELETE" })).status).toBe(204);
    expect(await fork(sessionId, {}, { "idempotency-key": "fork-2" })).toEqual(other);
    const fresh = await fork(sessionId, {}, { "idempotency-key": "fork-3" });
    expect([fresh.status, fresh.body.error?.code]).toEqual([404, "session_not_found"]);
  });
});
