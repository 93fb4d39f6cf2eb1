import type { MiddlewareHandler } from "hono";
import { clipText, HarnessError } from "../domain";
import { API_ROUTES } from "./route-docs";

/** A documented route's path as a pattern: `:name` is one segment, `:name{re}` its own pattern. */
function pathPattern(path: string): RegExp {
  const source = path
    .split(/(:[A-Za-z]+(?:\{[^}]*\})?)/)
    .map((part) => {
      if (!part.startsWith(":")) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      const custom = /\{([^}]*)\}$/.exec(part);
      return custom ? `(?:${custom[1]})` : "[^/]+";
    })
    .join("");
  return new RegExp(`^${source}/?$`);
}

/** The query parameters each documented method and path takes (HEAD is GET's). */
const ROUTE_QUERIES = API_ROUTES.map((route) => ({
  method: route.method.toUpperCase(),
  pattern: pathPattern(route.path),
  names: Object.keys(route.query?.shape ?? {}),
}));

/** The names a request's query may use: those of every documented route its method and path match. */
function acceptedNames(method: string, pathname: string): Set<string> | null {
  const asMethod = method === "HEAD" ? "GET" : method;
  let accepted: Set<string> | null = null;
  for (const route of ROUTE_QUERIES) {
    if (route.method !== asMethod || !route.pattern.test(pathname)) continue;
    accepted ??= new Set();
    for (const name of route.names) accepted.add(name);
  }
  return accepted;
}

/** `+` is a space in a query; everything else must be percent-encoded UTF-8. */
function decodeQueryPart(text: string): string | null {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return null;
  }
}

const quoted = (name: string) => JSON.stringify(clipText(name, 60));

/**
 * Middleware: a query parameter a route does not take, one given twice, or one that is not valid
 * percent-encoded UTF-8 is 400 `invalid_query` on every route, so `?after=5` on a route without it
 * is refused rather than answered as if absent. The names come from the route docs (`query`), the
 * one place a route's parameters are declared. Unknown paths and methods are left to `route_not_found`.
 */
export function strictQuery(): MiddlewareHandler {
  return async (c, next) => {
    const url = new URL(c.req.url);
    const accepted = acceptedNames(c.req.method, url.pathname);
    if (accepted === null || url.search === "") return next();
    const seen = new Set<string>();
    for (const pair of url.search.slice(1).split("&")) {
      if (pair === "") continue;
      const eq = pair.indexOf("=");
      const name = decodeQueryPart(eq === -1 ? pair : pair.slice(0, eq));
      if (name === null) throw new HarnessError("invalid_query", "a query parameter's name is not valid percent-encoded UTF-8");
      if (!accepted.has(name)) {
        const takes = accepted.size === 0 ? "this route takes none" : `this route takes ${[...accepted].join(", ")}`;
        throw new HarnessError("invalid_query", `unknown query parameter ${quoted(name)}: ${takes}`);
      }
      if (seen.has(name)) throw new HarnessError("invalid_query", `query parameter ${quoted(name)} is given more than once`);
      seen.add(name);
      if (eq !== -1 && decodeQueryPart(pair.slice(eq + 1)) === null)
        throw new HarnessError("invalid_query", `query parameter ${quoted(name)} is not valid percent-encoded UTF-8`);
    }
    return next();
  };
}
