export * from "./schema";
export * from "./json";
export * from "./ids";
export * from "./messages";
export * from "./events";
export * from "./run";
export * from "./tool-definition";
export * from "./errors";
