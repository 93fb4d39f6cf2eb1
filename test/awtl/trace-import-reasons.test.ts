import { describe, expect, it } from "vitest";
import { parseTraceImport } from "../../src/awtl/trace-import";
import { MAX_JSON_DEPTH } from "../../src/domain";

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
});
