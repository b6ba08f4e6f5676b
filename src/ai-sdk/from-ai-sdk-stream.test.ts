import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { APICallError, type LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV4 } from "ai/test";
import { ModelCallError } from "../errors.js";
import type { StreamPart } from "../models/language-model.js";
import { fromAISDK } from "./from-ai-sdk.js";

const usage = { inputTokens: { total: 20, noCache: 15, cacheRead: 5, cacheWrite: undefined }, outputTokens: { total: 7, text: 7, reasoning: undefined } };
const finish: LanguageModelV4StreamPart = { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_use" }, usage };

async function collect(parts: AsyncIterable<StreamPart> | undefined): Promise<StreamPart[]> {
  assert.ok(parts !== undefined, "the wrapped model streams");
  const out: StreamPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

describe("fromAISDK's doStream", () => {
  it("maps a provider's stream: text deltas, a tool call's input pieces, a whole tool call, the finish and usage; reasoning and provider-run calls left out", async () => {
    const parts: LanguageModelV4StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "reasoning-delta", id: "r", delta: "thinking" },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Let me " },
      { type: "text-delta", id: "t", delta: "look." },
      { type: "text-end", id: "t" },
      { type: "tool-input-start", id: "toolu_1", toolName: "get_weather" },
      { type: "tool-input-delta", id: "toolu_1", delta: '{"city":' },
      { type: "tool-input-delta", id: "toolu_1", delta: '"Paris"}' },
      { type: "tool-input-end", id: "toolu_1" },
      { type: "tool-call", toolCallId: "toolu_1", toolName: "get_weather", input: '{"city":"Paris"}' },
      { type: "tool-call", toolCallId: "srv_1", toolName: "web_search", input: "{}", providerExecuted: true },
      { type: "tool-call", toolCallId: "toolu_2", toolName: "get_time", input: '{"zone":"CET"}' },
      finish,
    ];
    const mock = new MockLanguageModelV4({ doStream: async () => ({ stream: ReadableStream.from(parts) }) });
    const seen = await collect(fromAISDK(mock).doStream?.({ messages: [{ role: "user", content: "Weather?" }], maxTokens: 32 }));
    assert.deepEqual(seen, [
      { type: "text-delta", text: "Let me " },
      { type: "text-delta", text: "look." },
      { type: "tool-call-delta", index: 0, id: "toolu_1", name: "get_weather", argumentsDelta: "" },
      { type: "tool-call-delta", index: 0, argumentsDelta: '{"city":' },
      { type: "tool-call-delta", index: 0, argumentsDelta: '"Paris"}' },
      { type: "tool-call-delta", index: 1, id: "toolu_2", name: "get_time", argumentsDelta: '{"zone":"CET"}' },
      { type: "finish", finishReason: "other", usage: { promptTokens: 20, evaluatedPromptTokens: 15, completionTokens: 7 } },
    ]);
    assert.equal(mock.doStreamCalls[0]?.maxOutputTokens, 32);
  });

  it("raises a provider's error part, and a stream that ends without a finish, as ModelCallError", async () => {
    const failing = new MockLanguageModelV4({ doStream: async () => ({ stream: ReadableStream.from<LanguageModelV4StreamPart>([{ type: "text-delta", id: "t", delta: "par" }, { type: "error", error: new APICallError({ message: "overloaded", url: "https://provider.invalid", requestBodyValues: {}, statusCode: 529, isRetryable: true }) }]) }) });
    await assert.rejects(collect(fromAISDK(failing).doStream?.({ messages: [{ role: "user", content: "hi" }] })), (error: unknown) => error instanceof ModelCallError && error.status === 529);
    const cut = new MockLanguageModelV4({ doStream: async () => ({ stream: ReadableStream.from<LanguageModelV4StreamPart>([{ type: "text-delta", id: "t", delta: "par" }]) }) });
    await assert.rejects(collect(fromAISDK(cut).doStream?.({ messages: [{ role: "user", content: "hi" }] })), /without a finish/u);
  });

  it("cancels the provider's stream when the caller leaves early", async () => {
    let cancelled = false;
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      start(controller) {
        controller.enqueue({ type: "text-delta", id: "t", delta: "first" });
      },
      cancel() {
        cancelled = true;
      },
    });
    const mock = new MockLanguageModelV4({ doStream: async () => ({ stream }) });
    for await (const part of fromAISDK(mock).doStream?.({ messages: [{ role: "user", content: "hi" }] }) ?? []) {
      assert.deepEqual(part, { type: "text-delta", text: "first" });
      break;
    }
    assert.equal(cancelled, true);
  });
});
