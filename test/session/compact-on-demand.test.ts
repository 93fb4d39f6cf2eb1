import { describe, expect, it } from "vitest";
import { type AgentEvent, type AgentMessage, type CompactionMessage, safeRunOptions } from "../../src/domain";
import type { FetchLike } from "../../src/model";
import { compactOnDemand } from "../../src/session/session-context";
import { userMessage } from "../helpers/records";
import { chunk, sse, sseResponse } from "../model/helpers";

/** Three user messages of about 40,000 tokens each: more than enough to compact. */
const history = ["u1", "u2", "u3"].map((id, i) => userMessage("s_compact", id, `${id} `.repeat(40_000), i === 0 ? null : `u${i}`));

/** A provider whose summary never comes: the request ends only when it is cancelled. */
const hanging: FetchLike = (_input, init) =>
  new Promise((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));

function compactWith(options: { timeoutMs: number; signal?: AbortSignal; abortedByClient?: () => boolean }) {
  const events: Pick<AgentEvent, "type">[] = [];
  const result = compactOnDemand(history, {
    config: { apiKey: "sk-test", baseURL: "https://llm.example.test/v1", model: "m", fetch: hanging },
    workspaceId: null,
    command: null,
    loadRecording: async () => [],
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
      { type: "compaction_failed", code: "run_timeout", message: "the compaction timed out; nothing was compacted" },
    ]);
  });

  it("logs compaction_failed run_aborted when its client aborted it (POST .../abort), and answers run_aborted", async () => {
    const abort = new AbortController();
    const { events, result } = compactWith({ timeoutMs: 60_000, signal: abort.signal, abortedByClient: () => true });
    await new Promise((r) => setTimeout(r, 20));
    abort.abort();
    expect(await result).toEqual({ ok: false, code: "run_aborted", message: expect.any(String) });
    expect(events).toEqual([
      { type: "compaction_started", reason: "manual" },
      { type: "compaction_failed", code: "run_aborted", message: "the compaction was aborted; nothing was compacted" },
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
  const T = "2026-12-02T00:00:00.000Z";
  /** A recording that compacted before its first assistant turn (where this history is). */
  const recording = [
    userMessage("s_recorded", "r1", "first", null),
    {
      kind: "compaction",
      id: "r2",
      sessionId: "s_recorded",
      parentId: "r1",
      createdAt: T,
      summary: "## Goal\nthe RECORDED summary",
      firstKeptMessageId: "r1",
      tokensBefore: 9,
      tokensAfter: 3,
    },
  ] as AgentMessage[];

  async function compactAfterReplay(recorded: AgentMessage[]) {
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
      loadRecording: async () => recorded,
      log: {
        event: () => {},
        append: (record) => {
          summaries.push(record.summary);
          return { ...record, id: "m_c", sessionId: "s_compact", parentId: "u3", createdAt: T } as CompactionMessage;
        },
      },
      timeoutMs: 60_000,
    });
    return { result, models, summaries };
  }

  it("plays back the recording's summary where the recording compacted at this very point", async () => {
    const { result, models, summaries } = await compactAfterReplay(recording);
    expect(result).toMatchObject({ ok: true, messageId: "m_c" });
    expect(models).toEqual([]);
    expect(summaries).toEqual(["## Goal\nthe RECORDED summary"]);
  });

  it("is summarised by the deployment's model anywhere else (a replay has no summary to give there)", async () => {
    // The recording compacted after its first assistant turn; this history has none.
    const answer = { kind: "assistant", id: "r1a", sessionId: "s_recorded", parentId: "r1", createdAt: T, text: "a", stopReason: "STOP" };
    const { result, models, summaries } = await compactAfterReplay([
      recording[0]!,
      answer as AgentMessage,
      { ...recording[1]!, parentId: "r1a" },
    ]);
    expect(result).toMatchObject({ ok: true, messageId: "m_c" });
    expect(models).toEqual(["m"]);
    expect(summaries).toEqual(["## Goal\nthe provider's summary"]);
  });
});
