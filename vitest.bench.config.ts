import { readdirSync } from "node:fs";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

// Benchmarks run in workerd like the tests (real DO, R2, SQLite). Baselines that need the host
// (GNU grep, find, fixtures on disk) are prepared in Node by the global setups in bench/setup/ and
// handed to the benchmarks with vitest's provide/inject.
const setups = readdirSync(new URL("./bench/setup", import.meta.url))
  .filter((f) => f.endsWith(".ts"))
  .map((f) => `./bench/setup/${f}`);

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      main: "./test/helpers/test-worker.ts",
      // The model is a local stand-in answered by the benchmarks; the key only satisfies the client.
      // Optional settings pinned (empty = unset): a developer's .dev.vars must not change the figures.
      miniflare: {
        bindings: {
          OPENAI_API_KEY: "sk-bench",
          OPENAI_BASE_URL: "https://llm.example.test/v1",
          MODEL: "bench-model",
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
    include: ["bench/**/*.bench.ts"],
    globalSetup: setups,
    testTimeout: 600_000,
    hookTimeout: 600_000,
    fileParallelism: false,
  },
});
