import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { HarnessError } from "../domain";
import type { AppBindings } from "./context";

/** Request headers a browser may send cross-origin (besides the CORS-safelisted ones). */
export const CORS_ALLOW_HEADERS = ["Authorization", "Content-Type", "Last-Event-ID", "Idempotency-Key", "X-Request-Id"];
/** Response headers a cross-origin page may read. */
export const CORS_EXPOSE_HEADERS = ["x-run-id", "x-request-id", "retry-after", "location", "x-log-seq"];
const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/i;

/** Which origins may call the API: none, any (`*`), or a list. */
export type CorsOrigins = "none" | "any" | readonly string[];

/**
 * Parses `CORS_ORIGINS`: `*`, or origins (`https://app.example.com`, `http://localhost:5173`)
 * separated by commas. `*` is refused while auth is on (a token pasted into any page would work
 * from every site), and so is anything that is not an origin: the API then fails closed.
 */
export function parseCorsOrigins(config: string | undefined, authOn: boolean): CorsOrigins {
  const entries = (config ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  if (entries.length === 0) return "none";
  if (entries.includes("*")) {
    if (entries.length > 1) throw new HarnessError("cors_misconfigured", "CORS_ORIGINS is either * or a list of origins, not both");
    if (authOn) throw new HarnessError("cors_misconfigured", "CORS_ORIGINS=* is only allowed while auth is off (AUTH_TOKENS unset)");
    return "any";
  }
  return entries.map(canonicalOrigin);
}

/**
 * An entry as a browser names its origin in `Origin`: host and scheme in lower case, no default
 * port. Compared as written, `https://App.example.com:443` was accepted and matched no page (hunt 60).
 */
function canonicalOrigin(entry: string): string {
  const url = ORIGIN.test(entry) ? URL.parse(entry) : null;
  if (url === null)
    throw new HarnessError(
      "cors_misconfigured",
      `CORS_ORIGINS entry ${JSON.stringify(entry.slice(0, 80))} is not an origin like https://app.example.com`,
    );
  return url.origin;
}

/**
 * CORS for the Worker's routes (hono/cors with the origins read per request): preflights are
 * answered here, before auth, for every path; bearer tokens, not cookies, so no credentials mode.
 */
export function corsPolicy(): MiddlewareHandler<AppBindings> {
  return async (c, next) => {
    const origins = parseCorsOrigins(c.env.CORS_ORIGINS, (c.env.AUTH_TOKENS ?? "").trim() !== "");
    const handler = cors({
      origin: (origin) => (origins === "any" ? "*" : origins !== "none" && origins.includes(origin) ? origin : null),
      allowMethods: ["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
      allowHeaders: CORS_ALLOW_HEADERS,
      exposeHeaders: CORS_EXPOSE_HEADERS,
      maxAge: 600,
    });
    refuseCrossSiteWrite(c.req.raw, origins);
    return handler(c, next);
  };
}

/** Methods that change something; a browser sends some of them cross-site without a preflight. */
const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * A write a browser sent from a page of another site that CORS does not allow. A form post, or a
 * `fetch` with `mode: "no-cors"` and a body of a CORS-safelisted type (or none), reaches the Worker
 * without a preflight; the answer is opaque to the page, but the write would be done. With auth on it
 * fails for want of the token; with auth off (a local `npm run dev`) any page the developer visits
 * could upload workspaces or start runs. Browsers name the page's origin in `Origin`; other clients
 * (curl, the terminal client) send none and are not affected.
 */
function refuseCrossSiteWrite(request: Request, origins: CorsOrigins): void {
  const origin = request.headers.get("origin");
  if (origin === null || !WRITES.has(request.method)) return;
  if (origin === new URL(request.url).origin || origins === "any" || (origins !== "none" && origins.includes(origin))) return;
  throw new HarnessError(
    "origin_not_allowed",
    `a ${request.method} from a page on ${JSON.stringify(origin.slice(0, 100))} is not allowed; to call the API from that origin, list it in CORS_ORIGINS`,
  );
}
