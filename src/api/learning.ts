import { Hono } from "hono";
import { unwrapResult } from "../domain";
import { readJsonBody } from "./body";
import type { AppBindings } from "./context";
import { requireSession } from "./lookup";
import { JudgementBody } from "./schemas";

const NDJSON = { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" };

/** The failure-learning loop as one session sees it: its trace, judgements on its runs, their attributions. */
export const learningRoutes = new Hono<AppBindings>()
  /** The session's trace records (spans, actions, observations, verdicts, attributions) in `writerSeq` order. */
  .get("/:id/trace", async (c) => {
    const { store, meta } = await requireSession(c);
    return new Response(unwrapResult(await store.stub(meta.id).exportJsonl("trace")), { headers: NDJSON });
  })
  /** Records a verdict; a `fail` is attributed at once. 201 `{judgeResult, attribution}` (attribution null unless fail). */
  .post("/:id/judgements", async (c) => {
    const { store, meta } = await requireSession(c);
    const body = await readJsonBody(c, JudgementBody);
    const { runId, ...verdict } = body;
    const result = unwrapResult(await store.stub(meta.id).judge(runId, { ...verdict, sourceActionId: verdict.sourceActionId ?? null }));
    return c.json(result, 201);
  })
  /** Every attribution of the session, oldest first. */
  .get("/:id/attributions", async (c) => {
    const { store, meta } = await requireSession(c);
    return c.json({ attributions: unwrapResult(await store.stub(meta.id).attributions()) });
  });
