// A small HTTP client for the harness API: bearer auth, JSON in and out, coded errors.

/** An error answer of the API (`{"error":{"code","message","requestId"}}`) or a transport failure. */
export class ApiError extends Error {
  /**
   * @param {number} status HTTP status (0: no answer)
   * @param {string} code the registry's code, or `network_error` / `unexpected_answer`
   * @param {string} message
   * @param {string | null} [requestId]
   * @param {number | null} [retryAfterSeconds] the answer's Retry-After, when it had one in seconds
   */
  constructor(status, code, message, requestId = null, retryAfterSeconds = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.requestId = requestId;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Tries of an upload the server is too busy to take (503 `ingest_busy`), and the wait when it names none. */
const UPLOAD_ATTEMPTS = 5;
const DEFAULT_RETRY_AFTER_SECONDS = 5;
/**
 * Tries of a download (messages, changes) the session refuses for serving its maximum at once (429
 * `too_many_downloads`): 13 waits of 5 s outlast the 60 s after which the server frees a place nobody
 * reads from.
 */
const DOWNLOAD_ATTEMPTS = 14;

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class HarnessApi {
  /**
   * @param {string} baseUrl e.g. http://localhost:8787
   * @param {string | undefined} token a bearer token of AUTH_TOKENS, when auth is on
   */
  constructor(baseUrl, token) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.token = token;
  }

  /**
   * A request; non-2xx answers become ApiError.
   * @param {string} method
   * @param {string} path
   * @param {{ body?: RequestInit["body"]; type?: string; headers?: Record<string, string>; signal?: AbortSignal }} [init]
   * @returns {Promise<Response>}
   */
  async request(method, path, init = {}) {
    /** @type {Record<string, string>} */
    const headers = { ...init.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (init.type) headers["content-type"] = init.type;
    let res;
    try {
      // Not followed: a redirect to another origin drops the token (a wrong "unauthorized"), and a 301
      // turns the upload's POST into a GET of the workspace list (hunt 77).
      res = await fetch(`${this.baseUrl}${path}`, { method, headers, body: init.body, signal: init.signal, redirect: "manual" });
    } catch (err) {
      if (init.signal?.aborted) throw err;
      const cause = /** @type {{ cause?: { code?: string } }} */ (err).cause?.code;
      throw new ApiError(0, "network_error", `cannot reach ${this.baseUrl}${cause ? ` (${cause})` : ""}`);
    }
    if (res.ok) return res;
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const location = res.headers.get("location");
      throw new ApiError(
        res.status,
        "redirected",
        `${this.baseUrl} answered ${res.status}, a redirect${location ? ` to ${location}` : ""}: give the harness's own address with --url`,
      );
    }
    const text = await res.text();
    const retryAfter = Number.parseInt(res.headers.get("retry-after") ?? "", 10);
    try {
      const { error } = JSON.parse(text);
      throw new ApiError(
        res.status,
        error.code,
        error.message,
        error.requestId ?? res.headers.get("x-request-id"),
        Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : null,
      );
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw new ApiError(res.status, "unexpected_answer", `${method} ${path} answered ${res.status}: ${text.slice(0, 200)}`);
    }
  }

  /**
   * A JSON request and its JSON answer.
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body]
   * @returns {Promise<any>}
   */
  async json(method, path, body) {
    const res = await this.request(method, path, body === undefined ? {} : { body: JSON.stringify(body), type: "application/json" });
    const text = await res.text();
    try {
      return JSON.parse(text);
    } catch {
      // Not the harness (a page, a proxy's login, another port): say so, without the page's bytes.
      const type = res.headers.get("content-type") ?? "no content type";
      throw new ApiError(
        res.status,
        "unexpected_answer",
        `${method} ${path} answered ${res.status} with ${type}, not JSON: is --url the harness?`,
      );
    }
  }

  /**
   * Uploads a tar.gz. A server busy ingesting other uploads (503 `ingest_busy`) is asked again after
   * its Retry-After, up to UPLOAD_ATTEMPTS tries in all; nothing of a refused try was stored.
   * @param {Uint8Array} archive
   * @param {{ onBusy?: (waitSeconds: number) => void; wait?: (ms: number) => Promise<unknown> }} [opts]
   * @returns {Promise<any>}
   */
  async uploadWorkspace(archive, opts = {}) {
    const res = await whenFree("ingest_busy", UPLOAD_ATTEMPTS, opts, () =>
      this.request("POST", "/api/workspaces", { body: archive, type: "application/gzip" }),
    );
    return res.json();
  }

  /** @param {{ workspaceId?: string; title?: string }} input */
  createSession(input) {
    return this.json("POST", "/api/sessions", input);
  }

  /** @param {string} id */
  session(id) {
    return this.json("GET", `/api/sessions/${encodeURIComponent(id)}`);
  }

  /** @param {{ limit?: number; cursor?: string }} [page] */
  listSessions(page = {}) {
    return this.json("GET", `/api/sessions${pageQuery(page)}`);
  }

  /** @param {{ limit?: number; cursor?: string }} [page] */
  listWorkspaces(page = {}) {
    return this.json("GET", `/api/workspaces${pageQuery(page)}`);
  }

  /**
   * Aborts the session's active run, or else its compaction under way (runId null); with `runId`, only
   * that run (`{aborted: false}` when it is not the active one).
   * @param {string} id @param {string} [runId] @returns {Promise<{ aborted: boolean; runId: string | null }>}
   */
  abort(id, runId) {
    return this.json("POST", `/api/sessions/${encodeURIComponent(id)}/abort`, runId ? { runId } : {});
  }

  /** Deletes a session (`s_...`) or a workspace snapshot (`w_...`). @param {string} id */
  async delete(id) {
    const kind = id.startsWith("w_") ? "workspaces" : "sessions";
    await this.request("DELETE", `/api/${kind}/${encodeURIComponent(id)}`);
  }

  /**
   * The messages of a session (JSONL, parsed); with `after` (a log seq), only those stored after it.
   * A session serving its maximum of downloads at once (429 `too_many_downloads`) is asked again after
   * its Retry-After, up to DOWNLOAD_ATTEMPTS tries in all.
   * @param {string} id
   * @param {{ after?: number }} [from]
   * @param {{ onBusy?: (waitSeconds: number) => void; wait?: (ms: number) => Promise<unknown> }} [opts]
   * @returns {Promise<Record<string, any>[]>}
   */
  async messages(id, from = {}, opts = {}) {
    const query = from.after === undefined ? "" : `?after=${from.after}`;
    const path = `/api/sessions/${encodeURIComponent(id)}/messages${query}`;
    for (let attempt = 1; ; attempt++) {
      const text = await (await whenFree("too_many_downloads", DOWNLOAD_ATTEMPTS, opts, () => this.request("GET", path))).text();
      const messages = parseLines(text);
      if (messages) return messages;
      // A download the server cut short ends like a complete one, its last line unfinished: read it again.
      if (attempt >= CUT_DOWNLOAD_ATTEMPTS) {
        throw new ApiError(0, "download_cut", `the session's messages were cut short ${attempt} times while downloading; try again`);
      }
    }
  }

  /**
   * The unified diff of the session's changes; asked again while the session serves its maximum of
   * downloads, as `messages` is.
   * @param {string} id
   * @param {{ onBusy?: (waitSeconds: number) => void; wait?: (ms: number) => Promise<unknown> }} [opts]
   * @returns {Promise<string>}
   */
  async changes(id, opts = {}) {
    const path = `/api/sessions/${encodeURIComponent(id)}/changes`;
    return (await whenFree("too_many_downloads", DOWNLOAD_ATTEMPTS, opts, () => this.request("GET", path))).text();
  }
}

/** Downloads of the messages cut short (a line that does not parse) before the client gives up. */
const CUT_DOWNLOAD_ATTEMPTS = 3;

/** The JSON lines of a download, or null when one does not parse (the download was cut short). @param {string} text */
function parseLines(text) {
  try {
    return text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => /** @type {Record<string, any>} */ (JSON.parse(line)));
  } catch {
    return null;
  }
}

/** `?limit=&cursor=` of a page request ("" when neither is given). @param {{ limit?: number; cursor?: string }} page */
function pageQuery(page) {
  const query = new URLSearchParams();
  if (page.limit !== undefined) query.set("limit", String(page.limit));
  if (page.cursor) query.set("cursor", page.cursor);
  const qs = query.toString();
  return qs ? `?${qs}` : "";
}

/**
 * `send`, asked again while the server answers `busyCode` (it stored nothing), after each answer's
 * Retry-After (DEFAULT_RETRY_AFTER_SECONDS when it names none), up to `attempts` tries in all.
 * @template T
 * @param {string} busyCode
 * @param {number} attempts
 * @param {{ onBusy?: (waitSeconds: number) => void; wait?: (ms: number) => Promise<unknown> }} opts
 * @param {() => Promise<T>} send
 * @returns {Promise<T>}
 */
async function whenFree(busyCode, attempts, { onBusy, wait = sleep }, send) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== busyCode || attempt >= attempts) throw err;
      const seconds = err.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
      onBusy?.(seconds);
      await wait(seconds * 1000);
    }
  }
}
