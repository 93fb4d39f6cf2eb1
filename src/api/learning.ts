import { Hono } from "hono";
import { unwrapResult } from "../domain";
import { readJsonBody } from "./body";
import type { AppBindings } from "./context";
import { claimIdempotencyKey } from "./idempotency";
import { requireSession } from "./lookup";
import { JudgementBody } from "./schemas";
import { exportLog } from "./sessions";

/** The failure-learning loop as one session sees it: its trace, judgements on its runs, their attributions. */
export const learningRoutes = new Hono<AppBindings>()
  /** The session's trace records (spans, actions, observations, verdicts, attributions) in `writerSeq` order. */
  .get("/:id/trace", (c) => exportLog(c, "trace"))
  /** Records a verdict; a `fail` is attributed at once. 201 `{judgeResult, attribution}` (attribution null unless fail). */
  .post("/:id/judgements", async (c) => {
    const { store, meta } = await requireSession(c);
    const { requestId, ...body } = await readJsonBody(c, JudgementBody);
    const claimed = await claimIdempotencyKey(c, requestId, ["POST /api/sessions/:id/judgements", meta.id, body], {});
    const { runId, ...verdict } = body;
    const key = claimed ? `${claimed.key}@${claimed.claimedAtMs}` : undefined;
    const result = unwrapResult(
      await store.stub(meta.id).judge(runId, { ...verdict, sourceActionId: verdict.sourceActionId ?? null }, key),
    );
    return c.json(result, 201);
  })
  /** Every attribution of the session, oldest first. */
  .get("/:id/attributions", async (c) => {
    const { store, meta } = await requireSession(c);
    return c.json({ attributions: unwrapResult(await store.stub(meta.id).attributions()) });
  });
