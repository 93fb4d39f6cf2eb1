import type { ContentfulStatusCode } from "hono/utils/http-status";
import { type ApiErrorCode, ERROR_REGISTRY, HarnessError, httpStatus } from "../domain";

/** `{"error":{"code","message","requestId"}}`, the one error body of the API. */
export function errorBody(code: ApiErrorCode, message: string, requestId: string) {
  return { error: { code, message, requestId } };
}

/** The HTTP answer for a thrown error: its code and the registry's status, or a 500 internal_error. */
export function errorResponse(
  err: unknown,
  requestId: string,
): { status: ContentfulStatusCode; body: ReturnType<typeof errorBody>; unexpected: boolean } {
  if (err instanceof HarnessError && isApiCode(err.code))
    return { status: httpStatus(err.code) as ContentfulStatusCode, body: errorBody(err.code, err.message, requestId), unexpected: false };
  return { status: 500, body: errorBody("internal_error", "the server failed to handle this request", requestId), unexpected: true };
}

/** True for a code an HTTP error body can carry. */
export function isApiCode(code: string): code is ApiErrorCode {
  return (ERROR_REGISTRY[code as ApiErrorCode]?.in as readonly string[] | undefined)?.includes("api") === true;
}
