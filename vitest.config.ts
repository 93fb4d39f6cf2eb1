import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      // The production app plus a SessionDO built with injectable test dependencies.
      main: "./test/helpers/test-worker.ts",
      // A fake key and base URL so the real OpenAI client is built; tests answer its fetch themselves.
      miniflare: {
        bindings: {
          OPENAI_API_KEY: "sk-test-SECRET-0123456789",
          OPENAI_BASE_URL: "https://llm.example.test/v1",
          MODEL: "test-model",
          LOG_LEVEL: "warn",
        },
      },
    }),
  ],
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
  },
});
