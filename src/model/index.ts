export * from "./model-client";
export * from "./openai-messages";
export * from "./chunk-accumulator";
export * from "./provider-errors";
export * from "./openai-client";
export * from "./scripted-client";
export * from "./replay-client";
export * from "./create-model-client";
