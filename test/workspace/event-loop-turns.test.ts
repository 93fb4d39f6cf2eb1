import { describe, expect, it } from "vitest";
import { EventLoopTurns, YIELD_EVERY_BYTES, YIELD_EVERY_ENTRIES } from "../../src/workspace/event-loop-turns";

describe("EventLoopTurns", () => {
  it("yields once per YIELD_EVERY_BYTES of data and once per YIELD_EVERY_ENTRIES entries, whichever comes first", async () => {
    let turns = 0;
    const t = new EventLoopTurns(async () => void turns++);
    for (let i = 0; i < 10; i++) await t.afterBytes(256 * 1024);
    expect(YIELD_EVERY_BYTES).toBe(1024 * 1024);
    expect(turns).toBe(2); // at 1 MiB and 2 MiB; 512 KiB are pending
    for (let i = 0; i < YIELD_EVERY_ENTRIES - 1; i++) await t.afterEntry();
    expect(turns).toBe(2);
    await t.afterEntry();
    expect(turns).toBe(3); // the entry count tripped first; both counters start over
    await t.afterBytes(YIELD_EVERY_BYTES - 1);
    expect(turns).toBe(3);
  });

  it("the default turn lets a pending timer run", async () => {
    let fired = false;
    setTimeout(() => (fired = true), 0);
    await new EventLoopTurns().afterBytes(YIELD_EVERY_BYTES);
    expect(fired).toBe(true);
  });
});
