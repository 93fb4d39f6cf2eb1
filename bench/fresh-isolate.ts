import { env } from "cloudflare:workers";
import { MAX_CONCURRENT_INGESTS } from "../src/domain/limits";
import { ingestsRunning } from "../src/workspace/shared-caches";
import { type WorkspaceMeta, workspaceKeys } from "../src/workspace/snapshot-layout";

let freshSnapshots = 0;

/**
 * A fresh isolate, as far as one snapshot goes: its meta gets a creation time never used before, so
 * everything the isolate keeps under the snapshot's name (parsed index.json and search directory,
 * posting lists, whole shards, decoded text, file bytes) is for another snapshot, and the caches are
 * emptied besides (an ingest at the maximum takes their whole budget back), so nothing old is
 * evicted on the clock. Only the JIT stays warm.
 */
export async function freshIsolate(workspaceId: string): Promise<void> {
  const key = workspaceKeys(workspaceId).meta;
  const meta = (await (await env.STORE.get(key))!.json()) as WorkspaceMeta;
  meta.createdAt = new Date(Date.parse(meta.createdAt) + ++freshSnapshots).toISOString();
  await env.STORE.put(key, JSON.stringify(meta));
  ingestsRunning(MAX_CONCURRENT_INGESTS);
  ingestsRunning(0);
}
