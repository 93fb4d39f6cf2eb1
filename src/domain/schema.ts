import { z } from "zod";

/** A non-empty string that is not only whitespace. */
// A pattern, not a refinement: JSON Schema (the OpenAPI document) can say it. \S is what trim() keeps.
export const nonBlank = z.string().regex(/\S/, { message: "must not be blank" });

/** An ISO-8601 UTC timestamp such as 2026-11-30T02:51:00.000Z. */
export const isoTime = z.iso.datetime({ message: "must be an ISO-8601 UTC timestamp" });

/** The current time as an ISO-8601 string; records always carry time in this form. */
export function nowIso(clock: () => number = Date.now): string {
  return new Date(clock()).toISOString();
}

/** Thrown when a value does not fit a domain schema; the message names the field. */
export class DomainValidationError extends Error {
  override readonly name = "DomainValidationError";
  constructor(
    readonly what: string,
    readonly issues: readonly z.core.$ZodIssue[],
  ) {
    super(`invalid ${what}: ${formatIssues(issues)}`);
  }
}

/** `field.path: message; other: message`, stable and readable for errors and tool results. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.map(String).join(".");
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join("; ");
}

/** Parses `value` with `schema` or throws a DomainValidationError that names the failing fields. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new DomainValidationError(what, result.error.issues);
  return result.data;
}
