import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { counterIds, MAX_MODEL_OUTPUT_CHARS } from "../../src/domain";
import { DurableSessionStore } from "../../src/session/session-store";
import { readSse } from "../helpers/sse-client";
import { useSessionDeps } from "../helpers/test-worker";
import { chunk, sse, sseResponse } from "../model/helpers";

const store = new DurableSessionStore(env);

/** A session whose model answers the k-th request with `bodies[k]` (the last one repeats). */
async function sessionAnswering(...bodies: (() => string)[]) {
  const { id } = await store.create({});
  let calls = 0;
  useSessionDeps(id, { ids: counterIds(), modelFetch: async () => sseResponse(bodies[Math.min(calls++, bodies.length - 1)]!()) });
  return id;
}

async function prompt(id: string) {
  const res = await exports.default.fetch(
    new Request(`http://localhost/api/sessions/${id}/messages/stream`, {
      method: "POST",
      body: JSON.stringify({ text: "go" }),
      headers: { "content-type": "application/json" },
    }),
  );
  return readSse(res);
}

/** `total` characters of answer text in deltas of `size`, then a normal end. */
function longAnswer(total: number, size: number): string {
  const chunks: unknown[] = [];
  for (let sent = 0; sent < total; sent += size) chunks.push(chunk({ content: "x".repeat(Math.min(size, total - sent)) }));
  return sse([...chunks, chunk({}, "stop")]);
}

describe("large model output", () => {
  it("a 2 MB answer is stored in full and the run completes", async () => {
    const id = await sessionAnswering(() => longAnswer(2_000_000, 64 * 1024));
    const { frames } = await prompt(id);
    expect(frames.at(-1)!.data).toMatchObject({ type: "agent_completed", stopReason: "STOP" });
    const streamed = frames
      .filter((f) => f.data.type === "assistant_delta")
      .map((f) => f.data.text as string)
      .join("");
    expect(streamed.length).toBe(2_000_000);
    const answer = (await store.loadMessages(id))[1]!;
    expect(answer).toMatchObject({ kind: "assistant", stopReason: "STOP" });
    expect(answer.kind === "assistant" && answer.text.length).toBe(2_000_000);
  });

  it("a write call whose arguments carry a 3 MB file is stored in full", async () => {
    const content = "y".repeat(3_000_000);
    const call = {
      index: 0,
      id: "tc_big",
      type: "function",
      function: { name: "write", arguments: JSON.stringify({ path: "big.txt", content }) },
    };
    const id = await sessionAnswering(
      () => sse([chunk({ tool_calls: [call] }), chunk({}, "tool_calls")]),
      () => sse([chunk({ content: "done" }), chunk({}, "stop")]),
    );
    const { frames } = await prompt(id);
    // No workspace: the call is denied, but the model's request is recorded as sent.
    expect(frames.map((f) => f.data.type)).toContain("tool_call_denied");
    const assistant = (await store.loadMessages(id))[1]!;
    expect(assistant.kind === "assistant" && assistant.toolCalls?.[0]?.arguments).toEqual({ path: "big.txt", content });
  });

  it("an answer past MAX_MODEL_OUTPUT_CHARS ends with agent_error output_too_large and stop reason LENGTH, keeping the text before the cut", async () => {
    const id = await sessionAnswering(() => longAnswer(MAX_MODEL_OUTPUT_CHARS + 200_000, 100_000));
    const { frames } = await prompt(id);
    const types = frames.map((f) => f.data.type);
    expect(types.slice(-2)).toEqual(["assistant_completed", "agent_error"]);
    expect(frames.at(-2)!.data).toMatchObject({ stopReason: "LENGTH" });
    expect(frames.at(-1)!.data).toMatchObject({ code: "output_too_large" });
    const answer = (await store.loadMessages(id))[1]!;
    expect(answer).toMatchObject({ kind: "assistant", stopReason: "LENGTH" });
    // Deltas of 100,000: the 42nd would pass 4 MiB (4,194,304), so 41 are kept.
    expect(answer.kind === "assistant" && answer.text.length).toBe(4_100_000);
  });
});
