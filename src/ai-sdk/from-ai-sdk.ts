/**
 * `fromAISDK` lives with the models (`models/ai-sdk-model.ts`), where `openModel` opens `PROVIDER:MODEL` specs through
 * it; the AI SDK door re-exports it.
 */
export { callOptions, fromAISDK, mapFinishReason, mapUsage, providerLogprobs, type FromAISDKOptions } from "../models/ai-sdk-model.js";
