import { describe, expect, it } from "vitest";
import { type AgentEvent, type CompactionMessage, safeRunOptions } from "../../src/domain";
import type { FetchLike } from "../../src/model";
import { compactOnDemand } from "../../src/session/session-context";
import { userMessage } from "../helpers/records";
import { chunk, sse, sseResponse } from "../model/helpers";

/** Three user messages of about 40,000 tokens each: more than enough to compact. */
const history = ["u1", "u2", "u3"].map((id, i) => userMessage("s_compact", id, `${id} `.repeat(40_000), i === 0 ? null : `u${i}`));

/** A provider whose summary never comes: the request ends only when it is cancelled. */
const hanging: FetchLike = (_input, init) =>
  new Promise((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));

function compactWith(options: { timeoutMs: number; signal?: AbortSignal }) {
  const events: Pick<AgentEvent, "type">[] = [];
  const result = compactOnDemand(history, {
    config: { apiKey: "sk-test", baseURL: "https://llm.example.test/v1", model: "m", fetch: hanging },
    workspaceId: null,
    command: null,
    log: {
      event: (event) => events.push(event),
      append: () => {
        throw new Error("no compaction record expected");
      },
    },
    ...options,
  });
  return { events, result };
}

describe("a manual compaction that does not finish", () => {
  it("logs compaction_failed run_timeout when its summary outlasts its time, as its answer says", async () => {
    const { events, result } = compactWith({ timeoutMs: 50 });
    expect(await result).toEqual({ ok: false, code: "run_timeout", message: expect.any(String) });
    expect(events).toEqual([
      { type: "compaction_started", reason: "manual" },
      { type: "compaction_failed", code: "run_timeout", message: "the run timed out during the compaction; nothing was compacted" },
    ]);
  });

  it("logs nothing more when its session's deletion cut it off", async () => {
    const deletion = new AbortController();
    const { events, result } = compactWith({ timeoutMs: 60_000, signal: deletion.signal });
    await new Promise((r) => setTimeout(r, 20));
    deletion.abort();
    expect((await result).ok).toBe(false);
    expect(events).toEqual([{ type: "compaction_started", reason: "manual" }]);
  });
});

describe("a manual compaction after a replayed run", () => {
  it("is summarised by the deployment's model, not by the recording (which has no summary for it)", async () => {
    const models: string[] = [];
    const provider: FetchLike = async (_input, init) => {
      models.push((JSON.parse(String(init?.body)) as { model: string }).model);
      return sseResponse(sse([chunk({ content: "## Goal\nthe provider's summary" }), chunk({}, "stop")]));
    };
    const summaries: string[] = [];
    const result = await compactOnDemand(history, {
      config: { apiKey: "sk-test", baseURL: "https://llm.example.test/v1", model: "m", fetch: provider },
      workspaceId: null,
      command: { sessionId: "s_compact", userText: "again", model: "replay:s_recorded", options: safeRunOptions() },
      log: {
        event: () => {},
        append: (record) => {
          summaries.push(record.summary);
          return {
            ...record,
            kind: "compaction",
            id: "m_c",
            sessionId: "s_compact",
            parentId: "u3",
            createdAt: "2026-12-02T00:00:00.000Z",
          } as CompactionMessage;
        },
      },
      timeoutMs: 60_000,
    });
    expect(result).toMatchObject({ ok: true, messageId: "m_c" });
    expect(models).toEqual(["m"]);
    expect(summaries).toEqual(["## Goal\nthe provider's summary"]);
  });
});
