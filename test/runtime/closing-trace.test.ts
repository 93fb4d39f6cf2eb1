import { describe, expect, it } from "vitest";
import { counterIds, type TraceRecord } from "../../src/domain";
import { closingTrace } from "../../src/runtime/run-closing";

const T = "2026-12-02T03:00:00.000Z";
const base = (seq: number, runId = "r_1") => ({ taskId: "s_1", runId, attemptId: runId, writerSeq: seq, createdAt: T });
const input = {
  sessionId: "s_1",
  runId: "r_1",
  code: "run_interrupted" as const,
  message: "the server restarted",
  ids: counterIds(),
  clock: () => Date.parse(T),
};

describe("closingTrace", () => {
  it("observes every action left open, ends the open turn, then the run, all with the code", () => {
    const records = [
      { ...base(1), type: "span_start", spanId: "sp_run", kind: "run", parentSpanId: null, turnId: null, retryOf: null },
      { ...base(2), type: "span_start", spanId: "sp_t1", kind: "turn", parentSpanId: "sp_run", turnId: "t_1", retryOf: null },
      {
        ...base(3),
        type: "action",
        spanId: "sp_t1",
        turnId: "t_1",
        actionId: "a_model",
        actor: "model",
        tool: "model",
        callId: null,
        argsSummary: "",
        reads: [],
        writes: [],
      },
      {
        ...base(4),
        type: "observation",
        spanId: "sp_t1",
        turnId: "t_1",
        actionId: "a_model",
        status: "ok",
        code: null,
        exitCode: null,
        summary: "1 tool call(s)",
        reads: [],
        writes: [],
      },
      {
        ...base(5),
        type: "action",
        spanId: "sp_t1",
        turnId: "t_1",
        actionId: "a_bash",
        actor: "tool",
        tool: "bash",
        callId: "tc_1",
        argsSummary: "sleep",
        reads: [],
        writes: [],
      },
      // Another run's open action is not this run's business.
      {
        ...base(6, "r_2"),
        type: "action",
        spanId: "sp_x",
        turnId: "t_x",
        actionId: "a_other",
        actor: "tool",
        tool: "read",
        callId: "tc_x",
        argsSummary: "",
        reads: [],
        writes: [],
      },
    ] as TraceRecord[];
    const common = { taskId: "s_1", runId: "r_1", attemptId: "r_1", createdAt: T };
    expect(closingTrace(records, input)).toEqual([
      {
        ...common,
        type: "observation",
        spanId: "sp_t1",
        turnId: "t_1",
        actionId: "a_bash",
        status: "error",
        code: "run_interrupted",
        exitCode: null,
        summary: "the server restarted",
        reads: [],
        writes: [],
      },
      { ...common, type: "span_end", spanId: "sp_t1", kind: "turn", turnId: "t_1", status: "error", stopReason: "run_interrupted" },
      { ...common, type: "span_end", spanId: "sp_run", kind: "run", turnId: null, status: "error", stopReason: "run_interrupted" },
    ]);
  });

  it("adds nothing to a run whose trace has ended", () => {
    const records = [
      { ...base(1), type: "span_start", spanId: "sp_run", kind: "run", parentSpanId: null, turnId: null, retryOf: null },
      { ...base(2), type: "span_end", spanId: "sp_run", kind: "run", turnId: null, status: "ok", stopReason: "STOP" },
    ] as TraceRecord[];
    expect(closingTrace(records, input)).toEqual([]);
  });
});
