import type { z } from "zod";
import { formatIssues } from "../domain";
import type { AppContext } from "./context";
import { ApiError } from "./errors";
import { requestBody } from "./request-body";

/** JSON request bodies above this size are refused with 413 before parsing. */
export const MAX_JSON_BODY_BYTES = 256 * 1024;

/**
 * Reads the request body as bytes, refusing it with 413 `body_too_large` as soon as it passes
 * `maxBytes` (the declared Content-Length is checked first, then the bytes actually received; the
 * unread rest is discarded by `settleRequestBodies`).
 */
export async function readBodyBytes(c: AppContext, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(c.req.header("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const body = requestBody(c.req.raw);
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

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(413, "body_too_large", `request body is larger than ${maxBytes} bytes`);
}

/**
 * Parses and validates a JSON body with a strict zod schema. An empty body counts as `{}` so that
 * endpoints whose fields are all optional can be called without one.
 */
export async function readJsonBody<S extends z.ZodType>(c: AppContext, schema: S, maxBytes = MAX_JSON_BODY_BYTES): Promise<z.output<S>> {
  const bytes = await readBodyBytes(c, maxBytes);
  let value: unknown = {};
  if (bytes.byteLength > 0) {
    try {
      value = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
    } catch {
      throw new ApiError(400, "invalid_json", "request body is not valid UTF-8 JSON");
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ApiError(400, "invalid_body", `invalid request body: ${formatIssues(parsed.error.issues)}`);
  return parsed.data;
}
