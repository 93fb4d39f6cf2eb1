import type { z } from "zod";
import { decodeCursor, formatIssues, HarnessError, type ListPosition, MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH } from "../domain";
import type { AppContext } from "./context";
import { requestBody } from "./request-body";

/**
 * Reads the request body as bytes, refusing it with 413 `body_too_large` as soon as it passes
 * `maxBytes` (the declared Content-Length is checked first, then the bytes actually received; the
 * unread rest is discarded by `settleRequestBodies`).
 */
export async function readBodyBytes(c: AppContext, maxBytes: number): Promise<Uint8Array> {
  refuseDeclaredLengthOver(c, maxBytes);
  return readStreamBytes(requestBody(c.req.raw), maxBytes);
}

/** 413 `body_too_large` when the request declares a Content-Length over `maxBytes` (before reading any of it). */
export function refuseDeclaredLengthOver(c: AppContext, maxBytes: number): void {
  const declared = Number(c.req.header("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
}

/** Every byte of `body` (none for null), 413 `body_too_large` as soon as they pass `maxBytes`. */
export async function readStreamBytes(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) throw tooLarge(maxBytes);
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

export function tooLarge(maxBytes: number): HarnessError<"body_too_large"> {
  return new HarnessError("body_too_large", `request body is larger than ${maxBytes} bytes`);
}

/**
 * JSON routes take `application/json` (or a `+json` type) only. The types a cross-site HTML form can
 * send without a CORS preflight (text/plain, form encodings) are refused, so with auth off a web page
 * cannot create sessions or start runs. A request without a body needs no Content-Type.
 */
function requireJsonContentType(c: AppContext): void {
  const type = c.req.header("content-type");
  if (type === undefined) {
    const length = c.req.header("content-length");
    if (c.req.raw.body === null || length === "0") return;
    throw new HarnessError("unsupported_media_type", "send the body with 'Content-Type: application/json'");
  }
  const media = type.split(";")[0]!.trim().toLowerCase();
  if (media === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(media)) {
    // JSON is UTF-8 (RFC 8259); a body declared in another charset would be misread, not converted.
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(type)?.[1]?.toLowerCase();
    if (charset === undefined || charset === "utf-8" || charset === "utf8") return;
    throw new HarnessError(
      "unsupported_media_type",
      `JSON bodies are UTF-8, not ${JSON.stringify(charset.slice(0, 40))}: send charset=utf-8 or none`,
    );
  }
  throw new HarnessError("unsupported_media_type", `this route takes application/json, not ${JSON.stringify(media.slice(0, 100))}`);
}

/** A lone UTF-16 surrogate (in `u` mode a valid pair is one code point, so only unpaired halves match). */
const LONE_SURROGATE = /\p{Cs}/u;

/** What is wrong with a parsed JSON value that a schema does not see (`jsonTextProblem`). */
export type JsonTextProblem = { kind: "lone_surrogate"; path: string } | { kind: "too_deep" };

/**
 * The first string or key (in document order) holding a lone surrogate, named by its path, or
 * arrays and objects nested deeper than `maxDepth` (code that walks a value recursively,
 * `JSON.stringify` included, would run out of stack on it); null when neither. Iterative, since the
 * value may be as deep as the parser allowed.
 */
export function jsonTextProblem(value: unknown, maxDepth = MAX_JSON_DEPTH): JsonTextProblem | null {
  // Each entry: a value, its path, its depth, and the key it is under (checked before the value).
  const stack: [unknown, string, number, string | null][] = [[value, "", 0, null]];
  while (stack.length > 0) {
    const [node, path, depth, key] = stack.pop()!;
    if (key !== null && LONE_SURROGATE.test(key)) return { kind: "lone_surrogate", path };
    if (typeof node === "string") {
      if (LONE_SURROGATE.test(node)) return { kind: "lone_surrogate", path: path || "(the body)" };
      continue;
    }
    if (typeof node !== "object" || node === null) continue;
    if (depth >= maxDepth) return { kind: "too_deep" };
    const entries = Object.entries(node);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [name, child] = entries[i]!;
      stack.push([child, path ? `${path}.${name}` : name, depth + 1, name]);
    }
  }
  return null;
}

/**
 * Parses and validates a JSON body with a strict zod schema. An empty body counts as `{}` so that
 * endpoints whose fields are all optional can be called without one. Strings must be well-formed
 * UTF-16 (a lone surrogate cannot be stored as UTF-8 and would not round-trip): 400 `invalid_text`.
 */
export async function readJsonBody<S extends z.ZodType>(c: AppContext, schema: S, maxBytes = MAX_JSON_BODY_BYTES): Promise<z.output<S>> {
  requireJsonContentType(c);
  const bytes = await readBodyBytes(c, maxBytes);
  let value: unknown = {};
  if (bytes.byteLength > 0) {
    try {
      value = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
    } catch {
      throw new HarnessError("invalid_json", "request body is not valid UTF-8 JSON");
    }
  }
  const problem = jsonTextProblem(value);
  if (problem?.kind === "too_deep")
    throw new HarnessError("invalid_body", `invalid request body: arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels`);
  if (problem)
    throw new HarnessError(
      "invalid_text",
      `${problem.path}: contains a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape); send well-formed Unicode`,
    );
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new HarnessError("invalid_body", `invalid request body: ${formatIssues(parsed.error.issues)}`);
  return parsed.data;
}

/** Validates the query string with a strict zod schema (every value a string); 400 `invalid_query` names the parameter. */
export function readQuery<S extends z.ZodType>(c: AppContext, schema: S): z.output<S> {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) throw new HarnessError("invalid_query", `invalid query: ${formatIssues(parsed.error.issues)}`);
  return parsed.data;
}

/** A list's `?cursor=` as the position it names (null: the first page); 400 `invalid_cursor` for one that cannot be read. */
export function readCursor(cursor: string | undefined): ListPosition | null {
  if (cursor === undefined) return null;
  const after = decodeCursor(cursor);
  if (!after)
    throw new HarnessError(
      "invalid_cursor",
      "the cursor cannot be read: pass the nextCursor of the previous page, or start again without it",
    );
  return after;
}

/** Routes that take a body of another type (JSONL): the media type must be one of `accepted`, else 415. */
export function requireContentType(c: AppContext, accepted: readonly string[]): void {
  const media = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (accepted.includes(media)) return;
  throw new HarnessError("unsupported_media_type", `this route takes ${accepted.join(" or ")}, not ${JSON.stringify(media.slice(0, 100))}`);
}
