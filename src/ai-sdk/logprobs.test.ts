/** Log-probs through the AI SDK doors: read from an OpenAI provider's metadata, and offered to AI SDK callers. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import { generateText } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import type { GenerateResult, LanguageModel } from "../models/language-model.js";
import { fromAISDK } from "./from-ai-sdk.js";
import { toAISDK } from "./to-ai-sdk.js";

function reply(text: string, logprobs?: unknown): LanguageModelV4GenerateResult {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: { inputTokens: { total: 5, noCache: 5, cacheRead: 0, cacheWrite: undefined }, outputTokens: { total: 2, text: 2, reasoning: undefined } },
    warnings: [],
    ...(logprobs === undefined ? {} : { providerMetadata: { openai: { logprobs: logprobs as never } } }),
  };
}

const messages = [{ role: "user" as const, content: "6 * 7?" }];

describe("fromAISDK log-probs", () => {
  it("asks an OpenAI provider with providerOptions.openai.logprobs and reads its metadata (chat shape)", async () => {
    const seen: LanguageModelV4CallOptions[] = [];
    const mock = new MockLanguageModelV4({
      doGenerate: async (options) => {
        seen.push(options);
        return reply("42", [{ token: "4", logprob: -0.5, top_logprobs: [] }, { token: "2", logprob: -0.25, top_logprobs: [] }]);
      },
    });
    const result = await fromAISDK(mock).doGenerate({ messages, maxTokens: 8, logprobs: true });
    assert.deepEqual(seen[0]?.providerOptions, { openai: { logprobs: true } });
    assert.deepEqual(result.logprobs, [
      { text: "4", logprob: -0.5 },
      { text: "2", logprob: -0.25 },
    ]);
  });

  it("reads the responses API's one list per text part; nothing when not asked or not given", async () => {
    const parts = new MockLanguageModelV4({ doGenerate: reply("42", [[{ token: "4", logprob: -0.5 }], [{ token: "2", logprob: -0.1 }]]) });
    assert.deepEqual((await fromAISDK(parts).doGenerate({ messages, maxTokens: 8, logprobs: true })).logprobs, [
      { text: "4", logprob: -0.5 },
      { text: "2", logprob: -0.1 },
    ]);
    const seen: LanguageModelV4CallOptions[] = [];
    const plain = new MockLanguageModelV4({ doGenerate: async (options) => (seen.push(options), reply("42")) });
    assert.equal((await fromAISDK(plain).doGenerate({ messages, maxTokens: 8 })).logprobs, undefined);
    assert.equal(seen[0]?.providerOptions, undefined, "not asked, not sent");
    assert.equal((await fromAISDK(plain).doGenerate({ messages, maxTokens: 8, logprobs: true })).logprobs, undefined, "a provider that gives none: absent");
  });
});

describe("toAISDK log-probs", () => {
  /** A backend that gives one log-prob per character when asked. */
  const backend: LanguageModel = {
    specificationVersion: "v1",
    modelId: "per-char",
    maxConcurrency: 1,
    async doGenerate(request): Promise<GenerateResult> {
      const text = "42";
      return { text, finishReason: "stop", usage: { promptTokens: 3, evaluatedPromptTokens: 3, completionTokens: 2 }, ...(request.logprobs === true ? { logprobs: [...text].map((t) => ({ text: t, logprob: -0.1 })) } : {}) };
    },
    async close() {},
  };

  it("exposes them in providerMetadata.reflectkit.logprobs when the caller asks via providerOptions.reflectkit.logprobs", async () => {
    const asked = await generateText({ model: toAISDK(backend), prompt: "6 * 7?", providerOptions: { reflectkit: { logprobs: true } } });
    assert.deepEqual(asked.providerMetadata?.reflectkit?.logprobs, [
      { text: "4", logprob: -0.1 },
      { text: "2", logprob: -0.1 },
    ]);
    const plain = await generateText({ model: toAISDK(backend), prompt: "6 * 7?" });
    assert.equal(plain.providerMetadata?.reflectkit, undefined);
  });
});
