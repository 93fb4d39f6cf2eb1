import { env } from "cloudflare:workers";
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { DurableSessionStore } from "../../src/session/session-store";
import { userMessage } from "../helpers/records";

it("a run left 'running' by a crash is closed with run_interrupted when the object restarts", async () => {
  const store = new DurableSessionStore(env.SESSIONS);
  const { id } = await store.create({});
  await store.appendMessage(id, userMessage(id, "m_u"));
  // Simulate an object that died mid-run: the runs table says running, no instance is executing it.
  await runInDurableObject(store.stub(id), (_instance, state) => {
    state.storage.sql.exec(`INSERT INTO runs (run_id, status, started_at) VALUES ('r_dead', 'running', '2026-11-30T03:00:00.000Z')`);
  });
  await abortAllDurableObjects();

  expect((await store.info(id))!.status).toBe("idle");
  const events = await store.loadEvents(id);
  expect(events.map((e) => [e.type, e.type === "agent_error" ? e.code : "", e.type === "agent_error" ? e.runId : ""])).toEqual([["agent_error", "run_interrupted", "r_dead"]]);
  const messages = await store.loadMessages(id);
  expect(messages.map((m) => [m.kind, m.parentId, m.kind === "assistant" ? m.stopReason : ""])).toEqual([
    ["user", null, ""],
    ["assistant", "m_u", "ERROR"],
  ]);
  const runs = await runInDurableObject(store.stub(id), (_i, state) => state.storage.sql.exec(`SELECT run_id, status, stop_reason FROM runs`).toArray());
  expect(runs).toEqual([{ run_id: "r_dead", status: "finished", stop_reason: "ERROR" }]);
});
