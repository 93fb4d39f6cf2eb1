import { Hono } from "hono";
import { DEFAULT_ATTRIBUTION_PAGE, unwrapResult } from "../domain";
import { withoutEndMark } from "../workspace/streams";
import { readCursor, readJsonBody, readQuery } from "./body";
import type { AppBindings } from "./context";
import { claimIdempotencyKey } from "./idempotency";
import { requireSession } from "./lookup";
import { AttributionListQuery, JudgementBody } from "./schemas";
import { brokenOff, exportLog } from "./sessions";

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
  /**
   * `?limit=&cursor=` -> `{attributions, nextCursor}`: the session's attributions, oldest first, a page
   * at a time (bounded in bytes too: an attribution can be large). The cursor is the seq of a page's
   * last attribution, so one recorded meanwhile shows on a later page, and none is skipped or repeated.
   */
  .get("/:id/attributions", async (c) => {
    const { store, meta } = await requireSession(c);
    const query = readQuery(c, AttributionListQuery);
    const after = readCursor(query.cursor);
    const page = unwrapResult(await store.stub(meta.id).attributionsPage(after?.position ?? 0, query.limit ?? DEFAULT_ATTRIBUTION_PAGE));
    return new Response(withoutEndMark(page, brokenOff(c, meta.id)), { headers: { "content-type": "application/json" } });
  });
