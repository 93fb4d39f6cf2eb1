import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { forgetExpiredKeys, KEYED_ROW_LIFETIME_MS, prepareKeyedRows } from "../../src/session/keyed-rows";
import { echoAnswer, postJson, prompt, sessionWithModel, store } from "../conversation/helpers";
import { readSse } from "../helpers/sse-client";
import { useSessionDeps } from "../helpers/test-worker";

type Table = "prompt_requests" | "judge_requests";

/** The client keys of a table's rows (the session stores `key@claimedAtMs`), oldest first. */
const keysIn = (sessionId: string, table: Table) =>
  runInDurableObject(store.stub(sessionId), (_o, state) =>
    state.storage.sql
      .exec<{ key: string }>(`SELECT key FROM ${table} ORDER BY stored_at_ms, key`)
      .toArray()
      .map((r) => r.key.slice(0, r.key.lastIndexOf("@"))),
  );

describe("rows kept per idempotency key", () => {
  it("a keyed prompt or judgement deletes the rows of keys the tenant has forgotten, and keeps the rest", async () => {
    const { sessionId } = await sessionWithModel((body) => echoAnswer(body));
    const t0 = Date.now();
    let now = t0;
    useSessionDeps(sessionId, { clock: () => now });
    const send = async (key: string) => {
      const { frames } = await readSse(await prompt(sessionId, { text: key }, { "idempotency-key": key }));
      return String(frames[0]!.data.runId);
    };
    const judge = async (key: string, runId: string) =>
      (
        await postJson(
          `/api/sessions/${sessionId}/judgements`,
          { runId, judgeName: "ci", result: "pass", artifactRefs: [] },
          { "idempotency-key": key },
        )
      ).status;

    const oldRun = await send("k-old");
    expect(await judge("j-old", oldRun)).toBe(201);
    now = t0 + KEYED_ROW_LIFETIME_MS - 1;
    const midRun = await send("k-mid");
    expect(await judge("j-mid", midRun)).toBe(201);
    expect(await keysIn(sessionId, "prompt_requests")).toEqual(["k-old", "k-mid"]);
    expect(await keysIn(sessionId, "judge_requests")).toEqual(["j-old", "j-mid"]);

    now = t0 + KEYED_ROW_LIFETIME_MS;
    const newRun = await send("k-new");
    expect(await judge("j-new", newRun)).toBe(201);
    expect(await keysIn(sessionId, "prompt_requests")).toEqual(["k-mid", "k-new"]);
    expect(await keysIn(sessionId, "judge_requests")).toEqual(["j-mid", "j-new"]);
    // A key the tenant still holds is still answered from its row: the same run, no new one.
    expect(await send("k-mid")).toBe(midRun);
    expect(new Set([oldRun, midRun, newRun]).size).toBe(3);
  });

  it("a table made before the column gets it, its rows counted from the upgrade", async () => {
    const { sessionId } = await sessionWithModel((body) => echoAnswer(body));
    await readSse(await prompt(sessionId, { text: "wake" }));
    const T = 1_800_000_000_000;
    const left = await runInDurableObject(store.stub(sessionId), (_o, state) => {
      const sql = state.storage.sql;
      sql.exec(`DROP TABLE prompt_requests`);
      sql.exec(`CREATE TABLE prompt_requests (
        key TEXT PRIMARY KEY, run_id TEXT NOT NULL, after_seq INTEGER NOT NULL, skip_from_seq INTEGER, steer_message_id TEXT
      )`);
      sql.exec(`INSERT INTO prompt_requests (key, run_id, after_seq) VALUES ('a@1', 'r_1', 1), ('b@2', 'r_2', 5)`);
      prepareKeyedRows(sql, "prompt_requests", T);
      prepareKeyedRows(sql, "prompt_requests", T + 5); // again, as every later start does: nothing changes
      const rows = () => sql.exec(`SELECT key, stored_at_ms FROM prompt_requests ORDER BY key`).toArray();
      const upgraded = rows();
      const index = sql
        .exec(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'prompt_requests' AND name LIKE '%by_age'`)
        .toArray();
      forgetExpiredKeys(sql, "prompt_requests", T + KEYED_ROW_LIFETIME_MS - 1);
      const kept = rows().length;
      forgetExpiredKeys(sql, "prompt_requests", T + KEYED_ROW_LIFETIME_MS);
      return { upgraded, index, kept, after: rows().length };
    });
    expect(left).toEqual({
      upgraded: [
        { key: "a@1", stored_at_ms: T },
        { key: "b@2", stored_at_ms: T },
      ],
      index: [{ name: "prompt_requests_by_age" }],
      kept: 2,
      after: 0,
    });
  });
});
