/**
 * Tool use through an AI SDK provider (Anthropic's and the others `PROVIDER:MODEL` opens): a forced tool choice, a
 * tool's `strict`, and earlier tool calls and results reach the provider's call options natively, as `toolChoice`,
 * `tool-call` parts and `tool` messages with `tool-result` parts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { callOptions } from "../models/ai-sdk-model.js";
import type { GenerateRequest } from "../models/language-model.js";

const parameters = { type: "object", properties: { city: { type: "string" } } };

describe("fromAISDK's call options for tool use", () => {
  it("sends a forced tool as toolChoice tool, any tool as required, and a tool's strict", () => {
    const request: GenerateRequest = { messages: [{ role: "user", content: "hi" }], maxTokens: 8, tools: [{ name: "get_weather", parameters, strict: true }], toolChoice: { type: "tool", name: "get_weather" } };
    const options = callOptions(request);
    assert.deepEqual(options.toolChoice, { type: "tool", toolName: "get_weather" });
    assert.deepEqual(options.tools, [{ type: "function", name: "get_weather", inputSchema: parameters, strict: true }]);
    assert.deepEqual(callOptions({ ...request, toolChoice: { type: "required" } }).toolChoice, { type: "required" });
    assert.equal(callOptions({ ...request, toolChoice: undefined } as GenerateRequest).toolChoice, undefined);
  });

  it("sends earlier calls as tool-call parts and their results as tool messages named after the call", () => {
    const options = callOptions({
      messages: [
        { role: "user", content: "Weather in Oslo?" },
        { role: "assistant", content: "", toolCalls: [{ id: "call_a", name: "get_weather", arguments: '{"city":"Oslo"}' }] },
        { role: "tool", toolCallId: "call_a", content: "4 C" },
        { role: "tool", toolCallId: "call_z", content: "failed", isError: true },
      ],
    });
    assert.deepEqual(options.prompt.slice(1), [
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "call_a", toolName: "get_weather", input: { city: "Oslo" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "call_a", toolName: "get_weather", output: { type: "text", value: "4 C" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "call_z", toolName: "unknown", output: { type: "error-text", value: "failed" } }] },
    ]);
    assert.equal(options.maxOutputTokens, undefined, "no limit asked, none sent");
  });
});
