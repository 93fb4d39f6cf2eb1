import { z } from "zod";
import {
  AgentMessage,
  type ApiErrorCode,
  DEFAULT_STREAM_TOKEN_TTL_SECONDS,
  DENIAL_CODES,
  ERROR_REGISTRY,
  type ErrorCode,
  httpStatus,
  MAX_STREAM_TOKEN_TTL_SECONDS,
  MIN_STREAM_TOKEN_TTL_SECONDS,
  ProjectId,
  RUN_ERROR_CODES,
  SeqAgentEvent,
  SessionId,
  WorkspaceId,
} from "../domain";
import { CLIENT_REQUEST_ID } from "./request-context";
import { API_ROUTES, BODY_API_ERRORS, COMMON_API_ERRORS, type Content, type Method } from "./route-docs";
import { ErrorResponse } from "./schemas";

/**
 * The OpenAPI 3.1 document of the API (`GET /openapi.json`), assembled from the zod schemas the
 * routes validate with (`z.toJSONSchema`), following the table of routes in route-docs.ts.
 */

/** `/api/sessions/:id/files/:path{[\s\S]+}` -> `/api/sessions/{id}/files/{path}`. */
export function openApiPath(honoPath: string): string {
  return honoPath.replace(/:([A-Za-z]+)(\{[^}]*\})?/g, "{$1}");
}

type JsonSchema = Record<string, unknown>;

/**
 * A zod schema as JSON Schema. A request's (`io: "input"`) keeps no `default` keyword: its default is
 * said in the description (`default: 6`). Request schemas are shared components (`$ref`), and
 * generators read a `default` there as "always present" (openapi-typescript's defaultNonNullable
 * makes such a field required), which holds for an answer, not for a request, where it may be left out.
 */
function toSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    ...(io === "input" ? { override: ({ jsonSchema }: { jsonSchema: JsonSchema }) => defaultInWords(jsonSchema) } : {}),
  }) as JsonSchema;
  return rest;
}

function defaultInWords(schema: JsonSchema): void {
  if (!("default" in schema)) return;
  const said = `default: ${JSON.stringify(schema.default)}`;
  delete schema.default;
  const description = typeof schema.description === "string" ? schema.description : "";
  if (!description.endsWith(said)) schema.description = description === "" ? said : `${description}; ${said}`;
}

const PATH_PARAMS: Record<string, z.ZodType> = {
  id: SessionId,
  wid: WorkspaceId,
  pid: ProjectId,
  caseId: z.string(),
  path: z.string(),
  messageId: z.string(),
};

let cached: JsonSchema | null = null;

/** The document (built once per isolate). */
export function openApiDocument(): JsonSchema {
  cached ??= buildDocument();
  return cached;
}

function buildDocument(): JsonSchema {
  const components: Record<string, JsonSchema> = {
    Error: toSchema(ErrorResponse, "output"),
    SeqAgentEvent: toSchema(SeqAgentEvent, "output"),
    AgentMessage: toSchema(AgentMessage, "output"),
  };
  const ref = (name: string, schema: z.ZodType, io: "input" | "output") => {
    components[name] ??= toSchema(schema, io);
    return { $ref: `#/components/schemas/${name}` };
  };
  const describedSchema = (type: string, c: Extract<Content, { description: string }>, io: "input" | "output"): JsonSchema => {
    // An SSE answer is a run of events: its schema is the event's, as hey-api (and OpenAPI 3.2's itemSchema) read it.
    if (type === "text/event-stream" && c.itemSchema)
      return { ...ref(c.itemSchema.name, c.itemSchema.schema, "output"), description: c.description };
    // A JSON document without a schema of its own (this one) is an object.
    if (type === "application/json") return { type: "object", description: c.description };
    // Any other body is sent as its bytes (an archive, JSONL): format binary is what generators key on to send a Blob
    // as it is rather than JSON-encode a string; contentMediaType is OpenAPI 3.1's way of saying it.
    if (io === "input") return { type: "string", format: "binary", contentMediaType: type, description: c.description };
    // Other answers (downloads) stay a string, what a client reading them as text gets.
    return { type: "string", description: c.description };
  };
  const content = (c: Content, io: "input" | "output") =>
    "schema" in c
      ? { [c.type]: { schema: ref(c.name, c.schema, io), ...(c.example !== undefined ? { example: c.example } : {}) } }
      : Object.fromEntries(
          (typeof c.type === "string" ? [c.type] : c.type).map((type) => [
            type,
            {
              schema: describedSchema(type, c, io),
              ...(c.itemSchema ? { "x-item-schema": ref(c.itemSchema.name, c.itemSchema.schema, "output") } : {}),
            },
          ]),
        );

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of API_ROUTES) {
    const path = openApiPath(route.path);
    const params = [...route.path.matchAll(/:([A-Za-z]+)/g)].map(([, name]) => ({
      name,
      in: "path",
      required: true,
      schema: toSchema(PATH_PARAMS[name!]!, "input"),
    }));
    const query = route.query
      ? Object.entries(route.query.shape).map(([name, schema]) => ({
          name,
          in: "query",
          required: false,
          // What the value means once read (a page size is an integer), not the text it arrives as.
          schema: toSchema(schema as z.ZodType, "output"),
        }))
      : [];
    const headers = (route.headers ?? []).map(({ name, schema }) => ({
      name,
      in: "header",
      required: false,
      schema: toSchema(schema, "input"),
    }));
    const errors = [
      ...new Set([...(route.path.startsWith("/api/") ? COMMON_API_ERRORS : []), ...route.errors, ...(route.body ? BODY_API_ERRORS : [])]),
    ];
    const byStatus = new Map<number, ApiErrorCode[]>();
    for (const code of errors) byStatus.set(httpStatus(code), [...(byStatus.get(httpStatus(code)) ?? []), code]);
    const streams = route.answer?.type === "text/event-stream";
    const answerHeaders = {
      headers: {
        ...REQUEST_ID_HEADER,
        ...(streams ? RUN_ID_HEADER : {}),
        ...Object.fromEntries((route.answerHeaders ?? []).map(({ name, description, schema }) => [name, { description, schema }])),
      },
    };
    const responses: Record<string, unknown> = {
      [route.status]: { description: "success", ...answerHeaders, ...(route.answer ? { content: content(route.answer, "output") } : {}) },
    };
    if (route.path.endsWith("/events/stream"))
      responses[204] = { description: "no run is active and nothing is after Last-Event-ID", headers: REQUEST_ID_HEADER };
    for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
      responses[status] = {
        description: codes.map((code) => `\`${code}\`: ${ERROR_REGISTRY[code].meaning}`).join("; "),
        headers: { ...REQUEST_ID_HEADER, ...(ERROR_HEADERS[status] ?? {}) },
        "x-error-codes": codes,
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      };
    }
    paths[path] ??= {};
    const operation = {
      operationId: operationId(route.method, route.path),
      summary: route.summary,
      // No auth: no scheme. The event stream also takes a stream token, as an alternative to the bearer token.
      ...(route.auth ? (route.streamToken ? { security: [{ bearer: [] }, { streamToken: [] }] } : {}) : { security: [] }),
      parameters: [...params, ...query, ...headers, { $ref: "#/components/parameters/RequestId" }],
      ...(route.body ? { requestBody: { required: bodyRequired(route.body), content: content(route.body, "input") } } : {}),
      responses,
    };
    paths[path][route.method] = operation;
    // Every GET also answers HEAD (app.ts): the same status and headers, no body.
    if (route.method === "get") paths[path].head = headOperation(operation, route.path);
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "pi-harness",
      version: "0.1.0",
      description:
        "A hosted, Pi-style coding-agent harness. Errors are {error: {code, message, requestId}}; every code is listed in x-error-codes. Messages and events share one seq, so SSE ids skip numbers.",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "a token of AUTH_TOKENS; not needed when it is unset" },
        streamToken: STREAM_TOKEN_SCHEME,
      },
      parameters: { RequestId: REQUEST_ID_PARAMETER },
      schemas: components,
    },
    "x-error-codes": Object.fromEntries(
      (Object.keys(ERROR_REGISTRY) as ErrorCode[]).map((code) => [
        code,
        { status: ERROR_REGISTRY[code].status, in: ERROR_REGISTRY[code].in, meaning: ERROR_REGISTRY[code].meaning },
      ]),
    ),
    "x-run-error-codes": RUN_ERROR_CODES,
    "x-tool-denial-reasons": DENIAL_CODES,
  };
}

/** A JSON body may be left out when `{}` is valid (an empty body counts as `{}`); other media types are required. */
function bodyRequired(body: Content): boolean {
  return "schema" in body ? !body.schema.safeParse({}).success : true;
}

/**
 * Every request may name itself (request-context.ts); a value that does not fit is replaced, not
 * refused, so the schema takes any string (a gateway validating requests against it refused them,
 * hunt 111) and the description names the values kept.
 */
const REQUEST_ID_PARAMETER = {
  name: "X-Request-Id",
  in: "header",
  required: false,
  description: `names this request in the answer's x-request-id, in an error body's requestId and in the server's logs when it matches ${CLIENT_REQUEST_ID.source}; any other value is not refused but replaced by a new UUID`,
  schema: { type: "string" },
};
const REQUEST_ID_HEADER = {
  "x-request-id": {
    description: "names this request in error bodies and in the server's logs: the X-Request-Id sent, when it fits, else a new UUID",
    schema: { type: "string" },
  },
  "cache-control": { description: "no-store: no answer of this service may be kept by a cache", schema: { type: "string" } },
};
/** Headers `app.onError` adds to an error answer of that status. */
const ERROR_HEADERS: Record<number, Record<string, { description: string; schema: { type: string } }>> = {
  401: { "www-authenticate": { description: 'Bearer realm="pi-harness"', schema: { type: "string" } } },
  429: { "retry-after": { description: "seconds to wait before trying again", schema: { type: "string" } } },
  503: { "retry-after": { description: "seconds to wait before trying again", schema: { type: "string" } } },
};
/** `?token=` on the event stream (auth.ts): the way a browser EventSource, which cannot send Authorization, authenticates. */
const STREAM_TOKEN_SCHEME = {
  type: "apiKey",
  in: "query",
  name: "token",
  description: `a stream token, for a browser EventSource (which cannot send Authorization): POST /api/sessions/{id}/stream-token, called with the bearer token, issues it, signed with STREAM_TOKEN_SECRET and bound to the tenant, that session and that bearer token, for ttlSeconds (${MIN_STREAM_TOKEN_TTL_SECONDS}-${MAX_STREAM_TOKEN_TTL_SECONDS}, default ${DEFAULT_STREAM_TOKEN_TTL_SECONDS}). It grants GET (and HEAD) /api/sessions/{id}/events/stream of that session and nothing else; read only when no Authorization header is sent, and not at all when AUTH_TOKENS is unset.`,
};
const RUN_ID_HEADER = { "x-run-id": { description: "the run being streamed, when there is one", schema: { type: "string" } } };

function operationId(method: Method | "head", path: string): string {
  const words = path
    .replace(/\{[^}]*\}/g, "")
    .split(/[/.:-]/)
    .filter((w) => w !== "" && w !== "api");
  return [method, ...words].map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join("");
}

/** A GET operation's HEAD: its parameters, statuses and headers, with no response bodies. */
function headOperation(get: { summary: string; responses: Record<string, unknown> }, path: string): Record<string, unknown> {
  const responses = Object.fromEntries(
    Object.entries(get.responses).map(([status, response]) => {
      const { content: _body, ...rest } = response as Record<string, unknown>;
      return [status, rest];
    }),
  );
  return { ...get, operationId: operationId("head", path), summary: `${get.summary} (status and headers only, no body)`, responses };
}
