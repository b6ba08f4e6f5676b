/**
 * reflectkit's AI SDK door (`reflectkit/ai-sdk`): the reflection middleware, and adapters both ways between reflectkit's `LanguageModel` and the AI
 * SDK's language models (specification v4, `ai@7`). `ai` and `@ai-sdk/provider` are optional peer dependencies, loaded
 * only through this subpath, so users of the CLI do not install them.
 */
export { fromAISDK, type FromAISDKOptions } from "./from-ai-sdk.js";
export { toAISDK, type ToAISDKOptions } from "./to-ai-sdk.js";
export { reflectionMiddleware, type MiddlewareCheck, type ReflectionMiddlewareOptions } from "./reflection-middleware.js";
// The gateway's request checks, for `reflectionMiddleware({ checks })`.
export { jsonSchemaCheck, regexCheck, taskCheck, toolCallsCheck, type Reply, type RequestCheck } from "../critics/request/index.js";
