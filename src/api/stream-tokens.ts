import { HarnessError } from "../domain";

/**
 * Stream tokens let a browser `EventSource`, which cannot send `Authorization`, read one session's
 * event stream: `POST /api/sessions/:id/stream-token` hands one out, `?token=` on
 * `GET .../events/stream` (and nowhere else) is accepted in place of the bearer token.
 *
 * A token is `v1.<claims>.<signature>`, both base64url: the claims `{t: tenant, s: session, e:
 * expiry in epoch seconds, b: bearer tag}` and their HMAC-SHA256 under `STREAM_TOKEN_SECRET`,
 * checked with `crypto.subtle.verify` (constant time).
 */
export interface StreamTokenClaims {
  tenant: string | null;
  sessionId: string;
  /** Expiry, epoch seconds. */
  expiresAt: number;
  /**
   * `bearerTag` of the bearer token it was issued under (null with auth off): a token outlives
   * neither its tenant nor the rotation of the bearer token that asked for it.
   */
  bearer: string | null;
}

/** Shorter secrets are refused: the HMAC is only as strong as its key. */
export const MIN_STREAM_TOKEN_SECRET_CHARS = 32;

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function configured(secret: string | undefined): secret is string {
  return secret !== undefined && secret.length >= MIN_STREAM_TOKEN_SECRET_CHARS;
}

function keyFor(secret: string | undefined): Promise<CryptoKey> {
  if (!configured(secret))
    throw new HarnessError(
      "stream_token_unconfigured",
      `stream tokens need STREAM_TOKEN_SECRET, a secret of at least ${MIN_STREAM_TOKEN_SECRET_CHARS} characters`,
    );
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    keys.clear(); // one secret at a time; a rotated one replaces it
    keys.set(secret, key);
  }
  return key;
}

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
  } catch {
    return null;
  }
}

/**
 * Names a bearer token (by the SHA-256 `AUTH_TOKENS` entries keep) without revealing it: 16 bytes of
 * its HMAC under the stream secret, so a stream token, which travels in URLs, gives nothing to
 * guess a weak bearer token from.
 */
export async function bearerTag(secret: string | undefined, bearerDigest: ArrayBuffer): Promise<string> {
  const key = await keyFor(secret);
  const prefix = encoder.encode("bearer.");
  const message = new Uint8Array(prefix.byteLength + bearerDigest.byteLength);
  message.set(prefix);
  message.set(new Uint8Array(bearerDigest), prefix.byteLength);
  return base64url(new Uint8Array(await crypto.subtle.sign("HMAC", key, message)).subarray(0, 16));
}

/** Signs a token for `claims`. */
export async function issueStreamToken(secret: string | undefined, claims: StreamTokenClaims): Promise<string> {
  const key = await keyFor(secret);
  const body = base64url(encoder.encode(JSON.stringify({ t: claims.tenant, s: claims.sessionId, e: claims.expiresAt, b: claims.bearer })));
  const signature = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`v1.${body}`)));
  return `v1.${body}.${base64url(signature)}`;
}

/**
 * The claims of a token signed with `secret`, if it is for `sessionId` and has not expired at
 * `nowSeconds`; otherwise `stream_token_invalid` (also when no secret is configured) or
 * `stream_token_expired` is thrown.
 */
export async function verifyStreamToken(
  secret: string | undefined,
  token: string,
  sessionId: string,
  nowSeconds: number,
): Promise<StreamTokenClaims> {
  const invalid = (why: string) => new HarnessError("stream_token_invalid", `the stream token ${why}`);
  // A server without the secret has signed no token: one sent to it is not its own. A 401, as for a
  // forged one, not a 500 that anyone without a token could cause (hunt 60).
  if (!configured(secret)) throw invalid("was not signed by this server");
  const key = await keyFor(secret);
  const [version, body, signature, ...rest] = token.split(".");
  const signatureBytes = signature === undefined ? null : fromBase64url(signature);
  if (version !== "v1" || body === undefined || signatureBytes === null || rest.length > 0) throw invalid("is malformed");
  if (!(await crypto.subtle.verify("HMAC", key, signatureBytes, encoder.encode(`v1.${body}`))))
    throw invalid("was not signed by this server");
  const bytes = fromBase64url(body);
  let claims: unknown;
  try {
    claims = JSON.parse(new TextDecoder().decode(bytes ?? new Uint8Array()));
  } catch {
    throw invalid("is malformed");
  }
  const { t, s, e, b = null } = (claims ?? {}) as { t?: unknown; s?: unknown; e?: unknown; b?: unknown };
  if ((t !== null && typeof t !== "string") || typeof s !== "string" || typeof e !== "number" || (b !== null && typeof b !== "string"))
    throw invalid("is malformed");
  if (s !== sessionId) throw invalid("is for another session");
  if (e <= nowSeconds) throw new HarnessError("stream_token_expired", "the stream token has expired; ask for a new one");
  return { tenant: t, sessionId: s, expiresAt: e, bearer: b };
}
