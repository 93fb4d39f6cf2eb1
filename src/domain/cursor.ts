import { z } from "zod";

/**
 * Where a page of a listing ends: the listing position (a SQLite rowid, or a log's seq) of its last
 * item. Opaque to clients (base64url JSON). An item listed later gets a higher position, so it can
 * only appear on a first page, never on the pages after a cursor.
 */
export interface ListPosition {
  position: number;
}

/** The cursor a client passes back for the page after `position`. */
export function encodeCursor(position: ListPosition): string {
  return btoa(JSON.stringify({ after: position.position }))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** The position a cursor names, or null when it is not one `encodeCursor` made. */
export function decodeCursor(cursor: string): ListPosition | null {
  try {
    const json = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    const value = JSON.parse(json) as unknown;
    const parsed = z.strictObject({ after: z.number().int().positive() }).safeParse(value);
    return parsed.success ? { position: parsed.data.after } : null;
  } catch {
    return null;
  }
}
