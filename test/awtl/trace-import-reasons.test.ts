import { describe, expect, it } from "vitest";
import { parseTraceImport } from "../../src/awtl/trace-import";
import {
  MAX_ATTRIBUTION_ACTION_IDS,
  MAX_CASE_MEMORY_READS,
  MAX_EVIDENCE_REF_CHARS,
  MAX_IMPORTED_TRACE_RECORD_BYTES,
  MAX_JSON_DEPTH,
  MAX_TRACE_ARTIFACT_REFS,
  MAX_TRACE_ID_CHARS,
} from "../../src/domain";

const SECRET = "sk-proj-Zq8Secret4Value9Xy";
const body = (lines: string[]) => new TextEncoder().encode(lines.join("\n"));
const ids = { projectTask: "import:i_1", now: "2026-12-01T00:00:00.000Z" };

describe("quarantine reasons of a trace import", () => {
  it("say where a line is not JSON, never what it holds", async () => {
    const { quarantined } = await parseTraceImport(
      body([
        `{"type":"action","tool":${SECRET}}`,
        `DB_PASSWORD=${SECRET}`,
        `{"type":"action","runId":"${SECRET}`,
        `{"type":"action","runId":"r","actionId":"a"} ${SECRET}`,
      ]),
      ids,
    );
    expect(quarantined.map((q) => [q.line, q.reason])).toEqual([
      [1, "malformed JSON"],
      [2, "malformed JSON"],
      [3, "malformed JSON (at character 53)"],
      [4, "malformed JSON (at character 46)"],
    ]);
  });

  it("refuse a line nested past the JSON depth limit before parsing it", async () => {
    const nested = (levels: number) => `{"type":"action","runId":"r","actionId":"a","extra":${"[".repeat(levels)}${"]".repeat(levels)}}`;
    // 64 levels with the line's object: taken; 65 and 4,000,001: refused unparsed.
    const { quarantined } = await parseTraceImport(body([nested(MAX_JSON_DEPTH - 1), nested(MAX_JSON_DEPTH), nested(4_000_000)]), ids);
    expect(quarantined.map((q) => [q.line, q.reason])).toEqual([
      [2, `arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels`],
      [3, `arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels`],
    ]);
  });

  it("name fields and what they need, never the values or unknown field names of the line", async () => {
    const attribution = {
      type: "attribution",
      taskId: "t",
      runId: "r",
      attemptId: "r",
      writerSeq: 1,
      createdAt: ids.now,
      attributionId: "at_1",
      failureEventId: "j_1",
      failureTurnId: null,
      judgeName: "ci",
      failureKind: "test_failed",
      classification: "agent",
      sourceActionIds: [],
      verifierActionId: null,
      touchedActionIds: [],
      memoryReadNodeIds: [],
      artifactRefs: [],
      evidenceRefs: [],
      rule: "none",
      caseId: null,
      [SECRET]: 1,
    };
    const { quarantined } = await parseTraceImport(
      body([
        JSON.stringify(attribution),
        JSON.stringify({ type: SECRET, runId: "r" }),
        JSON.stringify({ type: "observation", runId: "r", status: SECRET }),
        JSON.stringify({ type: "action", runId: 7, actionId: SECRET.repeat(30) }),
        JSON.stringify({ type: "judge_result", runId: "r", judgeName: `${SECRET}\n`, result: "fail", artifactRefs: [`../${SECRET}`] }),
        JSON.stringify([SECRET]),
        JSON.stringify(SECRET),
      ]),
      ids,
    );
    expect(quarantined).toHaveLength(7);
    for (const { reason } of quarantined) expect(reason).not.toMatch(/sk-proj|Zq8|Secret/);
    expect(quarantined[0]!.reason).toBe("1 unknown field");
  });

  // Hunt 53: a 2.2 MB taskId was stored as given, and its row (or its case's, which names it twice) failed the whole import.
  it(`cap taskId and attemptId at ${MAX_TRACE_ID_CHARS} characters like every id; left out, null or empty they fall back`, async () => {
    const line = (extra: Record<string, unknown>) => JSON.stringify({ type: "span_start", runId: "r", ...extra });
    const long = "t".repeat(MAX_TRACE_ID_CHARS + 1);
    const { records, quarantined } = await parseTraceImport(
      body([
        line({ taskId: long }),
        line({ attempt_id: "a".repeat(2_200_000) }),
        line({ taskId: 7 }),
        line({ attemptId: ["a"] }),
        line({ taskId: "t".repeat(MAX_TRACE_ID_CHARS), attemptId: "a".repeat(MAX_TRACE_ID_CHARS) }),
        line({ taskId: "", attemptId: null }),
        line({}),
      ]),
      ids,
    );
    expect(quarantined.map((q) => [q.line, q.reason])).toEqual([
      [1, `taskId: Too big: expected string to have <=${MAX_TRACE_ID_CHARS} characters`],
      [2, `attemptId: Too big: expected string to have <=${MAX_TRACE_ID_CHARS} characters`],
      [3, "taskId: Invalid input: expected string, received number"],
      [4, "attemptId: Invalid input: expected string, received array"],
    ]);
    expect(records.map(({ line, record }) => [line, record.taskId.length, record.attemptId.length, record.writerSeq])).toEqual([
      [5, MAX_TRACE_ID_CHARS, MAX_TRACE_ID_CHARS, 1],
      [6, ids.projectTask.length, 1, 2],
      [7, ids.projectTask.length, 1, 3],
    ]);
  });

  it("hold an imported attribution to the bounds the harness's own obey", async () => {
    const attribution = {
      type: "attribution",
      taskId: "s_1",
      runId: "r",
      attemptId: "r",
      writerSeq: 1,
      createdAt: ids.now,
      attributionId: "at_1",
      failureEventId: "j_1",
      failureTurnId: null,
      judgeName: "ci",
      failureKind: "external",
      classification: "agent",
      sourceActionIds: ["a_1"],
      verifierActionId: null,
      touchedActionIds: [],
      memoryReadNodeIds: [],
      artifactRefs: ["src/a.ts"],
      evidenceRefs: ["judge:ci"],
      rule: "given",
      caseId: null,
    };
    const ids_ = (n: number, width = 8) => Array.from({ length: n }, (_, i) => `a_${String(i).padStart(width, "0")}`);
    const variants: Record<string, unknown>[] = [
      // At every bound: kept.
      {
        touchedActionIds: ids_(MAX_ATTRIBUTION_ACTION_IDS),
        sourceActionIds: ids_(MAX_ATTRIBUTION_ACTION_IDS),
        memoryReadNodeIds: ids_(MAX_CASE_MEMORY_READS, MAX_TRACE_ID_CHARS - 2),
        artifactRefs: Array.from({ length: MAX_TRACE_ARTIFACT_REFS }, (_, i) => `src/${i}.ts`),
        evidenceRefs: ["e".repeat(MAX_EVIDENCE_REF_CHARS)],
        taskId: "s".repeat(MAX_TRACE_ID_CHARS),
      },
      { touchedActionIds: ids_(MAX_ATTRIBUTION_ACTION_IDS + 1) },
      { sourceActionIds: ids_(MAX_ATTRIBUTION_ACTION_IDS + 1) },
      { memoryReadNodeIds: ids_(MAX_CASE_MEMORY_READS + 1) },
      { memoryReadNodeIds: ["m".repeat(MAX_TRACE_ID_CHARS + 1)] },
      { artifactRefs: Array.from({ length: MAX_TRACE_ARTIFACT_REFS + 1 }, (_, i) => `src/${i}.ts`) },
      { artifactRefs: [`src/${"x".repeat(4096)}`] },
      { evidenceRefs: Array.from({ length: 21 }, (_, i) => `e${i}`) },
      { evidenceRefs: ["e".repeat(MAX_EVIDENCE_REF_CHARS + 1)] },
      { taskId: "s".repeat(2_200_000) },
      { judgeName: "j".repeat(MAX_TRACE_ID_CHARS + 1), failureKind: "k".repeat(101) },
    ];
    const { records, quarantined } = await parseTraceImport(body(variants.map((v) => JSON.stringify({ ...attribution, ...v }))), ids);
    expect(records.map((r) => r.line)).toEqual([1]);
    expect(quarantined.map((q) => [q.line, q.reason])).toEqual([
      [2, `touchedActionIds: Too big: expected array to have <=${MAX_ATTRIBUTION_ACTION_IDS} items`],
      [3, `sourceActionIds: Too big: expected array to have <=${MAX_ATTRIBUTION_ACTION_IDS} items`],
      [4, `memoryReadNodeIds: Too big: expected array to have <=${MAX_CASE_MEMORY_READS} items`],
      [5, `memoryReadNodeIds.0: Too big: expected string to have <=${MAX_TRACE_ID_CHARS} characters`],
      [6, `artifactRefs: Too big: expected array to have <=${MAX_TRACE_ARTIFACT_REFS} items`],
      [7, "artifactRefs.0: Too big: expected string to have <=4096 characters"],
      [8, "evidenceRefs: Too big: expected array to have <=20 items"],
      [9, `evidenceRefs.0: Too big: expected string to have <=${MAX_EVIDENCE_REF_CHARS} characters`],
      [10, `taskId: Too big: expected string to have <=${MAX_TRACE_ID_CHARS} characters`],
      [
        11,
        `judgeName: Too big: expected string to have <=${MAX_TRACE_ID_CHARS} characters; failureKind: Too big: expected string to have <=100 characters`,
      ],
    ]);
  });

  it(`quarantine a line whose record, normalised, passes ${MAX_IMPORTED_TRACE_RECORD_BYTES} bytes of JSON; one at the limit is kept`, async () => {
    // An action with 200 reads and 200 writes of long paths: each field within its limit, the record not.
    const action = (last: number) => {
      const paths = Array.from({ length: 200 }, (_, i) => `src/${String(i).padStart(3, "0")}/${"p".repeat(2612)}`);
      return { type: "action", runId: "r", actionId: "a", tool: "write", reads: paths, writes: [...paths.slice(0, 199), "w".repeat(last)] };
    };
    // The record as it is stored: the import fills in the rest, then marks it imported.
    const stored = (line: ReturnType<typeof action>, writerSeq: number) =>
      JSON.stringify({
        type: "action",
        taskId: ids.projectTask,
        runId: "r",
        attemptId: "r",
        writerSeq,
        createdAt: ids.now,
        spanId: "imported-r",
        turnId: "imported-r",
        actionId: "a",
        actor: "tool",
        tool: "write",
        callId: null,
        argsSummary: "",
        reads: line.reads,
        writes: line.writes,
        imported: true,
      }).length;
    const fits = action(1);
    const last = 1 + MAX_IMPORTED_TRACE_RECORD_BYTES - stored(fits, 1);
    const atLimit = action(last);
    const over = action(last + 1);
    expect([stored(atLimit, 1), stored(over, 2)]).toEqual([MAX_IMPORTED_TRACE_RECORD_BYTES, MAX_IMPORTED_TRACE_RECORD_BYTES + 1]);
    const { records, quarantined } = await parseTraceImport(body([JSON.stringify(atLimit), JSON.stringify(over), span()]), ids);
    expect(quarantined.map((q) => [q.line, q.reason])).toEqual([
      [2, "the record takes 1,048,577 bytes of JSON, over the 1,048,576 one record may take"],
    ]);
    // The refused line takes no place among those kept: the next one is the second.
    expect(records.map((r) => [r.line, r.record.writerSeq])).toEqual([
      [1, 1],
      [3, 2],
    ]);
  });
});

const span = () => JSON.stringify({ type: "span_start", runId: "r" });
