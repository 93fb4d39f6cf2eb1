import { env } from "cloudflare:workers";
import { ingestWorkspace } from "../../src/workspace/ingest";
import { streamOf, tarOf } from "./archives";

/** Ingests `{path: content}` as a tar into the test bucket under `workspaceId`. */
export async function seedWorkspace(workspaceId: string, files: Record<string, string | Uint8Array>, owner: string | null = "alice") {
  return ingestWorkspace(env.STORE, streamOf(await tarOf(files)), {
    workspaceId,
    owner,
    now: () => new Date("2026-05-01T12:00:00.000Z"),
  });
}

/** The test bucket with every `get` recorded (key and range), to count subrequests. */
export function recordingBucket(bucket: R2Bucket = env.STORE) {
  const gets: { key: string; range?: unknown }[] = [];
  const proxy = new Proxy(bucket, {
    get(target, property) {
      if (property === "get") {
        return (key: string, options?: R2GetOptions) => {
          gets.push(options?.range ? { key, range: options.range } : { key });
          return target.get(key, options);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { bucket: proxy as R2Bucket, gets };
}
