import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { generateObject, generateText, jsonSchema, Output, streamText, tool } from "ai";
import { RequestFieldError } from "../errors.js";
import type { GenerateRequest, GenerateResult, LanguageModel } from "../models/language-model.js";
import { scriptedModel } from "../models/scripted.js";
import { chatMessages, toAISDK } from "./to-ai-sdk.js";

/** A reflectkit model that answers each request with `answer(request)` (for replies the scripted model cannot give). */
function fixedModel(answer: (request: GenerateRequest) => GenerateResult | Promise<GenerateResult>): LanguageModel & { calls: GenerateRequest[] } {
  const calls: GenerateRequest[] = [];
  return {
    specificationVersion: "v1",
    modelId: "fixed",
    maxConcurrency: 1,
    calls,
    async doGenerate(request) {
      calls.push(request);
      return answer(request);
    },
    async close() {},
  };
}

describe("toAISDK", () => {
  it("runs generateText on a reflectkit model: messages, sampling, text and usage mapped", async () => {
    const model = scriptedModel(["Paris."]);
    const result = await generateText({ model: toAISDK(model), system: "Be brief.", prompt: "Capital of France?", maxOutputTokens: 16, temperature: 0, seed: 5, stopSequences: ["\n"] });
    assert.equal(result.text, "Paris.");
    assert.equal(result.finishReason, "stop");
    const promptTokens = "Be brief.".length + "Capital of France?".length; // the scripted model counts characters
    assert.equal(result.usage.inputTokens, promptTokens);
    assert.equal(result.usage.outputTokens, "Paris.".length);
    assert.equal(result.usage.totalTokens, promptTokens + "Paris.".length);
    assert.equal(model.calls.length, 1);
    const request = model.calls[0];
    assert.deepEqual(request?.messages, [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Capital of France?" },
    ]);
    assert.equal(request?.maxTokens, 16);
    assert.equal(request?.temperature, 0);
    assert.equal(request?.seed, 5);
    assert.deepEqual(request?.stop, ["\n"]);
  });

  it("reports a cut reply as length and uses the default token limit when the call sets none", async () => {
    const model = scriptedModel(["a long reply"]);
    const result = await generateText({ model: toAISDK(model, { defaultMaxTokens: 6 }), prompt: "go" });
    assert.equal(result.text, "a long");
    assert.equal(result.finishReason, "length");
    assert.equal(model.calls[0]?.maxTokens, 6);
  });

  it("runs generateObject: the schema reaches the model as a JSON response format and the object parses", async () => {
    const model = scriptedModel(['{"city": "Paris", "population": 2100000}']);
    const schema = { type: "object", properties: { city: { type: "string" }, population: { type: "number" } }, required: ["city", "population"], additionalProperties: false } as const;
    const result = await generateObject({ model: toAISDK(model), schema: jsonSchema<{ city: string; population: number }>(schema), prompt: "Largest city of France?" });
    assert.deepEqual(result.object, { city: "Paris", population: 2100000 });
    assert.equal(model.calls[0]?.responseFormat?.type, "json");
    assert.deepEqual(model.calls[0]?.responseFormat?.schema.properties, schema.properties);
  });

  it("runs generateText with an object output (ai@7's replacement for generateObject)", async () => {
    const model = scriptedModel(['{"answer": 42}']);
    const schema = { type: "object", properties: { answer: { type: "number" } }, required: ["answer"] } as const;
    const result = await generateText({ model: toAISDK(model), output: Output.object({ schema: jsonSchema<{ answer: number }>(schema) }), prompt: "6 * 7?" });
    assert.deepEqual(result.output, { answer: 42 });
    assert.deepEqual(model.calls[0]?.responseFormat?.schema.properties, schema.properties);
  });

  it("runs streamText: the finished reply streams as text, with usage and finish reason", async () => {
    const model = scriptedModel(["streamed answer"]);
    const result = streamText({ model: toAISDK(model), prompt: "say it", maxOutputTokens: 64 });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    assert.equal(text, "streamed answer");
    assert.equal(await result.finishReason, "stop");
    assert.equal((await result.usage).outputTokens, "streamed answer".length);
  });

  it("offers tools as function definitions and returns the model's tool calls", async () => {
    const model = fixedModel(() => ({ text: "", toolCalls: [{ id: "call_0", name: "add", arguments: '{"a":1,"b":2}' }], finishReason: "stop", usage: { promptTokens: 3, evaluatedPromptTokens: 3, completionTokens: 4 } }));
    const parameters = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] } as const;
    const result = await generateText({ model: toAISDK(model), prompt: "add 1 and 2", tools: { add: tool({ description: "adds two numbers", inputSchema: jsonSchema<{ a: number; b: number }>(parameters) }) } });
    assert.deepEqual(model.calls[0]?.tools?.map((t) => [t.name, t.description, t.parameters?.properties]), [["add", "adds two numbers", parameters.properties]]);
    assert.equal(result.finishReason, "tool-calls");
    assert.deepEqual(result.toolCalls.map((c) => [c.toolCallId, c.toolName, c.input]), [["call_0", "add", { a: 1, b: 2 }]]);
  });

  it("writes tool calls and results of the prompt as text turns, and refuses files naming the part", () => {
    const messages = chatMessages([
      { role: "user", content: [{ type: "text", text: "add 1 and 2" }] },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "add", input: { a: 1, b: 2 } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "add", output: { type: "json", value: 3 } }] },
    ]);
    assert.deepEqual(messages, [
      { role: "user", content: "add 1 and 2" },
      { role: "assistant", content: '<tool_call>{"name":"add","arguments":"{\\"a\\":1,\\"b\\":2}"}</tool_call>' },
      { role: "user", content: '<tool_response>{"name":"add","content":3}</tool_response>' },
    ]);
    assert.throws(
      () => chatMessages([{ role: "user", content: [{ type: "text", text: "see" }, { type: "file", mediaType: "image/png", data: { type: "data", data: new Uint8Array([1]) } }] }]),
      (error) => error instanceof RequestFieldError && error.field === "prompt[0].content[1]",
    );
  });

  it("warns about settings the model cannot honour", async () => {
    const model = scriptedModel(["ok"]);
    const result = await generateText({ model: toAISDK(model), prompt: "x", maxOutputTokens: 4, presencePenalty: 0.5 });
    assert.deepEqual(result.warnings?.map((w) => (w.type === "unsupported" ? w.feature : w.type)), ["presencePenalty"]);
  });

  it("passes the abort signal: aborting generateText ends the model's call with the caller's reason", async () => {
    const controller = new AbortController();
    const model = fixedModel(
      (request) =>
        new Promise((_, reject) => {
          request.signal?.addEventListener("abort", () => reject(request.signal?.reason), { once: true });
        }),
    );
    const pending = generateText({ model: toAISDK(model), prompt: "wait", maxOutputTokens: 4, abortSignal: controller.signal });
    const reason = new Error("user left");
    setTimeout(() => controller.abort(reason), 5);
    await assert.rejects(pending, /user left/);
    assert.equal(model.calls.length, 1, "an abort is not retried");
    assert.equal(model.calls[0]?.signal?.aborted, true);
  });
});
