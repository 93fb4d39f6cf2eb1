import { HarnessError, sha256Hex } from "../domain";
import { archiveTooLarge } from "../workspace/archive-errors";
import type { IngestResult } from "../workspace/ingest";
import { DEFAULT_INGEST_LIMITS } from "../workspace/limits";
import { deleteWorkspace, readWorkspaceMeta } from "../workspace/snapshot";
import { workspaceKeys } from "../workspace/snapshot-layout";
import { pipeThroughQuietly } from "../workspace/streams";
import type { AppContext } from "./context";
import { keyReused } from "./idempotency";
import { sessionStore } from "./lookup";
import { Sha256Stream } from "./sha256-stream";

type Ingest = (body: ReadableStream<Uint8Array>) => Promise<IngestResult>;

/**
 * An upload sent with an Idempotency-Key. Its fingerprint (content type and SHA-256 of the body) is
 * known only once the body has been read, so the key is looked up first: a repeat reads and hashes
 * the body, and gets the first upload's answer if the bytes are the same (422 if not); a first use
 * ingests while hashing, keeps its answer beside the snapshot, then claims the key. When a concurrent
 * upload claimed it in between, the new snapshot is deleted and that upload's answer is given.
 */
export async function uploadOnce(c: AppContext, key: string, body: ReadableStream<Uint8Array>, ingest: Ingest): Promise<IngestResult> {
  const tenant = sessionStore(c).tenantIndex(c.get("tenant"));
  const hashed = hashing(body);
  const known = await tenant.findIdempotencyKey(key, Date.now());
  if (known) {
    await drain(hashed.stream);
    if ((await fingerprintOf(c, await hashed.sha256)) !== known.fingerprint) throw keyReused(key);
    return storedAnswer(c, known.proposal);
  }
  const result = await ingest(hashed.stream);
  const bucket = c.env.STORE;
  await bucket.put(workspaceKeys(result.workspaceId).result, JSON.stringify(result), { httpMetadata: { contentType: "application/json" } });
  const claim = await tenant.claimIdempotencyKey(
    key,
    await fingerprintOf(c, await hashed.sha256),
    JSON.stringify({ workspaceId: result.workspaceId }),
    Date.now(),
  );
  if (claim.state === "fresh") return result;
  await deleteWorkspace(bucket, result.workspaceId);
  if (claim.state === "reused") throw keyReused(key);
  return storedAnswer(c, claim.proposal);
}

/** `body` passed through unchanged, and the SHA-256 of every byte that went through (hex). */
function hashing(body: ReadableStream<Uint8Array>): { stream: ReadableStream<Uint8Array>; sha256: Promise<string> } {
  const hash = new Sha256Stream();
  const stream = pipeThroughQuietly(
    body,
    new TransformStream<Uint8Array, Uint8Array>({
      async transform(chunk, controller) {
        await hash.add(chunk);
        controller.enqueue(chunk);
      },
      async flush() {
        await hash.finish();
      },
    }),
  );
  return { stream, sha256: hash.hex };
}

/** Reads a repeated upload to its end (the archive size limit still applies). */
async function drain(stream: ReadableStream<Uint8Array>): Promise<void> {
  const max = DEFAULT_INGEST_LIMITS.maxArchiveBytes;
  let total = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    total += value.byteLength;
    if (total > max) throw archiveTooLarge(`the archive is larger than ${max} bytes`);
  }
}

function fingerprintOf(c: AppContext, sha256: string): Promise<string> {
  return sha256Hex(JSON.stringify({ route: "POST /api/workspaces", contentType: c.req.header("content-type") ?? null, sha256 }));
}

/** The answer the first upload under the key gave (404 once its workspace is deleted). */
async function storedAnswer(c: AppContext, proposal: string): Promise<IngestResult> {
  const { workspaceId } = JSON.parse(proposal) as { workspaceId: string };
  // A repeat after the workspace was deleted: say so, as a repeated session creation does.
  const deleted = new HarnessError(
    "workspace_not_found",
    `workspace '${workspaceId}', which the first upload with this Idempotency-Key made, was deleted; repeating the upload does not bring it back (send it with a new Idempotency-Key)`,
  );
  try {
    await readWorkspaceMeta(c.env.STORE, workspaceId, c.get("tenant")); // ownership, existence
  } catch (err) {
    throw err instanceof HarnessError && err.code === "workspace_not_found" ? deleted : err;
  }
  const stored = await c.env.STORE.get(workspaceKeys(workspaceId).result);
  if (!stored) throw deleted;
  return (await stored.json()) as IngestResult;
}
