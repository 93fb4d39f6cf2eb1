import { Hono } from "hono";
import { DEFAULT_PROJECT_ID, type ProjectRef, type ProjectRpc, projectObjectName } from "../awtl/project-api";
import {
  DEFAULT_CASE_PAGE,
  DEFAULT_QUARANTINE_PAGE,
  encodeCursor,
  HarnessError,
  idForm,
  isId,
  MAX_TRACE_IMPORT_BYTES,
  randomIds,
  sha256Hex,
  unwrapResult,
} from "../domain";
import { logLine } from "../log";
import { replayCase } from "../session/case-replay";
import { withoutEndMark } from "../workspace/streams";
import { pacedUpload } from "../workspace/upload-pace";
import { readCursor, readJsonBody, readQuery, readStreamBytes, refuseDeclaredLengthOver } from "./body";
import type { AppBindings, AppContext } from "./context";
import { claimIdempotencyKey, idempotencyKeyOf } from "./idempotency";
import { sessionStore } from "./lookup";
import { JSONL_MEDIA_TYPES, requestBody } from "./request-body";
import { ApproveBody, CaseListQuery, EmptyBody, PromoteBody, QuarantineListQuery } from "./schemas";
import { inUploadSlot } from "./upload-slot";

/** Media types a trace import is taken in (a cross-site form cannot send these without a preflight). */
const JSONL_TYPES: ReadonlySet<string> = new Set(JSONL_MEDIA_TYPES);

/**
 * A project's side of the failure-learning loop: failed-turn cases, their replays and approvals,
 * promoted memory, imported traces and their quarantine. A project belongs to a tenant: it exists once
 * one of the tenant's sessions names it (`p_default` always does); another tenant gets 404.
 */
export const projectRoutes = new Hono<AppBindings>()
  /**
   * -> 204: removes what the project holds (cases, scorecards, approvals, memory, imported traces and
   * their quarantine, the R2 mirror). 409 `project_in_use` while sessions learn into it. Afterwards a
   * named project is 404 until a session names it again (empty then); `p_default` is empty. Repeat to
   * finish a deletion that failed half-way.
   */
  .delete("/:pid", async (c) => {
    const { ref, project } = await requireProject(c, { deleting: true });
    const tenant = sessionStore(c).tenantIndex(ref.tenant);
    const started = await tenant.beginProjectDeletion(ref.projectId, ref.projectId === DEFAULT_PROJECT_ID);
    if (!started.ok) {
      const more = started.count > started.sessions.length ? `, and ${started.count - started.sessions.length} more` : "";
      const without = ref.projectId === DEFAULT_PROJECT_ID ? " (sessions created without a project learn into it)" : "";
      throw new HarnessError(
        "project_in_use",
        `project ${ref.projectId} is used by ${started.count} session(s)${without} (${started.sessions.join(", ")}${more}); delete them first`,
      );
    }
    await project.destroy(ref);
    await tenant.endProjectDeletion(ref.projectId);
    return c.body(null, 204);
  })
  /**
   * `?limit=&cursor=` -> `{cases, nextCursor}`: newest first (by each case's first sighting), so a
   * case added meanwhile never shows on a later page.
   */
  .get("/:pid/cases", async (c) => {
    const { ref, project } = await requireProject(c);
    const query = readQuery(c, CaseListQuery);
    const after = readCursor(query.cursor);
    // Made as the client reads (a page may hold 8 MiB of cases: several built whole filled an isolate, hunt 86).
    const page = unwrapResult(await project.casesPage(query.limit ?? DEFAULT_CASE_PAGE, after?.position ?? null));
    const broken = () =>
      logLine("error", "download broke off", {
        requestId: c.get("requestId"),
        projectId: ref.projectId,
        path: new URL(c.req.url).pathname,
      });
    return new Response(withoutEndMark(page, broken), { headers: { "content-type": "application/json" } });
  })
  .get("/:pid/cases/:caseId", async (c) => {
    const { project } = await requireProject(c);
    const caseId = c.req.param("caseId");
    const found = await project.getCase(caseId);
    if (!found) throw notFound(caseId);
    return c.json({
      case: found,
      scorecard: await project.scorecard(caseId),
      judgedScorecard: await project.judgedScorecard(caseId),
      approvals: await project.approvals(caseId),
    });
  })
  /**
   * -> 204: removes the case, its scorecards and approvals, and its memory rule if it was promoted.
   * A case deleted is 404 afterwards; the same failure in a later run makes it again.
   */
  .delete("/:pid/cases/:caseId", async (c) => {
    const { ref, project } = await requireProject(c);
    const caseId = c.req.param("caseId");
    if (!(await project.deleteCase(ref, caseId))) throw notFound(caseId);
    return c.body(null, 204);
  })
  /** Re-runs the case's failing run with the replay model; 201 with the scorecard. */
  .post("/:pid/cases/:caseId/replay", async (c) => {
    const { ref, project } = await requireProject(c);
    await readJsonBody(c, EmptyBody);
    const caseId = c.req.param("caseId");
    // The case is not evicted while its replay runs (it may take a run's whole timeout).
    const lease = await project.replayStarted(caseId);
    try {
      const scorecard = await replayCase({ store: sessionStore(c), projects: c.env.PROJECTS }, ref, caseId);
      if (!(await project.getCase(caseId))) throw notFound(caseId, "was deleted while it was replayed; its scorecard was not kept");
      return c.json({ scorecard }, 201);
    } finally {
      // A lease not ended here ends by itself; that must not replace the replay's own answer.
      await Promise.resolve(project.replayEnded(lease)).catch(() => undefined);
    }
  })
  .post("/:pid/cases/:caseId/approve", async (c) => {
    const { ref, project } = await requireProject(c);
    const body = await readJsonBody(c, ApproveBody);
    return c.json({ approval: unwrapResult(await project.approve(ref, c.req.param("caseId"), body.approvedBy, body.note)) }, 201);
  })
  /** `{caseId, write: true}`: only a verified agent or policy case, never imported material. */
  .post("/:pid/memory/promote", async (c) => {
    const { ref, project } = await requireProject(c);
    const body = await readJsonBody(c, PromoteBody);
    return c.json({ rule: unwrapResult(await project.promote(ref, body.caseId, body.write)) }, 201);
  })
  .get("/:pid/memory", async (c) => {
    const { project } = await requireProject(c);
    return c.json({ rules: await project.memory() });
  })
  /** A JSONL body of foreign traces; corrupt lines are quarantined, the rest kept. 201 with the summary. */
  .post("/:pid/traces", async (c) => {
    // An import still on its way when the project is deleted must not land in the emptied project.
    const { ref, project } = await requireProject(c, { withEpoch: true });
    const media = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (!JSONL_TYPES.has(media)) {
      throw new HarnessError(
        "unsupported_media_type",
        `send traces as 'Content-Type: application/x-ndjson' (one JSON object per line), not ${JSON.stringify(media.slice(0, 100))}`,
      );
    }
    refuseDeclaredLengthOver(c, MAX_TRACE_IMPORT_BYTES);
    const keyed = idempotencyKeyOf(c) !== null; // a malformed key is refused before the body is read
    const body = requestBody(c.req.raw);
    // Through the isolate's upload slots, as an archive is (the body, and its copy sent to the project).
    const summary = await inUploadSlot(c, async () => {
      const bytes = await readStreamBytes(body && pacedUpload(body), MAX_TRACE_IMPORT_BYTES);
      // With an Idempotency-Key the import id is allocated with the claim: a repeat (a retried upload
      // of the same file) gets the first import's answer instead of counting its failures again.
      const claimed = !keyed
        ? null
        : await claimIdempotencyKey(c, undefined, ["POST /api/projects/:pid/traces", ref.projectId, await sha256Hex(bytes)], {
            importId: randomIds.next("import"),
          });
      return unwrapResult(await project.importTraces(ref, bytes, claimed?.proposal.importId));
    });
    return c.json(summary, 201);
  })
  /**
   * `?limit=&cursor=` -> `{quarantine, nextCursor}`: refused lines, oldest first (by import, then
   * line); a line added meanwhile shows on a later page. An import's first lines only (`ImportStore`).
   */
  .get("/:pid/quarantine", async (c) => {
    const { project } = await requireProject(c);
    const query = readQuery(c, QuarantineListQuery);
    const after = readCursor(query.cursor);
    const page = await project.quarantine(query.limit ?? DEFAULT_QUARANTINE_PAGE, after?.position ?? null);
    return c.json({ quarantine: page.quarantine, nextCursor: page.next === null ? null : encodeCursor({ position: page.next }) });
  });

function notFound(caseId: string, why = "does not exist in this project"): HarnessError {
  return new HarnessError("case_not_found", `case '${caseId.slice(0, 100)}' ${why}`);
}

/**
 * The project named in the route, if the caller's tenant has it and is not deleting it (`deleting`:
 * DELETE itself, which finishes a deletion that failed half-way). `withEpoch`: the object's epoch is
 * read first, before the tenant is asked, so a deletion that begins after the check empties the
 * project one epoch on and the request's later write is refused (`ProjectRef.epoch`).
 */
async function requireProject(
  c: AppContext,
  { deleting = false, withEpoch = false } = {},
): Promise<{ ref: ProjectRef; project: DurableObjectStub<ProjectRpc> }> {
  const projectId: string = c.req.param("pid") ?? "";
  if (!isId("project", projectId)) {
    throw new HarnessError(
      "invalid_project_id",
      `project id ${JSON.stringify(String(projectId).slice(0, 80))} is not ${idForm("project")}`,
    );
  }
  const tenant = c.get("tenant");
  const project = c.env.PROJECTS.getByName(projectObjectName({ tenant, projectId }));
  const epoch = withEpoch ? await project.epoch() : undefined;
  const state = await sessionStore(c).tenantIndex(tenant).projectState(projectId);
  if (state === "deleting" && !deleting) throw new HarnessError("project_not_found", `project '${projectId}' is being deleted`);
  if (state === null && projectId !== DEFAULT_PROJECT_ID)
    throw new HarnessError("project_not_found", `project '${projectId}' does not exist`);
  return { ref: { tenant, projectId, ...(epoch === undefined ? {} : { epoch }) }, project };
}
