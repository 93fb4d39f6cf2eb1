import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ProjectRpc } from "../../src/awtl/project-api";
import { LearningLoop, type LearningLoopDeps } from "../../src/session/learning-loop";

type Record = (ref: unknown, attribution: { attributionId: string }) => Promise<void>;

/** A loop over the object's SQLite whose project answers `recordAttribution` as given. */
function loopOver(sql: SqlStorage, recordAttribution: Record): LearningLoop {
  const deps = {
    sessionId: "s_outbox",
    sql,
    ids: { next: (prefix: string) => `${prefix}_x` },
    clock: () => 0,
    project: () => ({ tenant: null, projectId: "p_default" }),
    projects: { getByName: () => ({ recordAttribution }) } as unknown as DurableObjectNamespace<ProjectRpc>,
    append: () => 0,
    nextSeq: () => 0,
    isReplay: () => false,
    readTrace: async () => [],
    waitUntil: () => {},
  } as unknown as LearningLoopDeps;
  return new LearningLoop(deps);
}

/** A loop whose project counts deliveries, each taking a turn of the event loop. */
function loopWithCountingProject(sql: SqlStorage): { loop: LearningLoop; delivered: string[] } {
  const delivered: string[] = [];
  const loop = loopOver(sql, async (_ref, attribution) => {
    await new Promise((resolve) => setTimeout(resolve, 0));
    delivered.push(attribution.attributionId);
  });
  return { loop, delivered };
}

const queue = (sql: SqlStorage, id: string) =>
  sql.exec(`INSERT INTO case_outbox (attribution_id, attribution, found) VALUES (?, ?, NULL)`, id, JSON.stringify({ attributionId: id }));

describe("the case outbox", () => {
  it("reads the outbox again for a case queued after a delivery's last read, while it settles", async () => {
    const result = await runInDurableObject(env.SESSIONS.getByName("s_case_outbox_settling"), async (_o, state) => {
      const sql = state.storage.sql;
      const delivered: string[] = [];
      let answerFirst = () => {};
      // A plain promise, so the delivery resumes in the very next microtask after the answer.
      const loop = loopOver(sql, (_ref, attribution) => {
        delivered.push(attribution.attributionId);
        if (attribution.attributionId !== "at_first") return Promise.resolve();
        return new Promise<void>((resolve) => {
          answerFirst = resolve;
        });
      });
      queue(sql, "at_first");
      const first = loop.deliver();
      await new Promise((resolve) => setTimeout(resolve, 0));
      answerFirst();
      // Runs after the delivery has read the outbox for the last time, before its promise settles.
      await Promise.resolve().then(() => {
        queue(sql, "at_second");
        return loop.deliver();
      });
      await first;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return { delivered, left: loop.pending() };
    });
    expect(result).toEqual({ delivered: ["at_first", "at_second"], left: 0 });
  });

  it("hands each queued case to the project once, however many deliveries a burst of failures starts", async () => {
    const result = await runInDurableObject(env.SESSIONS.getByName("s_case_outbox_burst"), async (_o, state) => {
      const sql = state.storage.sql;
      const { loop, delivered } = loopWithCountingProject(sql);
      // As a burst of failed tool calls does: queue one, start a delivery, 200 times in one step.
      const deliveries: Promise<void>[] = [];
      for (let i = 0; i < 200; i++) {
        queue(sql, `at_${String(i).padStart(3, "0")}`);
        deliveries.push(loop.deliver());
      }
      await Promise.all(deliveries);
      // One queued while a delivery is under way goes out with it.
      queue(sql, "at_late_1");
      const running = loop.deliver();
      queue(sql, "at_late_2");
      await loop.deliver();
      await running;
      return { delivered, left: loop.pending() };
    });
    // Every deliver() used to send the whole outbox: 20,100 calls for 200 cases.
    expect(result.delivered.length).toBe(202);
    expect(new Set(result.delivered).size).toBe(202);
    expect(result.delivered.slice(0, 3)).toEqual(["at_000", "at_001", "at_002"]);
    expect(result.delivered.slice(-2)).toEqual(["at_late_1", "at_late_2"]);
    expect(result.left).toBe(0);
  });
});
