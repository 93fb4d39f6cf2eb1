import { inject } from "vitest";
import type { IsolateHeapInput } from "./setup/isolate-heap";
import type { HeapReading } from "./setup/probes/isolate-heap";

/**
 * Helpers of the in-isolate memory benches: a measurement between `POST /heap/start` and
 * `/heap/stop` of bench/setup/isolate-heap.ts, and a body passed through that waits for samples.
 * Both need vitest started with `--inspect` (`heap` is null otherwise).
 */
export const heap: IsolateHeapInput | null = inject("isolateHeap");

/** Bytes as MB (10^6) with one decimal, as the heap benches' tables show them. */
export const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

/** The columns every heap bench's table starts with, filled by `heapCells`. */
export const HEAP_COLUMNS = [
  "case",
  "time",
  "before: used / backing MB",
  "peak used heap MB",
  "peak backing store MB",
  "peak used + backing + cppgc MB (growth)",
  "at end: used / backing MB",
];

/** A measurement's cells under `HEAP_COLUMNS`. */
export function heapCells(label: string, ms: number, r: HeapReading): string[] {
  const before = r.start.usedSize + r.start.backingStorageSize + r.start.embedderHeapUsedSize;
  return [
    label,
    `${ms.toFixed(0)} ms`,
    `${mb(r.start.usedSize)} / ${mb(r.start.backingStorageSize)}`,
    mb(r.peak.usedSize),
    mb(r.peak.backingStorageSize),
    `${mb(r.peakTotal)} (+${mb(r.peakTotal - before)}, at ${(r.peakAtMs / 1000).toFixed(1)} s)`,
    `${mb(r.end.usedSize)} / ${mb(r.end.backingStorageSize)}`,
  ];
}

/** Asks the probe for a reading after a full GC: what is live at this point. */
export async function liveReading(): Promise<void> {
  await (await fetch(`${heap!.url}/heap/live`, { method: "POST" })).arrayBuffer();
}

export async function measure<T>(work: () => Promise<T>): Promise<{ reading: HeapReading; ms: number; value: T }> {
  const post = async (path: string) => {
    const response = await fetch(`${heap!.url}${path}`, { method: "POST" });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  await post("/heap/start");
  const start = performance.now();
  const value = await work();
  const ms = performance.now() - start;
  const reading = (await post("/heap/stop")) as HeapReading;
  return { reading, ms, value };
}

/**
 * Passes `body` through, and after every SAMPLE_EVERY_BYTES of it waits for the probe to take a
 * sample: the probe's 50 ms timer alone gets no answer while the isolate runs JS back to back.
 * With `live`, after every LIVE_EVERY_BYTES it also waits for a reading after a full GC.
 */
const SAMPLE_EVERY_BYTES = 2 * 1024 * 1024;
const LIVE_EVERY_BYTES = 16 * 1024 * 1024;
export function sampled(body: ReadableStream<Uint8Array>, live = true): ReadableStream<Uint8Array> {
  let since = 0;
  let sinceLive = 0;
  const ask = async (path: string) => (await fetch(`${heap!.url}${path}`, { method: "POST" })).arrayBuffer();
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      async transform(chunk, controller) {
        controller.enqueue(chunk);
        since += chunk.byteLength;
        sinceLive += chunk.byteLength;
        if (live && sinceLive >= LIVE_EVERY_BYTES) {
          sinceLive = 0;
          await ask("/heap/live");
        }
        if (since < SAMPLE_EVERY_BYTES) return;
        since = 0;
        await ask("/heap/sample");
      },
    }),
  );
}
