import { eventLoopTurn } from "../workspace/event-loop-turns";

/** Filesystem calls between two turns the shell gives the event loop (`yieldingFs`). */
export const BASH_FS_CALLS_PER_TURN = 32;
/** A call that moves this many bytes (read or written) counts as one call more. */
const BYTES_PER_CALL = 256 * 1024;

/**
 * `fs` giving the event loop a turn every `every` asynchronous calls. In `wrangler dev` just-bash
 * interprets a command without waiting on anything but its filesystem, whose promises resolve at
 * once, so a long command held the isolate, and every session it serves, to its end (hunt 13:
 * `/healthz` waited 9.6 s behind a loop of `md5sum`). A turn lets other requests, an abort and the
 * command's own timer run. Work that never touches a file (one `sort` of a large pipe) still holds it.
 * A failed call counts as well (3,000 refused writes of tee held the isolate 15 s, hunt 120), and a
 * call weighs more by the bytes it moves (each `>>` to a 16 MiB file rewrites it: /healthz waited 4-8 s).
 */
export function yieldingFs<T extends object>(fs: T, every = BASH_FS_CALLS_PER_TURN): T {
  let calls = 0;
  const count = async (weight: number) => {
    const before = calls;
    calls += weight;
    if (Math.floor(calls / every) > Math.floor(before / every)) await eventLoopTurn();
  };
  return new Proxy(fs, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!(result instanceof Promise)) return result;
        const written = sizeOf(args[1]);
        return result.then(
          async (settled) => {
            await count(1 + Math.floor((written + sizeOf(settled)) / BYTES_PER_CALL));
            return settled;
          },
          async (error) => {
            await count(1);
            throw error;
          },
        );
      };
    },
  });
}

/** Bytes (or characters) of a call's content or result; 0 for anything else. */
function sizeOf(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (value instanceof Uint8Array) return value.byteLength;
  return 0;
}
