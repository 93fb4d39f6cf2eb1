import { ingestSlots } from "../workspace/ingest-slots";
import type { AppContext } from "./context";

/**
 * Runs an upload (an archive, a conversation or trace import) in one of the isolate's upload slots
 * (ingest-slots.ts), kept alive past its client: Cloudflare cancels a request whose client went
 * away, and a cancelled request never reaches the `finally` that gives its slot back. `waitUntil`
 * gives it up to 30 s more, in which the read of the broken body fails and the slot is returned.
 */
export function inUploadSlot<T>(c: AppContext, upload: () => Promise<T>): Promise<T> {
  const running = ingestSlots.run(upload);
  let ctx: { waitUntil(promise: Promise<unknown>): void };
  try {
    ctx = c.executionCtx;
  } catch {
    return running; // called without one (app.request in tests): nothing to keep alive
  }
  ctx.waitUntil(
    running.then(
      () => {},
      () => {},
    ),
  );
  return running;
}
