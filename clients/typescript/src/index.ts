export type * from "./wire.js";
export * from "./stream.js";
