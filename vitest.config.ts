import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      // The production app plus a SessionDO built with injectable test dependencies.
      main: "./test/helpers/test-worker.ts",
      // A fake key and base URL so the real OpenAI client is built; tests answer its fetch themselves.
      // Every optional setting is pinned (empty = unset) so that a developer's .dev.vars, which
      // wrangler reads for tests too, cannot change what they see; tests that need one set it.
      miniflare: {
        bindings: {
          OPENAI_API_KEY: "sk-test-SECRET-0123456789",
          OPENAI_BASE_URL: "https://llm.example.test/v1",
          MODEL: "test-model",
          LOG_LEVEL: "warn",
          MODEL_CONTEXT_WINDOW: "",
          AUTH_TOKENS: "",
          STREAM_TOKEN_SECRET: "",
          CORS_ORIGINS: "",
          OPEN_HOSTS: "",
          ALLOWED_MODELS: "",
        },
      },
    }),
  ],
  test: {
    include: ["test/**/*.test.ts"],
    // Node-side fixtures (a real source tree packed with GNU tar) handed to tests with provide/inject.
    globalSetup: ["./test/setup/source-tree.ts"],
    testTimeout: 30_000,
    // Each test file imports the worker's module graph anew, one module at a time; these packages
    // are many small modules (openai, zod, hono) and are pre-bundled once per run instead: the
    // suite's import time went from 172 to 105 s (457 to 405 s in all). just-bash is one file already.
    deps: {
      optimizer: {
        ssr: {
          enabled: true,
          include: ["openai", "zod", "hono", "re2js", "diff", "fflate", "modern-tar", "ignore", "picomatch", "eventsource-parser"],
        },
      },
    },
  },
});
