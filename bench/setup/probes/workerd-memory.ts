import { readdirSync, readFileSync, writeFileSync } from "node:fs";

/** How often the probe reads VmRSS while a measurement is open, in ms. */
const SAMPLE_INTERVAL_MS = 50;

export interface MemoryReading {
  /** The workerd processes measured (descendants of this Node process). */
  pids: number[];
  /** Summed VmRSS when the measurement started, in bytes. */
  startRssBytes: number;
  /** The highest summed resident size seen: VmHWM (reset at start) or the 50 ms samples, in bytes. */
  peakRssBytes: number;
  endRssBytes: number;
  /** Whether writing "5" to /proc/<pid>/clear_refs reset VmHWM (needs the same user or root). */
  hwmReset: boolean;
  samples: number;
}

/**
 * Measures the resident memory of the workerd processes that this vitest run started, from Linux
 * /proc: VmHWM is reset at `start()` so it records the true peak, and VmRSS is also polled every
 * 50 ms in case the reset is not permitted. Covers every isolate in those processes (the bench's
 * worker and miniflare's local R2 alike), so it is an upper bound for the ingest alone.
 */
export class WorkerdMemoryProbe {
  private open: {
    pids: number[];
    startRssBytes: number;
    maxRssBytes: number;
    hwmReset: boolean;
    samples: number;
    timer: NodeJS.Timeout;
  } | null = null;

  start(): { pids: number[]; startRssBytes: number } {
    this.stop();
    const pids = workerdDescendants(process.pid);
    if (pids.length === 0) throw new Error("no workerd process found under this vitest process");
    let hwmReset = true;
    for (const pid of pids) {
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, "5");
      } catch {
        hwmReset = false;
      }
    }
    const startRssBytes = sum(pids, "VmRSS");
    const open = {
      pids,
      startRssBytes,
      maxRssBytes: startRssBytes,
      hwmReset,
      samples: 0,
      timer: setInterval(() => {
        open.maxRssBytes = Math.max(open.maxRssBytes, sum(pids, "VmRSS"));
        open.samples++;
      }, SAMPLE_INTERVAL_MS),
    };
    this.open = open;
    return { pids, startRssBytes };
  }

  stop(): MemoryReading | null {
    const open = this.open;
    if (!open) return null;
    clearInterval(open.timer);
    this.open = null;
    const endRssBytes = sum(open.pids, "VmRSS");
    const hwm = open.hwmReset ? sum(open.pids, "VmHWM") : 0;
    return {
      pids: open.pids,
      startRssBytes: open.startRssBytes,
      peakRssBytes: Math.max(open.maxRssBytes, hwm, endRssBytes),
      endRssBytes,
      hwmReset: open.hwmReset,
      samples: open.samples,
    };
  }
}

/** Processes below `root` whose command line mentions workerd. */
function workerdDescendants(root: number): number[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // Fields after the command name, which may itself hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(name), ppid);
    } catch {
      // The process ended while we looked.
    }
  }
  const below = (pid: number): boolean => {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) if (p === root) return true;
    return false;
  };
  return [...parents.keys()].filter((pid) => below(pid) && cmdline(pid).includes("workerd")).sort((a, b) => a - b);
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

/** Sums a `/proc/<pid>/status` field (reported in kB) over `pids`, in bytes. */
function sum(pids: number[], field: "VmRSS" | "VmHWM"): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      total += match ? Number(match[1]) * 1024 : 0;
    } catch {
      // Gone: counts as 0.
    }
  }
  return total;
}
