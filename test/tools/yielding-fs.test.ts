import { describe, expect, it } from "vitest";
import { BASH_FS_CALLS_PER_TURN, yieldingFs } from "../../src/tools/bash-fs";

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
});
