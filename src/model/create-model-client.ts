import { type IdGenerator, isId } from "../domain";
import { FailingModelClient, type ModelClient } from "./model-client";
import { type FetchLike, OpenAIModelClient } from "./openai-client";
import { type MessageLoader, REPLAY_MODEL_PREFIX, ReplayModelClient } from "./replay-client";
import type { RetryPolicy, Sleep } from "./retry-policy";

/** Provider settings, usually from the Worker's secrets and vars (see modelConfigFromEnv). */
export interface ModelConfig {
  apiKey?: string;
  baseURL?: string;
  /** Default model name. */
  model?: string;
  /** MODEL_CONTEXT_WINDOW, as configured. */
  contextWindow?: string;
  fetch?: FetchLike;
}

export interface ModelClientDeps {
  /** Loads a recorded session's messages for `replay:<sessionId>`. */
  loadMessages: MessageLoader;
  ids?: IdGenerator;
  sleep?: Sleep;
  retry?: Partial<RetryPolicy>;
  /** For `replay:`: recorded assistant turns to skip. */
  replayOffset?: number;
}

/** The provider settings of the Worker env: OPENAI_API_KEY, OPENAI_BASE_URL, MODEL, MODEL_CONTEXT_WINDOW. */
export function modelConfigFromEnv(env: {
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  MODEL?: string;
  MODEL_CONTEXT_WINDOW?: string;
}): ModelConfig {
  return { apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL, model: env.MODEL, contextWindow: env.MODEL_CONTEXT_WINDOW };
}

/**
 * Chooses the client for a run. `requestedModel` (from the prompt request) overrides `config.model`;
 * `replay:<sessionId>` selects the ReplayModelClient, which needs no key. Never throws: a missing key or
 * model name gives a client whose every stream is one `model_not_configured` error event, and a
 * malformed replay id one `bad_request` error event.
 */
export function createModelClient(config: ModelConfig, requestedModel: string | undefined, deps: ModelClientDeps): ModelClient {
  const requested = requestedModel?.trim() || undefined;
  if (requested?.startsWith(REPLAY_MODEL_PREFIX)) {
    const sessionId = requested.slice(REPLAY_MODEL_PREFIX.length);
    if (!isId("session", sessionId)) {
      return new FailingModelClient("bad_request", `'${requested}' is not a replay model: write replay:<sessionId>, e.g. replay:s_abc123`);
    }
    return new ReplayModelClient({ sessionId, load: deps.loadMessages }, deps.replayOffset ?? 0);
  }
  const apiKey = config.apiKey?.trim();
  if (!apiKey) {
    return new FailingModelClient(
      "model_not_configured",
      "no model API key is configured: set the OPENAI_API_KEY secret (wrangler secret put OPENAI_API_KEY, or .dev.vars locally)",
    );
  }
  const model = requested ?? (config.model?.trim() || undefined);
  if (!model) {
    return new FailingModelClient(
      "model_not_configured",
      "no model name is configured: set the MODEL variable or name a model in the request",
    );
  }
  return new OpenAIModelClient({
    apiKey,
    baseURL: config.baseURL?.trim() || undefined,
    model,
    fetch: config.fetch,
    ids: deps.ids,
    sleep: deps.sleep,
    retry: deps.retry,
  });
}
