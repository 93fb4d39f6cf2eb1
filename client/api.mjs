// A small HTTP client for the harness API: bearer auth, JSON in and out, coded errors.

/** An error answer of the API (`{"error":{"code","message","requestId"}}`) or a transport failure. */
export class ApiError extends Error {
  /**
   * @param {number} status HTTP status (0: no answer)
   * @param {string} code the registry's code, or `network_error` / `unexpected_answer`
   * @param {string} message
   * @param {string | null} [requestId]
   */
  constructor(status, code, message, requestId = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.requestId = requestId;
  }
}

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
      res = await fetch(`${this.baseUrl}${path}`, { method, headers, body: init.body, signal: init.signal });
    } catch (err) {
      if (init.signal?.aborted) throw err;
      const cause = /** @type {{ cause?: { code?: string } }} */ (err).cause?.code;
      throw new ApiError(0, "network_error", `cannot reach ${this.baseUrl}${cause ? ` (${cause})` : ""}`);
    }
    if (res.ok) return res;
    const text = await res.text();
    try {
      const { error } = JSON.parse(text);
      throw new ApiError(res.status, error.code, error.message, error.requestId ?? res.headers.get("x-request-id"));
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
    return res.json();
  }

  /** @param {Uint8Array} archive a tar.gz @returns {Promise<any>} */
  uploadWorkspace(archive) {
    return this.request("POST", "/api/workspaces", { body: archive, type: "application/gzip" }).then((r) => r.json());
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
    const query = new URLSearchParams();
    if (page.limit !== undefined) query.set("limit", String(page.limit));
    if (page.cursor) query.set("cursor", page.cursor);
    const qs = query.toString();
    return this.json("GET", `/api/sessions${qs ? `?${qs}` : ""}`);
  }

  /**
   * The messages of a session (JSONL, parsed).
   * @param {string} id
   * @returns {Promise<Record<string, any>[]>}
   */
  async messages(id) {
    const text = await (await this.request("GET", `/api/sessions/${encodeURIComponent(id)}/messages`)).text();
    return text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line));
  }

  /** @param {string} id @returns {Promise<string>} the unified diff of the session's changes */
  async changes(id) {
    return (await this.request("GET", `/api/sessions/${encodeURIComponent(id)}/changes`)).text();
  }
}
