import { env, exports } from "cloudflare:workers";
import { it, expect } from "vitest";
it("smoke", async () => {
  const r = await exports.default.fetch("http://x/");
  expect(await r.text()).toBe("ok");
  const stub = env.SESSIONS.getByName("a");
  
});
