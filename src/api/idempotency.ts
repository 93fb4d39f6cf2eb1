import { HarnessError, MAX_IDEMPOTENCY_KEY_CHARS, sha256Hex } from "../domain";
import type { AppContext } from "./context";
import { sessionStore } from "./lookup";
import { IdempotencyKey } from "./schemas";

/** A claimed key: the proposal stored with its first use, and when that was (part of the key's identity). */
export interface ClaimedKey {
  key: string;
  proposal: Record<string, string>;
  claimedAtMs: number;
}

/**
 * Claims the request's idempotency key (the `Idempotency-Key` header, else `requestId` from the body)
 * in the tenant's index, for a request identified by `fingerprint` (route and body). Null when the
 * request carries no key. A different request under a used key is refused with 422
 * `idempotency_key_reused`; a repeat gets the first request's `proposal` (the ids it allocated).
 */
export async function claimIdempotencyKey(
  c: AppContext,
  requestId: string | undefined,
  fingerprint: unknown,
  proposal: Record<string, string>,
): Promise<ClaimedKey | null> {
  const key = idempotencyKeyOf(c, requestId);
  if (key === null) return null;
  const digest = await sha256Hex(JSON.stringify(fingerprint));
  const tenant = sessionStore(c).tenantIndex(c.get("tenant"));
  const claim = await tenant.claimIdempotencyKey(key, digest, JSON.stringify(proposal), Date.now());
  if (claim.state === "reused") throw keyReused(key);
  return { key, proposal: JSON.parse(claim.proposal) as Record<string, string>, claimedAtMs: claim.claimedAtMs };
}

/** The request's idempotency key (the header, else `requestId`), validated; null when it has none. */
export function idempotencyKeyOf(c: AppContext, requestId?: string): string | null {
  const raw = c.req.header("idempotency-key") ?? requestId;
  if (raw === undefined) return null;
  const parsed = IdempotencyKey.safeParse(raw);
  if (!parsed.success) {
    throw new HarnessError(
      "invalid_idempotency_key",
      `an Idempotency-Key must be 1-${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters without spaces`,
    );
  }
  return parsed.data;
}

export function keyReused(key: string): HarnessError {
  return new HarnessError(
    "idempotency_key_reused",
    `the Idempotency-Key '${key}' was used in the last 24 h for a different request; use a new key for a new request`,
  );
}
