import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../../src/api/app";
import { STREAM_PATH } from "../../src/api/auth";
import { openApiDocument, openApiPath } from "../../src/api/openapi";
import { CLIENT_REQUEST_ID } from "../../src/api/request-context";
import { API_ROUTES } from "../../src/api/route-docs";
import { AbortResult, SessionCreated, SessionInfo, SessionList } from "../../src/api/schemas";
import { API_ERROR_CODES, DENIAL_CODES, ERROR_REGISTRY, EVENT_TYPES, RUN_ERROR_CODES } from "../../src/domain";
import { detectArchiveFormat } from "../../src/workspace/archive-format";

type Json = Record<string, unknown>;
const doc = openApiDocument() as Json & { paths: Record<string, Record<string, Json>>; components: { schemas: Record<string, Json> } };

/** A schema of the document with its `#/components/schemas/...` references inlined. */
function resolved(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(resolved);
  if (typeof schema !== "object" || schema === null) return schema;
  const ref = (schema as Json).$ref;
  if (typeof ref === "string" && ref.startsWith("#/components/schemas/")) return resolved(doc.components.schemas[ref.slice(21)]);
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, resolved(v)]));
}

/**
 * Where a schema uses the `default` keyword (a property called "default" is not one): the JSON
 * pointers of those schemas. Walks the keywords that hold subschemas.
 */
function defaultKeywords(schema: unknown, at = ""): string[] {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return [];
  const found: string[] = "default" in schema ? [at] : [];
  for (const [key, value] of Object.entries(schema as Json)) {
    if (["properties", "patternProperties", "$defs", "dependentSchemas"].includes(key) && typeof value === "object" && value !== null)
      for (const [name, sub] of Object.entries(value)) found.push(...defaultKeywords(sub, `${at}/${key}/${name}`));
    else if (["anyOf", "oneOf", "allOf", "prefixItems"].includes(key) && Array.isArray(value))
      for (const [i, sub] of value.entries()) found.push(...defaultKeywords(sub, `${at}/${key}/${i}`));
    else if (["items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"].includes(key))
      found.push(...defaultKeywords(value, `${at}/${key}`));
  }
  return found;
}

/** Every operation of the document: [method, path, operation]. */
const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([m, op]) => [m, path, op] as const));
const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));

describe("GET /openapi.json", () => {
  it("serves an OpenAPI 3.1 document without auth", async () => {
    const res = await createApp().fetch(new Request("http://localhost/openapi.json"), { ...env, AUTH_TOKENS: "acme:tok-1" });
    expect(res.status).toBe(200);
    const served = (await res.json()) as Json;
    expect(served.openapi).toBe("3.1.0");
    expect(served).toEqual(JSON.parse(JSON.stringify(doc)));
    // It describes itself as what it is: an object.
    const self = (doc.paths["/openapi.json"] as Json).get as { responses: Record<string, { content: Record<string, { schema: Json }> }> };
    expect(self.responses["200"]!.content["application/json"]!.schema).toEqual({ type: "object", description: "the OpenAPI 3.1 document" });
  });

  it("documents every route Hono has registered, and no other, with a HEAD beside every GET", () => {
    const registered = createApp()
      .routes.filter((r) => r.method !== "ALL")
      .map((r) => `${r.method.toLowerCase()} ${openApiPath(r.path)}`);
    const heads = registered.filter((r) => r.startsWith("get ")).map((r) => r.replace(/^get /, "head "));
    const documented = operations.map(([method, path]) => `${method} ${path}`);
    expect(new Set(documented)).toEqual(new Set([...registered, ...heads]));
    expect(documented.length).toBe(registered.length + heads.length);
    expect(API_ROUTES.length).toBe(registered.length);
  });

  it("documents each HEAD as its GET without bodies, and the server answers HEAD with the documented status", async () => {
    const messages = doc.paths["/api/sessions/{id}/messages"]! as Record<string, Json>;
    const get = messages.get as { responses: Record<string, Json>; parameters: Json[] };
    const head = messages.head as { operationId: string; summary: string; responses: Record<string, Json>; parameters: Json[] };
    expect(head.operationId).toBe("headSessionsIdMessages");
    expect(head.summary).toBe(`${(get as unknown as { summary: string }).summary} (status and headers only, no body)`);
    expect(head.parameters).toEqual(get.parameters);
    expect(Object.keys(head.responses)).toEqual(Object.keys(get.responses));
    for (const [status, response] of Object.entries(head.responses)) {
      const { content: _content, ...rest } = get.responses[status]!;
      expect(response).toEqual(rest);
    }
    const created = SessionCreated.parse(await (await api("/api/sessions", { method: "POST" })).json());
    const res = await api(`/api/sessions/${created.sessionId}/messages`, { method: "HEAD" });
    expect([res.status, await res.text()]).toEqual([200, ""]);
    expect(Object.keys(head.responses)).toContain("200");
  });

  it("names every error code of the registry: API codes per route, run codes and denial reasons in the event schema", () => {
    const answered = new Set(
      operations.flatMap(([, , op]) =>
        Object.values(op.responses as Record<string, Json>).flatMap((r) => (r["x-error-codes"] as string[]) ?? []),
      ),
    );
    // flush_failed is answered by the session object's flush RPC, which no HTTP route exposes.
    const unrouted = ["flush_failed"];
    expect([...answered].sort()).toEqual(API_ERROR_CODES.filter((code) => !unrouted.includes(code)).sort());
    // Each code is answered with the registry's status.
    for (const [, path, op] of operations)
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>))
        for (const code of (response["x-error-codes"] as (keyof typeof ERROR_REGISTRY)[]) ?? [])
          expect([path, code, Number(status)]).toEqual([path, code, ERROR_REGISTRY[code].status]);
    expect(Object.keys(doc["x-error-codes"] as Json).sort()).toEqual(Object.keys(ERROR_REGISTRY).sort());
    const events = JSON.stringify(doc.components.schemas.SeqAgentEvent);
    for (const code of [...RUN_ERROR_CODES, ...DENIAL_CODES]) expect(events).toContain(`"${code}"`);
  });

  it("documents on every route, /healthz and /openapi.json included, the 500 a malformed CORS_ORIGINS answers", () => {
    for (const [method, path, op] of operations) {
      const codes = ((op.responses as Record<string, Json>)["500"]?.["x-error-codes"] as string[] | undefined) ?? [];
      expect([method, path, codes.includes("cors_misconfigured")]).toEqual([method, path, true]);
    }
  });

  it("describes every SSE event type, with its seq", () => {
    const variants = (doc.components.schemas.SeqAgentEvent as { oneOf: { properties: { type: { const: string } }; required: string[] }[] })
      .oneOf;
    expect(variants.map((v) => v.properties.type.const)).toEqual([...EVENT_TYPES]);
    for (const variant of variants) expect(variant.required).toContain("seq");
  });

  it("every example validates against its schema: the zod schema and the document's JSON Schema", () => {
    let checked = 0;
    for (const route of API_ROUTES) {
      for (const [content, io] of [
        [route.body, "input"],
        [route.answer, "output"],
      ] as const) {
        if (!content || !("schema" in content) || content.example === undefined) continue;
        const parsed = io === "input" ? content.schema.safeParse(content.example) : content.schema.safeParse(content.example);
        expect(parsed.success, `${route.method} ${route.path} ${io}`).toBe(true);
        const op = doc.paths[openApiPath(route.path)]![route.method]! as Json;
        const media = io === "input" ? (op.requestBody as Json).content : ((op.responses as Json)[route.status] as Json).content;
        const documented = (media as Record<string, { schema: unknown; example: unknown }>)["application/json"]!;
        expect(documented.example).toEqual(content.example);
        const fromDoc = z.fromJSONSchema(resolved(documented.schema) as z.core.JSONSchema.JSONSchema);
        expect(fromDoc.safeParse(content.example).success, `${route.method} ${route.path} ${io} (JSON Schema)`).toBe(true);
        // ...and the document's schema is strict: an unknown field is refused.
        if (typeof content.example === "object" && content.example !== null && !Array.isArray(content.example))
          expect(fromDoc.safeParse({ ...content.example, unexpectedField: 1 }).success).toBe(false);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(12);
  });

  it("documents the resume header, the stream-token query and the response headers", () => {
    const stream = doc.paths["/api/sessions/{id}/events/stream"]!.get as {
      parameters: { name: string; in: string; $ref?: string }[];
      responses: Json;
    };
    expect(stream.parameters.map((p) => p.$ref ?? `${p.in}:${p.name}`)).toEqual([
      "path:id",
      "query:after",
      "query:token",
      "query:runId",
      "query:messageId",
      "header:Last-Event-ID",
      "#/components/parameters/RequestId",
    ]);
    expect(Object.keys((stream.responses["200"] as { headers: Json }).headers)).toEqual(["x-request-id", "cache-control", "x-run-id"]);
    expect(stream.responses["204"]).toBeDefined();
    // app.onError adds these to every 401, 429 and 503 answer.
    const upload = (doc.paths["/api/workspaces"]!.post as { responses: Record<string, { headers: Json }> }).responses;
    expect(Object.keys(upload["503"]!.headers)).toEqual(["x-request-id", "cache-control", "retry-after"]);
    expect(Object.keys(upload["401"]!.headers)).toEqual(["x-request-id", "cache-control", "www-authenticate"]);
    expect(Object.keys(upload["400"]!.headers)).toEqual(["x-request-id", "cache-control"]);
    const messages = (doc.paths["/api/sessions/{id}/messages"]!.get as { responses: Record<string, { headers: Json }> }).responses;
    expect(Object.keys(messages["429"]!.headers)).toEqual(["x-request-id", "cache-control", "retry-after"]);
  });

  it("real answers fit the documented schemas", async () => {
    const created = SessionCreated.parse(await (await api("/api/sessions", { method: "POST" })).json());
    SessionInfo.parse(await (await api(`/api/sessions/${created.sessionId}`)).json());
    SessionList.parse(await (await api("/api/sessions?limit=2")).json());
    AbortResult.parse(await (await api(`/api/sessions/${created.sessionId}/abort`, { method: "POST" })).json());
  });
});

describe("the document as a contract for generated clients (hunt 38)", () => {
  type Operation = { requestBody?: { content: Record<string, { schema: Json }> }; responses: Record<string, Json> };
  const op = (method: string, path: string) => doc.paths[path]![method] as unknown as Operation;

  it("every operation with a body, and only those, lists 415 unsupported_media_type (a Content-Encoding is refused)", async () => {
    const withBody = operations.filter(([, , o]) => o.requestBody !== undefined).map(([m, p]) => `${m} ${p}`);
    const listing = operations
      .filter(([, , o]) =>
        ((o.responses as Record<string, Json>)["415"]?.["x-error-codes"] as string[] | undefined)?.includes("unsupported_media_type"),
      )
      .map(([m, p]) => `${m} ${p}`);
    expect(withBody.length).toBe(API_ROUTES.filter((r) => r.body).length);
    expect(listing.sort()).toEqual(withBody.sort());
    expect(op("post", "/api/workspaces").responses["415"]!["x-error-codes"]).toEqual(["archive_unsupported", "unsupported_media_type"]);
    // What the upload answers to a gzip sent as Content-Encoding.
    const res = await api("/api/workspaces", {
      method: "POST",
      body: new Uint8Array([0x1f, 0x8b, 8, 0]),
      headers: { "content-type": "application/gzip", "content-encoding": "gzip" },
    });
    expect(res.status).toBe(415);
    const code = ((await res.json()) as { error: { code: string } }).error.code;
    expect(op("post", "/api/workspaces").responses["415"]!["x-error-codes"]).toContain(code);
  });

  it("declares Location on the 201s that create a session or a workspace, and x-log-seq on the JSONL exports", async () => {
    const declaring = (header: string) =>
      operations
        .filter(([, , o]) => Object.values(o.responses as Record<string, { headers?: Json }>).some((r) => r.headers?.[header]))
        .map(([m, p]) => `${m} ${p}`)
        .sort();
    expect(declaring("location")).toEqual([
      "post /api/sessions",
      "post /api/sessions/import",
      "post /api/sessions/{id}/fork",
      "post /api/workspaces",
    ]);
    expect(declaring("x-log-seq")).toEqual([
      "get /api/sessions/{id}/events",
      "get /api/sessions/{id}/messages",
      "get /api/sessions/{id}/trace",
      "head /api/sessions/{id}/events",
      "head /api/sessions/{id}/messages",
      "head /api/sessions/{id}/trace",
    ]);
    const created = op("post", "/api/sessions").responses["201"] as { headers: Record<string, Json> };
    expect(Object.keys(created.headers)).toEqual(["x-request-id", "cache-control", "location"]);
    expect(created.headers.location).toEqual({ description: "the session created: /api/sessions/{id}", schema: { type: "string" } });
    const exported = op("get", "/api/sessions/{id}/messages").responses["200"] as { headers: Record<string, Json> };
    expect(Object.keys(exported.headers)).toEqual(["x-request-id", "cache-control", "x-log-seq"]);
    expect(exported.headers["x-log-seq"]!.schema).toEqual({ type: "integer", minimum: 0 });
    // A file download's length (on HEAD too) and nosniff, both file routes (hunt 66).
    for (const path of ["/api/sessions/{id}/files/{path}", "/api/workspaces/{wid}/files/{path}"])
      for (const method of ["get", "head"] as const)
        expect([method, path, Object.keys((op(method, path).responses["200"] as { headers: Json }).headers)]).toEqual([
          method,
          path,
          ["x-request-id", "cache-control", "content-length", "x-content-type-options"],
        ]);
    // ...and the server sends them.
    const res = await api("/api/sessions", { method: "POST" });
    const { sessionId } = (await res.json()) as { sessionId: string };
    expect(res.headers.get("location")).toBe(`/api/sessions/${sessionId}`);
    for (const log of ["messages", "events", "trace"]) {
      const read = await api(`/api/sessions/${sessionId}/${log}`);
      await read.arrayBuffer();
      expect([log, read.headers.get("x-log-seq")]).toEqual([log, expect.stringMatching(/^\d+$/)]);
    }
  });

  it("request schemas carry no default keyword (said in words instead), response schemas keep theirs", () => {
    const requestDefaults = operations.flatMap(([m, p, o]) =>
      Object.entries((o as unknown as Operation).requestBody?.content ?? {}).flatMap(([type, media]) =>
        defaultKeywords(resolved(media.schema)).map((at) => `${m} ${p} ${type}${at}`),
      ),
    );
    expect(requestDefaults).toEqual([]);
    const prompt = doc.components.schemas.Prompt as { properties: Record<string, Json>; required: string[] };
    expect(prompt.required).toEqual(["text"]);
    expect(prompt.properties.allowWrite).toEqual({ type: "boolean", description: "default: false" });
    expect(prompt.properties.maxTurns!.description).toBe("default: 6");
    expect(prompt.properties.timeoutMs!.description).toBe("default: 120000");
    expect((doc.components.schemas.Judgement as { properties: Record<string, Json> }).properties.detail!.description).toBe('default: ""');
    expect((doc.components.schemas.Promote as { properties: Record<string, Json> }).properties.write!.description).toBe("default: false");
    expect((doc.components.schemas.StreamTokenRequest as { properties: Record<string, Json> }).properties.ttlSeconds!.description).toBe(
      "default: 300",
    );
    // An answer always carries a defaulted field: there the keyword stays.
    const responseDefaults = Object.entries(doc.components.schemas)
      .filter(([, schema]) => defaultKeywords(schema).length > 0)
      .map(([name]) => name);
    expect(responseDefaults).toEqual(["TraceImportSummary"]);
    expect((doc.components.schemas.TraceImportSummary as { properties: Record<string, Json> }).properties.casesNotKept!.default).toBe(0);
  });

  it("describes judgeName's rule, which JSON Schema cannot check", () => {
    const judgeName = (doc.components.schemas.Judgement as { properties: Record<string, Json> }).properties.judgeName!;
    expect(judgeName.description).toBe(
      "must be one line without control or format characters, show at least one visible character, and not start or end with a space or a blank letter; nor be the name of one of the harness's own judges (tool-error, policy, run-limit, model-error) or read as one (Tool-Error, full-width letters)",
    );
    expect(judgeName.description).toMatch(/^\S[^\p{Cc}\p{Cf}]*\S$/u);
  });

  it("lists every media type a body is taken in", async () => {
    const jsonl = ["application/x-ndjson", "application/jsonl", "application/x-jsonlines"];
    expect(Object.keys(op("post", "/api/sessions/import").requestBody!.content)).toEqual(jsonl);
    expect(Object.keys(op("post", "/api/projects/{pid}/traces").requestBody!.content)).toEqual(jsonl);
    const archive = Object.keys(op("post", "/api/workspaces").requestBody!.content);
    expect(archive).toEqual([
      "application/x-tar",
      "application/tar",
      "application/gzip",
      "application/x-gzip",
      "application/x-gtar",
      "application/x-compressed-tar",
      "application/tar+gzip",
      "application/zip",
      "application/x-zip-compressed",
      "application/octet-stream",
    ]);
    // Each names a format the upload reads without magic bytes, but application/octet-stream (magic bytes only).
    const noMagic = new Uint8Array(16);
    for (const type of archive.filter((t) => t !== "application/octet-stream"))
      expect(() => detectArchiveFormat(type, noMagic), type).not.toThrow();
    expect(detectArchiveFormat("application/octet-stream", new Uint8Array([0x50, 0x4b, 3, 4]))).toBe("zip");
    // Both JSONL routes take all three: an import in application/x-jsonlines is read, not refused.
    for (const type of jsonl) {
      const res = await api("/api/sessions/import", { method: "POST", body: "", headers: { "content-type": type } });
      const body = (await res.json()) as { error?: { code: string } };
      expect([type, body.error?.code]).not.toEqual([type, "unsupported_media_type"]);
      expect([type, res.status]).toEqual([type, 400]);
    }
  });

  it("says where each stream ends: a withdrawn follow-up's at queued_message_withdrawn, a steer not taken in the follow-up's run", () => {
    const described = (method: string, path: string) =>
      (op(method, path).responses["200"] as { content: Record<string, { schema: { description: string } }> }).content["text/event-stream"]!
        .schema.description;
    const frames = `Frames \`id: <seq>\`, \`event: agent_event\`, \`data: <event JSON with its seq>\`; a \`retry:\` field first and a \`: ping\` comment at least every 15 s. Event types: ${EVENT_TYPES.join(", ")}.`;
    const cut =
      "A stream cut short (a client that stops reading, a restart) is resumed from the last id read; a session keeps 8 streams whose clients read nothing for 5 s with 256 KiB waiting (the server 16 of all sessions together), ends the one stalled longest when another stalls, and ends any stream whose client has read nothing for 60 s.";
    expect(described("post", "/api/sessions/{id}/messages/stream")).toBe(
      `${frames} The stream ends after the terminal event (agent_completed or agent_error) of the run that carries the prompt, except: a follow-up withdrawn before its run starts ends its stream at queued_message_withdrawn; a steer the run ends without taking goes on past that run's terminal event, with message_queued (mode followUp) and then the run that now carries it, to that run's terminal event. ${cut}`,
    );
    expect(described("get", "/api/sessions/{id}/events/stream")).toBe(
      `${frames} Without runId the stream ends once the events after Last-Event-ID are sent and the active run, if any, has ended (agent_completed or agent_error). With runId it ends at that run's terminal event, or at queued_message_withdrawn for a follow-up withdrawn before its run started; with messageId too it follows the steer as its own stream did (past the run's terminal event, into the follow-up run that carries it, when the run did not take it). ${cut}`,
    );
  });
});

describe("the document as generated SDKs read it (hunt 111)", () => {
  type Media = Record<string, { schema: Json; "x-item-schema"?: Json }>;
  type Operation = {
    requestBody?: { content: Media };
    responses: Record<string, { content?: Media }>;
    parameters: Json[];
    security?: Json[];
  };
  const op = (method: string, path: string) => doc.paths[path]![method] as unknown as Operation;

  it("an archive or JSONL body is bytes (format binary, contentMediaType), so an SDK sends it as it is, not JSON-encoded", () => {
    const upload = op("post", "/api/workspaces").requestBody!.content;
    expect(upload["application/gzip"]!.schema).toEqual({
      type: "string",
      format: "binary",
      contentMediaType: "application/gzip",
      description:
        "the archive: tar, tar.gz or zip, told by its magic bytes, else by its Content-Type (an old v7 tar, without magic, needs a tar type)",
    });
    expect(op("post", "/api/sessions/import").requestBody!.content["application/x-ndjson"]).toEqual({
      schema: {
        type: "string",
        format: "binary",
        contentMediaType: "application/x-ndjson",
        description: "one message per line, as exported",
      },
      "x-item-schema": { $ref: "#/components/schemas/AgentMessage" },
    });
    expect(op("post", "/api/projects/{pid}/traces").requestBody!.content["application/jsonl"]!.schema).toEqual({
      type: "string",
      format: "binary",
      contentMediaType: "application/jsonl",
      description: "one trace record per line",
    });
    // Every body not in JSON is bytes of its own media type, and these three routes are the ones with such a body.
    const binary = operations.flatMap(([m, p, o]) =>
      Object.entries((o as unknown as Operation).requestBody?.content ?? {})
        .filter(([type]) => type !== "application/json")
        .map(([type, media]) => {
          expect([m, p, media.schema.format, media.schema.contentMediaType]).toEqual([m, p, "binary", type]);
          return `${m} ${p}`;
        }),
    );
    expect([...new Set(binary)].sort()).toEqual(["post /api/projects/{pid}/traces", "post /api/sessions/import", "post /api/workspaces"]);
    // An answer read as text stays text.
    expect(op("get", "/api/sessions/{id}/messages").responses["200"]!.content!["application/x-ndjson"]!.schema).toEqual({
      type: "string",
      description: "one message per line",
    });
  });

  it("an SSE answer's schema is its event, SeqAgentEvent (x-item-schema kept)", () => {
    for (const [method, path] of [
      ["post", "/api/sessions/{id}/messages/stream"],
      ["get", "/api/sessions/{id}/events/stream"],
    ] as const) {
      const sse = op(method, path).responses["200"]!.content!["text/event-stream"]!;
      expect([path, Object.keys(sse.schema), sse.schema.$ref]).toEqual([
        path,
        ["$ref", "description"],
        "#/components/schemas/SeqAgentEvent",
      ]);
      expect(sse.schema.description).toMatch(/^Frames `id: <seq>`/);
      expect(sse["x-item-schema"]).toEqual({ $ref: "#/components/schemas/SeqAgentEvent" });
    }
  });

  it("the event stream takes a stream token as a security scheme (apiKey in query token), besides the bearer token", () => {
    const components = doc.components as unknown as { securitySchemes: Record<string, Json> };
    expect(components.securitySchemes.streamToken).toEqual({
      type: "apiKey",
      in: "query",
      name: "token",
      description:
        "a stream token, for a browser EventSource (which cannot send Authorization): POST /api/sessions/{id}/stream-token, called with the bearer token, issues it, signed with STREAM_TOKEN_SECRET and bound to the tenant, that session and that bearer token, for ttlSeconds (10-3600, default 300). It grants GET (and HEAD) /api/sessions/{id}/events/stream of that session and nothing else; read only when no Authorization header is sent, and not at all when AUTH_TOKENS is unset.",
    });
    const taking = operations.filter(([, , o]) => o.security !== undefined && (o.security as Json[]).length > 0);
    expect(taking.map(([m, p, o]) => [m, p, o.security])).toEqual([
      ["get", "/api/sessions/{id}/events/stream", [{ bearer: [] }, { streamToken: [] }]],
      ["head", "/api/sessions/{id}/events/stream", [{ bearer: [] }, { streamToken: [] }]],
    ]);
    // ...which is the one path auth.ts reads ?token= on.
    for (const [, path] of operations)
      expect([path, STREAM_PATH.test(path.replace(/\{[^}]*\}/g, "x"))]).toEqual([path, path === "/api/sessions/{id}/events/stream"]);
  });

  it("every operation takes X-Request-Id, one parameter shared by reference, of any string, naming the rule the server keeps a client's id by", async () => {
    const components = doc.components as unknown as { parameters: Record<string, Json> };
    expect(components.parameters).toEqual({
      RequestId: {
        name: "X-Request-Id",
        in: "header",
        required: false,
        description:
          "names this request in the answer's x-request-id, in an error body's requestId and in the server's logs when it matches ^[A-Za-z0-9._:-]{1,64}$; any other value is not refused but replaced by a new UUID",
        // Any string: the server answers every value (a gateway validating against a pattern refused the rest).
        schema: { type: "string" },
      },
    });
    expect(operations.length).toBeGreaterThan(50);
    for (const [m, p, o] of operations)
      expect([m, p, (o.parameters as Json[]).filter((param) => param.$ref === "#/components/parameters/RequestId").length]).toEqual([
        m,
        p,
        1,
      ]);
    expect(CLIENT_REQUEST_ID.source).toBe("^[A-Za-z0-9._:-]{1,64}$");
    // The answer names it back when it fits the pattern, and names a new id when it does not.
    for (const [sent, kept] of [
      ["team-trace.42:a", true],
      ["x".repeat(64), true],
      ["x".repeat(65), false],
      ["a b", false],
    ] as const) {
      const res = await api("/api/sessions?limit=1", { headers: { "x-request-id": sent } });
      await res.arrayBuffer();
      expect([sent, res.headers.get("x-request-id") === sent]).toEqual([sent, kept]);
    }
  });
});
