import { type IdGenerator, randomIds } from "../domain";
import type { AppEnv } from "../env";
import type { FetchLike } from "../model";

/**
 * What a session's object takes from outside itself. Production uses `productionSessionDeps`; tests
 * construct the object with their own (deterministic ids, a model fetch that answers from a script,
 * a bucket that fails on purpose), through the constructor, never by patching a live instance.
 */
export interface SessionDeps {
  ids: IdGenerator;
  clock: () => number;
  /** The fetch the model client calls. */
  modelFetch: FetchLike;
  /** R2: log segments, session.json, workspace snapshots. */
  bucket: R2Bucket;
}

export function productionSessionDeps(env: AppEnv): SessionDeps {
  return { ids: randomIds, clock: Date.now, modelFetch: (input, init) => fetch(input, init), bucket: env.STORE };
}
