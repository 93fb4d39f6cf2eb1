import type { OverlayEntry, OverlayStore } from "../src/workspace/overlay";

/** An overlay with no changes: the grep benches only read. */
export class EmptyOverlay implements OverlayStore {
  list(): OverlayEntry[] {
    return [];
  }
  entry(): OverlayEntry | null {
    return null;
  }
  get(): Uint8Array | null {
    return null;
  }
  stream(): null {
    return null;
  }
  put(): void {
    throw new Error("read-only bench overlay");
  }
  whiteout(): void {
    throw new Error("read-only bench overlay");
  }
}
