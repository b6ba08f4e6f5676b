/**
 * The HTTP model adapter on a real vLLM server (CPU build) serving SmolLM2-135M converted from its registered GGUF:
 * the chat template is applied by the server and the reply stops at the end of the turn, so no template token leaks
 * into the text; a cut reply says `length`; log-probs come back one per token and spell the text.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { VllmServer } from "../vllm/server.js";
import { startTestVllm, VLLM_TEST_MODEL, vllmSkip } from "../vllm/vllm-harness.js";
import type { LanguageModel } from "./language-model.js";
import { openModel } from "./open.js";

const TEMPLATE_TOKENS = /<\|im_start\|>|<\|im_end\|>|<\|endoftext\|>|^\s*assistant\b/u;

describe("the HTTP model on vLLM", { skip: vllmSkip(), timeout: 900_000 }, () => {
  let server: VllmServer;
  let model: LanguageModel;
  before(async () => {
    server = await startTestVllm();
    model = await openModel(server.spec);
  });
  after(async () => {
    await model?.close();
    await server?.close();
  });

  it("answers through the chat template and stops at the end of the turn, with no template token in the text", async () => {
    assert.equal(server.spec, `${server.baseUrl}#${VLLM_TEST_MODEL}`);
    const result = await model.doGenerate({ messages: [{ role: "user", content: "What is 2 + 3? Answer with a number." }], maxTokens: 64, temperature: 0 });
    assert.equal(result.finishReason, "stop", JSON.stringify(result));
    assert.match(result.text, /5/u);
    assert.doesNotMatch(result.text, TEMPLATE_TOKENS);
    assert.ok(result.usage.completionTokens > 0 && result.usage.completionTokens < 64, JSON.stringify(result.usage));
    // The prompt is the template's: a system turn SmolLM2's template adds, the user turn and the assistant header.
    assert.ok(result.usage.promptTokens > 15, JSON.stringify(result.usage));
  });

  it("a system message and two turns go through the template as turns, not as one text", async () => {
    const result = await model.doGenerate({
      messages: [
        { role: "system", content: "You answer with one word." },
        { role: "user", content: "Name a colour." },
        { role: "assistant", content: "Blue." },
        { role: "user", content: "Name another colour." },
      ],
      maxTokens: 32,
      temperature: 0,
    });
    assert.equal(result.finishReason, "stop");
    assert.ok(result.text.trim().length > 0);
    assert.doesNotMatch(result.text, TEMPLATE_TOKENS);
  });

  it("a reply cut by maxTokens says length, and greedy decoding repeats itself", async () => {
    const ask = { messages: [{ role: "user" as const, content: "Write a long story about a lighthouse keeper." }], maxTokens: 8, temperature: 0 };
    const first = await model.doGenerate(ask);
    const second = await model.doGenerate(ask);
    assert.equal(first.finishReason, "length");
    assert.equal(first.usage.completionTokens, 8);
    assert.equal(second.text, first.text);
  });

  it("gives one log-prob per generated token, whose texts spell the reply", async () => {
    const result = await model.doGenerate({ messages: [{ role: "user", content: "Say hello." }], maxTokens: 16, temperature: 0, logprobs: true });
    assert.ok(result.logprobs !== undefined && result.logprobs.length === result.usage.completionTokens, JSON.stringify(result.logprobs));
    assert.equal(result.logprobs.map((l) => l.text).join(""), result.text);
    assert.ok(result.logprobs.every((l) => Number.isFinite(l.logprob) && l.logprob <= 0));
  });
});
