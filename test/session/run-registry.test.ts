import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { AgentRunOptions } from "../../src/domain";
import { RunRegistry } from "../../src/session/run-registry";

describe("RunRegistry", () => {
  it("tells whether a run asked for a model by prefix (a replay's `replay:`), by the exact prefix", async () => {
    const seen = await runInDurableObject(env.SESSIONS.getByName("s_run_registry_models"), async (_o, state) => {
      const registry = new RunRegistry(state.storage.sql);
      const answers: boolean[] = [];
      const command = (model?: string) => ({
        sessionId: "s_run_registry_models",
        userText: "hi",
        ...(model ? { model } : {}),
        options: AgentRunOptions.parse({}),
      });
      let n = 0;
      const run = (model?: string) => {
        n++;
        registry.begin(`r_${n}`, `m_${n}`, n * 10, new Date().toISOString(), command(model));
        registry.finish(`r_${n}`, "STOP", new Date().toISOString());
      };
      run();
      run("gpt-4o");
      run("REPLAY:s_x");
      answers.push(registry.hasRunOfModel("replay:"));
      run("replay:s_origin");
      answers.push(registry.hasRunOfModel("replay:"), registry.hasRunOfModel("replay:s_o"), registry.hasRunOfModel("gpt-4o-mini"));
      return answers;
    });
    expect(seen).toEqual([false, true, true, false]);
  });
});
