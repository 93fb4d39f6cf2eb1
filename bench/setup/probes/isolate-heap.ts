// undici is not a direct dependency: it is installed for just-bash and miniflare and resolves from
// the project root. Node 20 has no global WebSocket without --experimental-websocket.
import { WebSocket } from "undici";

/** How often the probe asks the isolate for its heap usage while a measurement is open, in ms. */
const SAMPLE_INTERVAL_MS = 50;
/** How often it also reads the heap after a full GC (`live()`), in ms: each costs a heap snapshot. */
const LIVE_INTERVAL_MS = 1000;
/** The vitest-pool-workers runner worker: the isolate the benches (and so the ingest) run in. */
const RUNNER_TARGET = "vitest-pool-workers-runner";
/** A request the isolate has not answered by then fails instead of hanging the bench. */
const REQUEST_TIMEOUT_MS = 10_000;

/** V8's `Runtime.getHeapUsage`, in bytes. */
export interface HeapUsage {
  /** Used size of the V8 (JS) heap: live objects plus garbage not yet collected. */
  usedSize: number;
  /** Committed size of the V8 heap. */
  totalSize: number;
  /** Used size of the embedder's (cppgc) heap, if V8 reports it. */
  embedderHeapUsedSize: number;
  /** Backing stores of ArrayBuffers (our Uint8Arrays) and external strings, if V8 reports it. */
  backingStorageSize: number;
}

export interface HeapReading {
  target: string;
  /**
   * The largest `used + backing + cppgc` right after a full GC (`live()`, asked for by the bench at
   * set points): live objects only, a lower bound for the peak (the GC runs at those points only).
   */
  livePeak: number;
  /** How many live readings were taken. */
  liveReadings: number;
  /** When the measurement started (no forced GC: workerd never answers HeapProfiler.collectGarbage). */
  start: HeapUsage;
  /** The highest value of each field seen in the samples (taken independently). */
  peak: HeapUsage;
  /** The highest usedSize + backingStorageSize + embedderHeapUsedSize of one sample. */
  peakTotal: number;
  /** When the peakTotal sample was taken, ms after start. */
  peakAtMs: number;
  /** Right at stop. */
  end: HeapUsage;
  samples: number;
  /** Longest time one getHeapUsage round trip took (the isolate answers between its own tasks). */
  maxLatencyMs: number;
}

const total = (u: HeapUsage) => u.usedSize + u.backingStorageSize + u.embedderHeapUsedSize;

/**
 * Reads the V8 heap of the bench's own isolate (not the whole workerd process, which also runs
 * miniflare's local R2 and cache in other isolates) over the Chrome DevTools Protocol that workerd
 * serves when vitest runs with `--inspect=host:port`. `Runtime.getHeapUsage` returns the JS heap
 * (usedSize) and, separately, ArrayBuffer backing stores (backingStorageSize); the probe polls it
 * every 50 ms while a measurement is open. It cannot force a GC: workerd (4.86's) never answers
 * `HeapProfiler.collectGarbage` (the heap stays the same size; cause not investigated), so
 * usedSize is live objects plus garbage not yet collected: an upper bound for the live heap.
 */
export class IsolateHeapProbe {
  private socket: WebSocket | null = null;
  private target = "";
  private nextId = 1;
  private pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private open: {
    start: HeapUsage;
    peak: HeapUsage;
    peakTotal: number;
    peakAtMs: number;
    startedAt: number;
    samples: number;
    maxLatencyMs: number;
    livePeak: number;
    liveReadings: number;
    running: Promise<void> | null;
    timer: NodeJS.Timeout;
    liveRunning: Promise<{ live: number }> | null;
    liveTimer: NodeJS.Timeout;
  } | null = null;

  constructor(private readonly inspectorUrl: string) {}

  private async connect(): Promise<void> {
    if (this.socket) return;
    const targets = (await (await fetch(`${this.inspectorUrl}/json/list`)).json()) as { id: string; webSocketDebuggerUrl: string }[];
    const target = targets.find((t) => t.id.includes(RUNNER_TARGET));
    if (!target) throw new Error(`no ${RUNNER_TARGET} target among ${targets.map((t) => t.id).join(", ")}`);
    const socket = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener("open", () => resolve(), { once: true });
      socket.addEventListener("error", () => reject(new Error(`cannot connect to ${target.webSocketDebuggerUrl}`)), { once: true });
    });
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
      if (message.id === undefined) return;
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiter?.reject(new Error(message.error.message));
      else waiter?.resolve(message.result);
    });
    socket.addEventListener("close", () => {
      for (const waiter of this.pending.values()) waiter.reject(new Error("inspector connection closed"));
      this.pending.clear();
      this.socket = null;
    });
    this.socket = socket;
    this.target = target.id;
  }

  private send<T>(method: string, params: object = {}): Promise<T> {
    const socket = this.socket;
    if (!socket) return Promise.reject(new Error("not connected"));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer from the inspector in ${REQUEST_TIMEOUT_MS} ms`));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as T);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      socket.send(JSON.stringify({ id, method, params }));
    });
  }

  async usage(): Promise<HeapUsage> {
    const u = await this.send<Partial<HeapUsage>>("Runtime.getHeapUsage");
    return {
      usedSize: u.usedSize ?? 0,
      totalSize: u.totalSize ?? 0,
      embedderHeapUsedSize: u.embedderHeapUsedSize ?? 0,
      backingStorageSize: u.backingStorageSize ?? 0,
    };
  }

  async start(): Promise<{ target: string; start: HeapUsage }> {
    await this.stop();
    await this.connect();
    const start = await this.usage();
    const open = {
      start,
      peak: { ...start },
      peakTotal: total(start),
      peakAtMs: 0,
      startedAt: performance.now(),
      samples: 0,
      maxLatencyMs: 0,
      livePeak: 0,
      liveReadings: 0,
      running: null as Promise<void> | null,
      timer: setInterval(() => {
        if (!open.running) open.running = this.sample().finally(() => (open.running = null));
      }, SAMPLE_INTERVAL_MS),
      liveRunning: null as Promise<{ live: number }> | null,
      liveTimer: setInterval(() => {
        this.live().catch(() => {});
      }, LIVE_INTERVAL_MS),
    };
    this.open = open;
    return { target: this.target, start };
  }

  /**
   * Takes one sample now. The timer's samples can starve: while the isolate runs JS back to back
   * (the tar ingest does for seconds) workerd does not hand it to the inspector, so the bench also
   * calls this (over HTTP, `POST /heap/sample`) and waits, idle, until the isolate has answered.
   */
  async sample(): Promise<void> {
    const open = this.open;
    if (!open) return;
    const asked = performance.now();
    try {
      const u = await this.usage();
      open.maxLatencyMs = Math.max(open.maxLatencyMs, performance.now() - asked);
      open.samples++;
      for (const key of Object.keys(u) as (keyof HeapUsage)[]) open.peak[key] = Math.max(open.peak[key], u[key]);
      if (total(u) > open.peakTotal) {
        open.peakTotal = total(u);
        open.peakAtMs = asked - open.startedAt;
      }
    } catch {
      // A timed-out sample is just missing.
    }
  }

  /**
   * Reads the heap right after a full garbage collection (every second, and when the bench asks): V8 collects before it takes a heap
   * snapshot (workerd answers `HeapProfiler.takeHeapSnapshot`, unlike `collectGarbage`); the
   * snapshot's chunks arrive as events, which the probe drops. Slow (the whole heap is serialised).
   */
  live(): Promise<{ live: number }> {
    const open = this.open;
    if (!open) return Promise.resolve({ live: 0 });
    // One at a time: the bench's readings and the timer's share the one in flight.
    open.liveRunning ??= (async () => {
      await this.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false, captureNumericValue: false });
      const live = total(await this.usage());
      open.liveReadings++;
      open.livePeak = Math.max(open.livePeak, live);
      return { live };
    })().finally(() => (open.liveRunning = null));
    return open.liveRunning;
  }

  async stop(): Promise<HeapReading | null> {
    const open = this.open;
    if (!open) return null;
    this.open = null;
    clearInterval(open.timer);
    clearInterval(open.liveTimer);
    await open.running;
    await open.liveRunning?.catch(() => {});
    const end = await this.usage();
    for (const key of Object.keys(end) as (keyof HeapUsage)[]) open.peak[key] = Math.max(open.peak[key], end[key]);
    open.peakTotal = Math.max(open.peakTotal, total(end));
    return {
      target: this.target,
      start: open.start,
      peak: open.peak,
      peakTotal: open.peakTotal,
      peakAtMs: open.peakAtMs,
      end,
      samples: open.samples,
      maxLatencyMs: open.maxLatencyMs,
      livePeak: open.livePeak,
      liveReadings: open.liveReadings,
    };
  }

  close(): void {
    if (this.open) {
      clearInterval(this.open.timer);
      clearInterval(this.open.liveTimer);
    }
    this.open = null;
    this.socket?.close();
    this.socket = null;
  }
}
