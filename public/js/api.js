// The viewer's calls to the harness API (same origin). A bearer token, when the harness needs one,
// is asked for once and kept in this tab's sessionStorage.

const TOKEN_KEY = "pi-harness-token";

/** The code of an answer that is not the harness's own error (no JSON `error` in it: a proxy's page, say). */
export const UNEXPECTED_ANSWER = "unexpected_answer";

/** An error answer: `{"error":{"code","message","requestId"}}`. */
export class ApiError extends Error {
  constructor(status, code, message, retryAfterSeconds = null) {
    super(message);
    this.status = status;
    this.code = code;
    /** The answer's Retry-After in seconds, when it had one. */
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * Tries of a download (a log read, the changes) the session refuses for serving its maximum at once
 * (429 `too_many_downloads`): 13 waits of 5 s outlast the 60 s after which it frees a place nobody
 * reads from.
 */
const DOWNLOAD_ATTEMPTS = 14;

export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY),
  set: (value) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** The stored token as an Authorization header (none when there is no token). */
export function authHeaders() {
  const bearer = token.get();
  return bearer ? { authorization: `Bearer ${bearer}` } : {};
}

/** A request with the stored token; non-2xx answers throw ApiError. */
export async function request(method, path, { body, headers = {} } = {}) {
  const all = { ...headers, ...authHeaders() };
  if (body !== undefined) all["content-type"] = "application/json";
  const res = await fetch(path, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.ok) return res;
  let error = { code: UNEXPECTED_ANSWER, message: `${method} ${path} answered ${res.status}` };
  try {
    error = (await res.json()).error ?? error;
  } catch {
    // not a JSON error body
  }
  const retryAfter = Number.parseInt(res.headers.get("retry-after") ?? "", 10);
  throw new ApiError(res.status, error.code, error.message, Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : null);
}

export const getJson = async (path) => (await request("GET", path)).json();

/**
 * A paged list (`?cursor=`, `{<field>: [...], nextCursor}`) read from the page at `cursor` (null: the
 * first) to the last: the items, and the cursor of the last page, where a later read picks up what was
 * added since (it reads that page again).
 */
export async function getPages(path, field, cursor = null) {
  const items = [];
  for (let at = cursor; ; ) {
    const page = await getJson(at === null ? path : `${path}?cursor=${encodeURIComponent(at)}`);
    for (const item of page[field]) items.push(item);
    if (!page.nextCursor) return { items, cursor: at };
    at = page.nextCursor;
  }
}

/** A JSONL answer, parsed line by line. */
export async function getJsonl(path) {
  return (await getLog(path)).records;
}

/**
 * A session's log read (`.../messages`, `/events`, `/trace`) from the record after `after`: the
 * records, and `through`, the `after` of the next read that wants only what came since.
 */
export async function getLog(path, after = 0) {
  const res = await download(after > 0 ? `${path}?after=${after}` : path);
  const text = await res.text();
  const records = text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line));
  return { records, through: Number(res.headers.get("x-log-seq") ?? after) };
}

/** A GET of a download, asked again after the answer's Retry-After while the session is serving its maximum of them. */
export async function download(path) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request("GET", path);
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== "too_many_downloads" || attempt >= DOWNLOAD_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, (err.retryAfterSeconds ?? 5) * 1000));
    }
  }
}

/** A session's event stream, from the event after `afterSeq`. */
export const eventStreamPath = (sessionId, afterSeq) => `/api/sessions/${encodeURIComponent(sessionId)}/events/stream?after=${afterSeq}`;

/**
 * The URL of a session's event stream for EventSource, which cannot send Authorization: with auth
 * on, a short-lived stream token (`?token=`) stands in for the bearer token.
 */
export async function eventStreamUrl(sessionId, afterSeq) {
  const url = eventStreamPath(sessionId, afterSeq);
  if (!token.get()) return url;
  const res = await request("POST", `/api/sessions/${encodeURIComponent(sessionId)}/stream-token`, { body: {} });
  const { token: streamToken } = await res.json();
  return `${url}&token=${encodeURIComponent(streamToken)}`;
}
