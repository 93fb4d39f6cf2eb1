import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TraceRecord } from "../../src/domain";
import { DurableSessionStore } from "../../src/session/session-store";
import { client, model, openSession, prompt, traceOf, uploadWorkspace } from "./harness";

const api = client();

describe("the trace of a run", () => {
  it("spans, one action and one observation per model call and tool call, paths but no contents, in log seq order", async () => {
    const workspaceId = await uploadWorkspace(api);
    const { sessionId } = await openSession(api, {
      workspaceId,
      answers: [
        model.tools(
          { id: "c_read", name: "read", args: { path: "src/math.ts" } },
          { id: "c_miss", name: "read", args: { path: "src/nope.ts" } },
        ),
        model.tools({ id: "c_edit", name: "edit", args: { path: "src/math.ts", oldText: "a + b", newText: "b + a" } }),
        model.text("Swapped."),
      ],
    });
    const { runId } = await prompt(api, sessionId, { text: "swap the operands in src/math.ts", allowWrite: true });
    const trace = await traceOf(api, sessionId);
    for (const record of trace) expect(TraceRecord.parse(record)).toEqual(record);
    expect(
      trace.map((r) => [
        r.type,
        "kind" in r ? r.kind : "actor" in r ? r.actor : "status" in r ? r.status : r.type === "judge_result" ? r.judgeName : "",
      ]),
    ).toEqual([
      ["span_start", "run"],
      ["span_start", "turn"],
      ["action", "model"],
      ["observation", "ok"],
      ["action", "tool"],
      ["observation", "ok"],
      ["action", "tool"],
      ["observation", "error"],
      ["judge_result", "tool-error"],
      ["attribution", ""],
      ["span_end", "turn"],
      ["span_start", "turn"],
      ["action", "model"],
      ["observation", "ok"],
      ["action", "tool"],
      ["observation", "ok"],
      ["span_end", "turn"],
      ["span_start", "turn"],
      ["action", "model"],
      ["observation", "ok"],
      ["span_end", "turn"],
      ["span_end", "run"],
    ]);
    // The action holds what the arguments name (a plan); the observation what the tool was seen to touch.
    expect(
      trace.filter((r) => r.type === "observation" && r.writes.length > 0).map((r) => r.type === "observation" && [r.reads, r.writes]),
    ).toEqual([[["src/math.ts"], ["src/math.ts"]]]);
    // Every record names the task (session), run and attempt; writerSeq is the record's seq in the session's log.
    expect(new Set(trace.map((r) => `${r.taskId} ${r.runId} ${r.attemptId}`))).toEqual(new Set([`${sessionId} ${runId} ${runId}`]));
    const seqs = trace.map((r) => r.writerSeq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    // One gap-free seq across the three streams: messages, events and trace records share it.
    const eventSeqs = (await new DurableSessionStore(env).loadEventsAfter(sessionId, 0)).map((e) => e.seq);
    const messages = (await (await api(`/api/sessions/${sessionId}/messages`)).text()).split("\n").filter(Boolean).length;
    const shared = new Set([...eventSeqs, ...seqs]);
    expect(shared.size).toBe(eventSeqs.length + seqs.length);
    expect(Math.max(...shared)).toBe(eventSeqs.length + seqs.length + messages);

    const actions = trace.filter((r) => r.type === "action");
    expect(actions.map((a) => [a.tool, a.callId, a.reads, a.writes])).toEqual([
      ["model", null, [], []],
      ["read", "c_read", ["src/math.ts"], []],
      ["read", "c_miss", ["src/nope.ts"], []],
      ["model", null, [], []],
      ["edit", "c_edit", [], ["src/math.ts"]],
      ["model", null, [], []],
    ]);
    const failed = trace.find((r) => r.type === "observation" && r.status === "error");
    expect(failed).toMatchObject({ code: "not_found", exitCode: null });
    // Summaries only: the file's text never reaches the trace.
    expect(JSON.stringify(trace)).not.toContain("return a + b");
  });

  it("a failed call on the workspace root is judged with no artifact and the run goes on", async () => {
    const workspaceId = await uploadWorkspace(api);
    const { sessionId } = await openSession(api, {
      workspaceId,
      answers: [
        model.tools(
          { id: "c_root", name: "read", args: { path: "." } },
          { id: "c_dot", name: "write", args: { path: "a/..", content: "x" } },
        ),
        model.text("That is a directory."),
      ],
    });
    const { frames } = await prompt(api, sessionId, { text: "read the root", allowWrite: true });
    expect(frames.at(-1)!.data).toMatchObject({ type: "agent_completed", stopReason: "STOP" });
    const finished = frames.filter((f) => f.data.type === "tool_call_finished").map((f) => [f.data.callId, f.data.error]);
    expect(finished).toEqual([
      ["c_root", true],
      ["c_dot", true],
    ]);
    const judged = (await traceOf(api, sessionId)).filter((r) => r.type === "judge_result");
    expect(judged.map((r) => [r.judgeName, r.failureKind, r.artifactRefs])).toEqual([
      ["tool-error", "is_directory", []],
      ["tool-error", "is_directory", []],
    ]);
  });

  it("is served as NDJSON, flushed to R2 as sessions/{sid}/trace/{startSeq}.jsonl, and reads back the same", async () => {
    const workspaceId = await uploadWorkspace(api);
    const { sessionId } = await openSession(api, {
      workspaceId,
      answers: [model.tools({ id: "c1", name: "ls", args: {} }), model.text("ok")],
    });
    await prompt(api, sessionId, { text: "list" });
    const before = await api(`/api/sessions/${sessionId}/trace`);
    expect(before.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    const text = await before.text();
    const first = JSON.parse(text.split("\n")[0]!) as TraceRecord;

    const store = new DurableSessionStore(env);
    expect((await store.stub(sessionId).flush()).ok).toBe(true);
    const listed = await env.STORE.list({ prefix: `sessions/${sessionId}/trace/` });
    expect(listed.objects.map((o) => o.key)).toEqual([`sessions/${sessionId}/trace/${String(first.writerSeq).padStart(12, "0")}.jsonl`]);
    expect(await (await env.STORE.get(listed.objects[0]!.key))!.text()).toBe(text);
    expect(await (await api(`/api/sessions/${sessionId}/trace`)).text()).toBe(text);
  });

  it("a session without runs has an empty trace; an unknown session is 404", async () => {
    const { sessionId } = await openSession(api);
    expect(await (await api(`/api/sessions/${sessionId}/trace`)).text()).toBe("");
    const missing = await api("/api/sessions/s_nope/trace");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("session_not_found");
  });
});
