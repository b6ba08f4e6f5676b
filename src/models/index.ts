/**
 * The LanguageModel contract and its adapters: the embedded GGUF engine, OpenAI-compatible HTTP, LoRA adapters,
 * reply caps, and the registry of models reflectkit can fetch.
 */
export type * from "./language-model.js";
export { loadEmbeddedModel, type EmbeddedModel, type EmbeddedModelOptions } from "./embedded.js";
export { checkLoraAdapter, type LoraAdapter } from "./lora.js";
export { createHttpModel, defaultRetryPolicy, type HttpModelOptions, type RetryPolicy } from "./http.js";
export { capReply, defaultReplyLimits, replyByteLimit, type ReplyLimits, type Truncation } from "./reply-cap.js";
export { openModel, type OpenModelOptions } from "./open.js";
export { parseModelSpec, type ModelSpec } from "./spec.js";
export { registeredModels, findRegisteredModel, defaultModelName } from "./registry.js";
export { resolveRegisteredModel, defaultCacheDir, type ResolveOptions, type ModelSource } from "./resolve.js";
