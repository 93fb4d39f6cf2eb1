import { describe, expect, it } from "vitest";
import { type ProviderFailure, type RetryPolicy, retryDecision } from "../../src/model";

const POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1_000, maxRetryDelayMs: 60_000 };
const RATE_LIMITED: ProviderFailure = { code: "rate_limited", message: "slow down", retryable: true };
const decide = (failure: ProviderFailure, attempt: number, produced = false) => retryDecision({ failure, produced }, attempt, POLICY);

describe("retryDecision", () => {
  it("backs off exponentially while attempts remain, then gives up naming the attempts", () => {
    expect([decide(RATE_LIMITED, 1), decide(RATE_LIMITED, 2), decide(RATE_LIMITED, 3)]).toEqual([
      { retryAfterMs: 1_000 },
      { retryAfterMs: 2_000 },
      { giveUp: "slow down (gave up after 3 attempts)" },
    ]);
  });

  it("caps the backoff at maxRetryDelayMs", () => {
    expect(retryDecision({ failure: RATE_LIMITED, produced: false }, 7, { ...POLICY, maxAttempts: 10 })).toEqual({ retryAfterMs: 60_000 });
  });

  it("waits what the provider asked, up to the cap; past it, gives up at once", () => {
    expect(decide({ ...RATE_LIMITED, retryAfterMs: 60_000 }, 1)).toEqual({ retryAfterMs: 60_000 });
    expect(decide({ ...RATE_LIMITED, retryAfterMs: 90_000 }, 1)).toEqual({
      giveUp: "slow down (the provider asked to retry after 90 s, longer than the 60 s this client waits)",
    });
  });

  it("says whose wait is too long: the provider's Retry-After, or this client's own backoff (hunt 62)", () => {
    const PROVIDER_ERROR: ProviderFailure = { code: "provider_error", message: "HTTP 503", retryable: true };
    expect(retryDecision({ failure: PROVIDER_ERROR, produced: false }, 2, POLICY, 1_500)).toEqual({
      giveUp: "HTTP 503 (the next retry would wait 2 s, longer than the 1.5 s left in this run)",
    });
    expect(retryDecision({ failure: { ...PROVIDER_ERROR, retryAfterMs: 10_000 }, produced: false }, 1, POLICY, 3_000)).toEqual({
      giveUp: "HTTP 503 (the provider asked to retry after 10 s, longer than the 3 s left in this run)",
    });
  });

  it("never retries a failure that is not retryable, or an attempt that already produced events", () => {
    expect(decide({ code: "bad_request", message: "no", retryable: false }, 1)).toEqual({ giveUp: "no" });
    expect(decide(RATE_LIMITED, 2, true)).toEqual({ giveUp: "slow down (gave up after 2 attempts)" });
  });
});
