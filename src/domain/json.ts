/** True for a plain object (as `JSON.parse` makes them): not null, not an array. Narrows to a record of unknowns. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
