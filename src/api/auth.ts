import type { MiddlewareHandler } from "hono";
import { HarnessError } from "../domain";
import type { AppBindings } from "./context";
import { bearerTag, verifyStreamToken } from "./stream-tokens";

/** A configured API token: the tenant `name` and the SHA-256 of its token. */
interface TokenEntry {
  name: string;
  digest: ArrayBuffer;
}

const encoder = new TextEncoder();

function sha256(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", encoder.encode(text));
}

/**
 * Parses `AUTH_TOKENS` (`name:token,name2:token2`; a name may have several tokens, for rotation). A
 * malformed entry is a configuration error, and the API then fails closed rather than quietly opening
 * up: so is a token no request could present (with whitespace) and one token given to two tenants
 * (every request with it would be the first's). The answer goes to anyone, so errors name entries
 * by position, never by their text (pairs written the wrong way round would put tokens in names).
 */
export async function parseAuthTokens(config: string): Promise<TokenEntry[]> {
  const entries: TokenEntry[] = [];
  const owners = new Map<string, { name: string; position: number }>();
  for (const [i, pair] of config.split(",").entries()) {
    const position = i + 1;
    const trimmed = pair.trim();
    if (trimmed === "") continue;
    const colon = trimmed.indexOf(":");
    const name = trimmed.slice(0, colon).trim();
    const token = trimmed.slice(colon + 1).trim();
    if (colon <= 0 || name === "" || token === "")
      throw new HarnessError("auth_misconfigured", "AUTH_TOKENS must be 'name:token' pairs separated by commas");
    if (/\s/.test(token))
      throw new HarnessError(
        "auth_misconfigured",
        `AUTH_TOKENS: the token of entry ${position} holds whitespace, which 'Authorization: Bearer' cannot carry`,
      );
    const owner = owners.get(token);
    if (owner !== undefined && owner.name !== name)
      throw new HarnessError(
        "auth_misconfigured",
        `AUTH_TOKENS gives entries ${owner.position} and ${position} the same token under two names: each tenant needs its own`,
      );
    owners.set(token, { name, position });
    entries.push({ name, digest: await sha256(token) });
  }
  if (entries.length === 0) throw new HarnessError("auth_misconfigured", "AUTH_TOKENS is set but holds no 'name:token' pair");
  return entries;
}

/**
 * With auth off the API is open to whoever reaches it, which is meant to be the developer on this
 * machine. A web page can reach it too, under a name of its own that it points at 127.0.0.1 (DNS
 * rebinding): the browser then takes the API for the page's own origin, sends no foreign `Origin`
 * and lets the page read every answer. The name is still in `Host`, so only names that cannot be
 * rebound are answered (as Vite's dev server does): `localhost`, `*.localhost` and IP addresses
 * (a page that calls an address is another origin, which CORS and the write check cover), and the
 * names listed in OPEN_HOSTS.
 */
function refuseForeignHost(hostname: string, openHosts: string | undefined): void {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (name === "localhost" || name.endsWith(".localhost") || /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || name.startsWith("[")) return;
  const listed = (openHosts ?? "").split(",").some((entry) => entry.trim().toLowerCase().replace(/\.$/, "") === name);
  if (listed) return;
  throw new HarnessError(
    "host_not_allowed",
    `AUTH_TOKENS is unset, so the API answers only on localhost and IP addresses, not on the name ${JSON.stringify(name.slice(0, 100))} (a page could point a name of its own at this machine): set AUTH_TOKENS, or list the host in OPEN_HOSTS`,
  );
}

/** The one route that takes a stream token: `GET /api/sessions/:id/events/stream?token=`. */
export const STREAM_PATH = /^\/api\/sessions\/([^/]+)\/events\/stream$/;

/**
 * Bearer-token auth for `/api/*` (our own rather than Hono's `bearerAuth`: tokens come from the
 * environment per request and name a tenant). When `AUTH_TOKENS` is unset the API is open and the
 * tenant is null (local development). Otherwise the token's name becomes the tenant that owns what it
 * creates. Every configured token is compared, as SHA-256 digests with `timingSafeEqual`, so timing
 * reveals nothing about which one matched. A request to the event stream without `Authorization`
 * may instead carry a stream token (`?token=`, see stream-tokens.ts) of that session, whose tenant
 * must still be configured with the bearer token it was issued under.
 */
export function requireBearerToken(): MiddlewareHandler<AppBindings> {
  let cache: { config: string; entries: Promise<TokenEntry[]> } | null = null;
  return async (c, next) => {
    const config = c.env.AUTH_TOKENS;
    if (config === undefined || config.trim() === "") {
      refuseForeignHost(new URL(c.req.url).hostname, c.env.OPEN_HOSTS);
      c.set("tenant", null);
      c.set("bearer", null);
      return next();
    }
    if (cache?.config !== config) cache = { config, entries: parseAuthTokens(config) };
    const entries = await cache.entries.catch((err) => {
      cache = null;
      throw err;
    });
    const header = c.req.header("authorization");
    // HEAD as well: it answers as GET does, headers only.
    const reads = c.req.method === "GET" || c.req.method === "HEAD";
    const streamToken = reads && header === undefined ? c.req.query("token") : undefined;
    const streamSession = STREAM_PATH.exec(new URL(c.req.url).pathname)?.[1];
    if (streamToken !== undefined && streamSession !== undefined) {
      const secret = c.env.STREAM_TOKEN_SECRET;
      const claims = await verifyStreamToken(secret, streamToken, streamSession, Math.floor(Date.now() / 1000));
      const owners = entries.filter((entry) => entry.name === claims.tenant);
      if (owners.length === 0) throw new HarnessError("stream_token_invalid", "the stream token's tenant is no longer configured");
      if (claims.bearer === null)
        throw new HarnessError(
          "stream_token_invalid",
          "the stream token names no bearer token (it was issued while auth was off, or by an earlier version of this server); ask for a new one",
        );
      const tags = await Promise.all(owners.map((entry) => bearerTag(secret, entry.digest)));
      if (!tags.includes(claims.bearer))
        throw new HarnessError(
          "stream_token_invalid",
          "the stream token was issued under a bearer token that is no longer configured (rotated or removed); ask for a new one",
        );
      c.set("tenant", claims.tenant);
      c.set("bearer", null);
      return next();
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    if (!match) throw new HarnessError("unauthorized", "send 'Authorization: Bearer <token>'");
    const presented = await sha256(match[1]!);
    let matched: TokenEntry | null = null;
    for (const entry of entries) if (crypto.subtle.timingSafeEqual(entry.digest, presented) && matched === null) matched = entry;
    if (matched === null) throw new HarnessError("unauthorized", "the bearer token is not valid");
    c.set("tenant", matched.name);
    c.set("bearer", matched.digest);
    return next();
  };
}
