import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../../src/api/app";
import { openApiDocument, openApiPath } from "../../src/api/openapi";
import { API_ROUTES } from "../../src/api/route-docs";
import { AbortResult, SessionCreated, SessionInfo, SessionList } from "../../src/api/schemas";
import { API_ERROR_CODES, DENIAL_CODES, ERROR_REGISTRY, EVENT_TYPES, RUN_ERROR_CODES } from "../../src/domain";

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

/** Every operation of the document: [method, path, operation]. */
const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([m, op]) => [m, path, op] as const));

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

  it("documents every route Hono has registered, and no other", () => {
    const registered = createApp()
      .routes.filter((r) => r.method !== "ALL")
      .map((r) => `${r.method.toLowerCase()} ${openApiPath(r.path)}`);
    const documented = operations.map(([method, path]) => `${method} ${path}`);
    expect(new Set(documented)).toEqual(new Set(registered));
    expect(documented.length).toBe(registered.length);
    expect(API_ROUTES.length).toBe(registered.length);
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
    const stream = doc.paths["/api/sessions/{id}/events/stream"]!.get as { parameters: { name: string; in: string }[]; responses: Json };
    expect(stream.parameters.map((p) => `${p.in}:${p.name}`)).toEqual([
      "path:id",
      "query:after",
      "query:token",
      "query:runId",
      "query:messageId",
      "header:Last-Event-ID",
    ]);
    expect(Object.keys((stream.responses["200"] as { headers: Json }).headers)).toEqual(["x-request-id", "x-run-id"]);
    expect(stream.responses["204"]).toBeDefined();
    // app.onError adds these to every 401 and 503 answer.
    const upload = (doc.paths["/api/workspaces"]!.post as { responses: Record<string, { headers: Json }> }).responses;
    expect(Object.keys(upload["503"]!.headers)).toEqual(["x-request-id", "retry-after"]);
    expect(Object.keys(upload["401"]!.headers)).toEqual(["x-request-id", "www-authenticate"]);
    expect(Object.keys(upload["400"]!.headers)).toEqual(["x-request-id"]);
  });

  it("real answers fit the documented schemas", async () => {
    const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
    const created = SessionCreated.parse(await (await api("/api/sessions", { method: "POST" })).json());
    SessionInfo.parse(await (await api(`/api/sessions/${created.sessionId}`)).json());
    SessionList.parse(await (await api("/api/sessions?limit=2")).json());
    AbortResult.parse(await (await api(`/api/sessions/${created.sessionId}/abort`, { method: "POST" })).json());
  });
});
