/** Levels of a log line, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error";
const LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

/**
 * The isolate's threshold, the one source of truth for every log line of the Worker and of its
 * Durable Objects (they share the isolate's modules). Set from `LOG_LEVEL` by `useLogLevel`.
 */
let threshold: LogLevel = "info";
/** The `LOG_LEVEL` text the threshold was last set from: setting it again costs nothing. */
let configuredFrom: string | undefined;

/**
 * Sets the threshold from `LOG_LEVEL` (`debug`, `info`, `warn`, `error`, any case; unset: `info`).
 * Called by the Worker's fetch and by every Durable Object's constructor. An unknown value falls back
 * to `info` and says so once, at warn.
 */
export function useLogLevel(value: string | undefined): void {
  if (value === configuredFrom) return;
  configuredFrom = value;
  const wanted = (value ?? "").trim().toLowerCase();
  if (wanted === "" || LEVELS.includes(wanted as LogLevel)) {
    threshold = wanted === "" ? "info" : (wanted as LogLevel);
    return;
  }
  threshold = "info";
  logLine("warn", "LOG_LEVEL is not one of debug, info, warn, error: logging at info", { logLevel: value!.slice(0, 40) });
}

/**
 * One structured log line: a JSON object `{level, msg, ...fields}` on one line, dropped when below
 * the threshold. debug and info go to `console.log`, warn to `console.warn`, error to `console.error`,
 * so Workers Logs and `wrangler tail` show the level the line says.
 */
export function logLine(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
  if (LEVELS.indexOf(level) < LEVELS.indexOf(threshold)) return;
  const line = JSON.stringify({ level, msg, ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

/**
 * Keys of things already reported, at most `capacity` of them (the oldest is forgotten first): a
 * condition that repeats on every request (a lost search index) is logged once per isolate.
 */
export class ReportedOnce {
  private readonly keys = new Set<string>();

  constructor(private readonly capacity: number) {}

  /** True the first time `key` is seen (or once it has been forgotten), false after. */
  first(key: string): boolean {
    if (this.keys.has(key)) return false;
    if (this.keys.size >= this.capacity) this.keys.delete(this.keys.values().next().value!);
    this.keys.add(key);
    return true;
  }
}
