import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { requireAllowedModel } from "../../src/api/runs";

// ALLOWED_MODELS: the models a prompt may name on the operator's key (hunt 84: any name was taken).

const app = createApp();
const limited = { ...env, ALLOWED_MODELS: " gpt-a , gpt-b," };
const post = (path: string, body: unknown) =>
  app.fetch(
    new Request(`http://localhost${path}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    limited,
  );

it("a prompt naming a model ALLOWED_MODELS does not list is 400 model_not_allowed, before any run starts", async () => {
  const { sessionId } = (await (await post("/api/sessions", {})).json()) as { sessionId: string };
  const refused = await post(`/api/sessions/${sessionId}/messages/stream`, { text: "hi", model: "gpt-5-pro" });
  expect([refused.status, ((await refused.json()) as { error: unknown }).error]).toEqual([
    400,
    {
      code: "model_not_allowed",
      message: 'this deployment offers the models "gpt-a", "gpt-b", "test-model"; the prompt named "gpt-5-pro"',
      requestId: expect.any(String),
    },
  ]);
  // The session is not busy: nothing ran.
  const info = (await (await app.fetch(new Request(`http://localhost/api/sessions/${sessionId}`), limited)).json()) as { status: string };
  expect(info.status).toBe("idle");
});

it("MODEL, the listed names and replays pass; with ALLOWED_MODELS unset or empty, any name does", () => {
  const taken = (model: string, bindings: { ALLOWED_MODELS?: string; MODEL?: string }) => {
    try {
      requireAllowedModel(model, { ...env, ...bindings });
      return "taken";
    } catch (err) {
      return (err as { code: string }).code;
    }
  };
  expect(["gpt-a", "gpt-b", "test-model", "replay:s_01jd8x9a1b2c3d4e5f6g7h8j9k", "gpt-c", " gpt-a"].map((m) => taken(m, limited))).toEqual([
    "taken",
    "taken",
    "taken",
    "taken",
    "model_not_allowed",
    "taken",
  ]);
  expect(["gpt-c", "anything"].map((m) => taken(m, { ALLOWED_MODELS: "" }))).toEqual(["taken", "taken"]);
  expect(taken("gpt-c", { ALLOWED_MODELS: " , " })).toBe("taken");
});
