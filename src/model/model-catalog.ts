import { DEFAULT_CONTEXT_WINDOW_TOKENS, MAX_CONTEXT_WINDOW_TOKENS, MIN_CONTEXT_WINDOW_TOKENS, type Usage } from "../domain";

/** US dollars per million tokens. `cachedInput` is the price of input tokens the provider served from its cache. */
export interface ModelPrice {
  input: number;
  cachedInput: number;
  output: number;
}

/** What the harness knows of a model: its context window, its longest answer, and (optionally) its prices. */
export interface ModelSpec {
  contextWindow: number;
  maxOutputTokens: number;
  price?: ModelPrice;
}

/**
 * Known models, matched by exact name or by the name after a provider prefix (`openai/gpt-4o`).
 * Prices are the providers' published list prices when this table was written; check them before
 * relying on `cost`. Anything else gets the conservative default window and no cost.
 */
export const KNOWN_MODELS: Readonly<Record<string, ModelSpec>> = {
  "gpt-4o": { contextWindow: 128_000, maxOutputTokens: 16_384, price: { input: 2.5, cachedInput: 1.25, output: 10 } },
  "gpt-4o-mini": { contextWindow: 128_000, maxOutputTokens: 16_384, price: { input: 0.15, cachedInput: 0.075, output: 0.6 } },
  "gpt-4.1": { contextWindow: 1_047_576, maxOutputTokens: 32_768, price: { input: 2, cachedInput: 0.5, output: 8 } },
  "gpt-4.1-mini": { contextWindow: 1_047_576, maxOutputTokens: 32_768, price: { input: 0.4, cachedInput: 0.1, output: 1.6 } },
  "gpt-4.1-nano": { contextWindow: 1_047_576, maxOutputTokens: 32_768, price: { input: 0.1, cachedInput: 0.025, output: 0.4 } },
  "o3-mini": { contextWindow: 200_000, maxOutputTokens: 100_000, price: { input: 1.1, cachedInput: 0.55, output: 4.4 } },
  "deepseek-chat": { contextWindow: 64_000, maxOutputTokens: 8_192 },
  "deepseek-reasoner": { contextWindow: 64_000, maxOutputTokens: 8_192 },
};

/** Where a model's window may come from, strongest first: the prompt, the configuration, the table. */
export interface ContextWindowSources {
  /** A prompt's `contextWindow`. */
  requested?: number;
  /** `MODEL_CONTEXT_WINDOW` (a string in the env; ignored when not a number in range). */
  configured?: string | number;
}

/**
 * The spec of `model`. Its window: the prompt's, else `MODEL_CONTEXT_WINDOW`, else the table's entry
 * (exact name, then the part after the last `/`), else the conservative default.
 */
export function modelSpec(model: string | undefined, sources: ContextWindowSources = {}): ModelSpec {
  const name = model?.trim() ?? "";
  const known = KNOWN_MODELS[name] ?? KNOWN_MODELS[name.slice(name.lastIndexOf("/") + 1)];
  const configured = windowOf(sources.configured);
  const contextWindow = windowOf(sources.requested) ?? configured ?? known?.contextWindow ?? DEFAULT_CONTEXT_WINDOW_TOKENS;
  const maxOutputTokens = Math.min(known?.maxOutputTokens ?? 8_192, Math.floor(contextWindow / 2));
  return known?.price ? { contextWindow, maxOutputTokens, price: known.price } : { contextWindow, maxOutputTokens };
}

function windowOf(value: string | number | undefined): number | undefined {
  const n = typeof value === "string" ? Number(value.trim()) : value;
  if (n === undefined || !Number.isInteger(n) || n < MIN_CONTEXT_WINDOW_TOKENS || n > MAX_CONTEXT_WINDOW_TOKENS) return undefined;
  return n;
}

/** What `usage` cost at `price`, in US dollars (cached input at the cached price). */
export function costOf(usage: Usage, price: ModelPrice): number {
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const dollars = ((usage.inputTokens - cached) * price.input + cached * price.cachedInput + usage.outputTokens * price.output) / 1_000_000;
  return Math.round(dollars * 1e8) / 1e8;
}
