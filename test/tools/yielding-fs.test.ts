import { describe, expect, it } from "vitest";
import { BASH_FS_CALLS_PER_TURN, yieldingFs } from "../../src/tools/bash-fs-turns";

describe("yieldingFs", () => {
  it(`gives the event loop a turn every ${BASH_FS_CALLS_PER_TURN} asynchronous calls, and leaves synchronous ones alone`, async () => {
    const fs = { read: async (n: number) => n * 2, size: () => 7, label: "scratch" };
    const wrapped = yieldingFs(fs);
    expect([wrapped.size(), wrapped.label]).toEqual([7, "scratch"]);
    const timerFiredAt: number[] = [];
    let call = 0;
    // A timer can only fire in a turn of the event loop; promises that resolve at once give none.
    setTimeout(() => timerFiredAt.push(call), 0);
    for (call = 1; call <= BASH_FS_CALLS_PER_TURN; call++) expect(await wrapped.read(call)).toBe(call * 2);
    expect(timerFiredAt).toEqual([BASH_FS_CALLS_PER_TURN]);
    // Rejections pass through unchanged.
    const failing = yieldingFs({ read: async () => Promise.reject(new Error("ENOENT")) });
    await expect(failing.read()).rejects.toThrow("ENOENT");
  });

  it("counts failed calls too, and a call by the bytes it moves (hunt 120: refused writes and whole-file rewrites gave no turn)", async () => {
    const turnsAt = async (calls: (i: number) => Promise<unknown>, n: number) => {
      const fired: number[] = [];
      let call = 0;
      const tick = () =>
        setTimeout(() => {
          fired.push(call);
          if (fired.length < 50) tick();
        }, 0);
      tick();
      for (call = 1; call <= n; call++) await calls(call).catch(() => {});
      return fired.filter((at, i) => at !== fired[i - 1]);
    };
    const refusing = yieldingFs({ write: async () => Promise.reject(new Error("EROFS")) });
    expect(await turnsAt(() => refusing.write(), 2 * BASH_FS_CALLS_PER_TURN)).toEqual([BASH_FS_CALLS_PER_TURN, 2 * BASH_FS_CALLS_PER_TURN]);
    // 8 MiB written weighs 33 calls (one per 256 KiB more): a turn after every such call; 1 MiB read weighs 5.
    const big = new Uint8Array(8 * 1024 * 1024);
    const writing = yieldingFs({ write: async (_path: string, _bytes: Uint8Array) => {} });
    expect(await turnsAt(() => writing.write("f", big), 3)).toEqual([1, 2, 3]);
    const reading = yieldingFs({ read: async () => new Uint8Array(1024 * 1024) });
    expect(await turnsAt(() => reading.read(), 14)).toEqual([7, 13]);
  });
});
