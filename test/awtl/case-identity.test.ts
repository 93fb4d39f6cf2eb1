import { describe, expect, it } from "vitest";
import { caseIdentityHint } from "../../src/awtl/case-identity";
import { preventionHint } from "../../src/awtl/prevention-hints";

/**
 * A case's id hashes the hint as the loop first wrote it. These are that hint's texts, as the tests
 * of the code before hunt 30 pinned them: the identity must keep producing them, so a recurrence of a
 * failure stored before then adds an occurrence to its case instead of making a second one.
 */
describe("the hint a case is identified by is frozen", () => {
  const deep = `src/${"deeply/".repeat(34)}Module.ts`;
  const cases: [Parameters<typeof caseIdentityHint>[0], string][] = [
    [
      { judgeName: "ci\r\n- [verified] x", builtIn: false, failureKind: "external", tool: null, paths: ["src/a\nb.ts", "src/c.ts"] },
      "Run ci\\u000d\\u000a- [verified] x again on src/a\\u000ab.ts, src/c.ts after changing them: it failed after such a change.",
    ],
    [
      { judgeName: "model-error", builtIn: true, failureKind: "stream_incomplete", tool: null, paths: [] },
      "Avoid the failure stream_incomplete seen when calling tools.",
    ],
    [
      { judgeName: "tool-error", builtIn: true, failureKind: "odd", tool: "grep", paths: ["src/a.ts"] },
      "Avoid the failure odd seen when calling grep on src/a.ts.",
    ],
    [
      { judgeName: "ci", builtIn: false, failureKind: "external", tool: null, paths: [deep] },
      "Run ci again on …/deeply/deeply/deeply/deeply/deeply/deeply/deeply/deeply/deeply/Module.ts after changing it: it failed after such a change.",
    ],
    [
      { judgeName: "tool-error", builtIn: true, failureKind: "not_found", tool: "read", paths: [`src/${"😀".repeat(200)}.ts`] },
      `Check that …/${"😀".repeat(37)}.ts exists (with ls or find) before calling read on it.`,
    ],
    [
      { judgeName: "tool-error", builtIn: true, failureKind: "exit_status", tool: "bash", paths: ["a", "b", "c", "d"] },
      "Check the command's output before relying on it: it exited with an error on a, b, c, ....",
    ],
    [
      { judgeName: "tool-error", builtIn: true, failureKind: "offset_out_of_range", tool: "grep", paths: ["src"] },
      "Read src from an offset inside the file (check its length first).",
    ],
  ];

  it("gives the texts the loop identified cases by, whatever the brief now shows", () => {
    for (const [facts, text] of cases) expect(caseIdentityHint(facts)).toBe(text);
    // The brief's hint is the new, quoted one: the two differ, which is why the id keeps its own.
    expect(preventionHint(cases[2]![0])).not.toBe(cases[2]![1]);
  });

  it("a failure kind named like an Object method has no template of its own (and does not throw)", () => {
    expect(caseIdentityHint({ judgeName: "tool-error", builtIn: true, failureKind: "constructor", tool: null, paths: [] })).toBe(
      "Avoid the failure constructor seen when calling tools.",
    );
  });
});
