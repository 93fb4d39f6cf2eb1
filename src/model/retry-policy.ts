import type { ProviderFailure } from "./provider-errors";

/** How failed attempts (429, 5xx, connection errors before any output) are retried. */
export interface RetryPolicy {
  /** Attempts in total, the first included. */
  maxAttempts: number;
  /** Delay before retry n (1-based) is `baseDelayMs * 2^(n-1)` when the provider gives no Retry-After. */
  baseDelayMs: number;
  /** Longest wait this client accepts; a provider asking for more fails at once. */
  maxRetryDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1_000, maxRetryDelayMs: 60_000 };

/** Waits `ms`, or less if `signal` aborts first; never rejects. Injected by tests to record delays. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export const abortableSleep: Sleep = (ms, signal) =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const finish = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      resolve();
    };
    const timer = setTimeout(finish, ms);
    signal.addEventListener("abort", finish, { once: true });
  });

/** An attempt that ended without its answer. */
export interface FailedAttempt {
  failure: ProviderFailure;
  /** It already delivered events; repeating it would deliver them twice. */
  produced: boolean;
}

/** After a failed attempt: wait this long and try again, or give up with this message for the error event. */
export type RetryDecision = { retryAfterMs: number } | { giveUp: string };

/**
 * Whether failed attempt number `attempt` (1-based) is tried again: only a retryable failure before
 * any output, while attempts remain. The wait is the provider's Retry-After when it gave one, else
 * exponential backoff; a provider asking for more than `maxRetryDelayMs`, or for longer than the run has
 * left (`timeLeftMs`), gets no retry at all.
 */
export function retryDecision(
  { failure, produced }: FailedAttempt,
  attempt: number,
  policy: RetryPolicy,
  timeLeftMs = Number.POSITIVE_INFINITY,
): RetryDecision {
  if (!failure.retryable || produced || attempt >= policy.maxAttempts) {
    return { giveUp: attempt > 1 ? `${failure.message} (gave up after ${attempt} attempts)` : failure.message };
  }
  const delayMs = failure.retryAfterMs ?? Math.min(policy.baseDelayMs * 2 ** (attempt - 1), policy.maxRetryDelayMs);
  // Whose wait it is: the provider's Retry-After, or this client's own backoff.
  const asked = failure.retryAfterMs !== undefined ? "the provider asked to retry after" : "the next retry would wait";
  if (delayMs > policy.maxRetryDelayMs) {
    const wait = `${asked} ${formatSeconds(delayMs)}, longer than the ${formatSeconds(policy.maxRetryDelayMs)} this client waits`;
    return { giveUp: `${failure.message} (${wait})` };
  }
  if (delayMs > timeLeftMs) {
    const wait = `${asked} ${formatSeconds(delayMs)}, longer than the ${formatSeconds(Math.max(0, timeLeftMs))} left in this run`;
    return { giveUp: `${failure.message} (${wait})` };
  }
  return { retryAfterMs: delayMs };
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
