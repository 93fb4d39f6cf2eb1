import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * An error a client can act on: a stable machine `code`, an HTTP status and a sentence.
 * Rendered as `{"error":{"code","message"}}` by the app's error handler.
 */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function errorBody(code: string, message: string) {
  return { error: { code, message } };
}
