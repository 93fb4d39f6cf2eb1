import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { it } from "vitest";
import { DurableSessionStore } from "../src/session/session-store";
import { deltaEvent } from "../test/helpers/records";
import { type SessionDO, useSessionDeps } from "../test/helpers/test-worker";

/**
 * Session log: append throughput into one session, and R2 bytes written per logical JSONL byte for
 * our immutable segments next to a naive flusher that rewrites the whole events.jsonl each time.
 */
const RPC_APPENDS = 2_000;
const LOG_RECORDS = 20_000;
const FLUSH_EVERY = 100; // records between flushes, like a run flushing on its size threshold
const TEXT = "a coalesced assistant delta of about eighty characters, typical of a streamed turn";

/** The real bucket, with every put's bytes counted. */
function countingBucket(real: R2Bucket) {
  const counter = { bytes: 0, puts: 0 };
  const bucket = {
    head: (key: string) => real.head(key),
    get: (key: string, options?: R2GetOptions) => real.get(key, options),
    list: (options?: R2ListOptions) => real.list(options),
    delete: (keys: string | string[]) => real.delete(keys),
    put: async (key: string, value: Uint8Array | string, options?: R2PutOptions) => {
      counter.bytes += typeof value === "string" ? new TextEncoder().encode(value).byteLength : value.byteLength;
      counter.puts++;
      return real.put(key, value, options);
    },
  } as unknown as R2Bucket;
  return { bucket, counter };
}

it("session log: appends/s and R2 write amplification", async () => {
  const store = new DurableSessionStore(env);

  // 1. Appends over RPC, one record per call (what a client-facing route costs).
  const { id: rpcSession } = await store.create({});
  const t = performance.now();
  for (let i = 0; i < RPC_APPENDS; i++) await store.appendEvent(rpcSession, deltaEvent(rpcSession, `e_${i}`, TEXT));
  const rpcPerSec = RPC_APPENDS / ((performance.now() - t) / 1000);

  // 2. Inside the DO (what the runtime does): ours vs the naive rewrite, same records, same flush cadence.
  const { id } = await store.create({});
  const stub = store.stub(id);
  const ours = countingBucket(env.STORE);
  useSessionDeps(id, { bucket: ours.bucket });
  const results = await runInDurableObject(stub, async (instance: SessionDO) => {
    let logical = 0;
    const start = performance.now();
    for (let i = 0; i < LOG_RECORDS; i++) {
      const event = deltaEvent(id, `e_${i}`, TEXT);
      instance.appendEvents([event]);
      logical += JSON.stringify(event).length + 1;
      if ((i + 1) % FLUSH_EVERY === 0) await instance.flush();
    }
    await instance.flush();
    const oursMs = performance.now() - start;

    const naive = countingBucket(env.STORE);
    let whole = "";
    const naiveStart = performance.now();
    for (let i = 0; i < LOG_RECORDS; i++) {
      whole += `${JSON.stringify(deltaEvent(id, `e_${i}`, TEXT))}\n`;
      if ((i + 1) % FLUSH_EVERY === 0) await naive.bucket.put(`bench/naive/${id}/events.jsonl`, whole);
    }
    await naive.bucket.put(`bench/naive/${id}/events.jsonl`, whole);
    const naiveMs = performance.now() - naiveStart;
    return { logical, ours: { ...ours.counter, ms: oursMs }, naive: { ...naive.counter, ms: naiveMs } };
  });

  const rows = [
    ["RPC appends (1 record/call)", `${rpcPerSec.toFixed(0)} appends/s`, ""],
    [
      `in-DO append + segment flush every ${FLUSH_EVERY}`,
      `${(LOG_RECORDS / (results.ours.ms / 1000)).toFixed(0)} appends/s`,
      `R2 bytes / log bytes = ${(results.ours.bytes / results.logical).toFixed(3)} (${results.ours.puts} puts)`,
    ],
    [
      `naive: rewrite events.jsonl every ${FLUSH_EVERY}`,
      `${(LOG_RECORDS / (results.naive.ms / 1000)).toFixed(0)} appends/s (no SQLite)`,
      `R2 bytes / log bytes = ${(results.naive.bytes / results.logical).toFixed(1)} (${results.naive.puts} puts)`,
    ],
  ];
  console.log(
    `\nsession log, ${LOG_RECORDS} records, ${(results.logical / 1e6).toFixed(2)} MB of JSONL\n` +
      rows.map((r) => r.join(" | ")).join("\n"),
  );
});
