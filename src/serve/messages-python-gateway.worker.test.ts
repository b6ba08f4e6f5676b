/**
 * The official Anthropic Python client (the pinned venv of anthropic-python-client.ts) against the real gateway's
 * `/v1/messages`, in front of a real local OpenAI-compatible upstream: a reflected request with tools whose first
 * draft fails the tools check (created, streamed with `messages.stream`, and as raw events), a plain one, a refusal
 * naming its field, and the key sent as Anthropic's `x-api-key`.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { createHttpModel } from "../models/http.js";
import { ensureAnthropicPythonClient, runAnthropicPythonClient, type AnthropicClientHttpError, type AnthropicCreateResult, type AnthropicEventsResult, type AnthropicStreamResult } from "./anthropic-python-client.js";
import { completion, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour } from "./serve-harness.js";

const KEY = "gateway-key-0123456789";
const weather = { name: "get_weather", description: "Weather of a city", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };

let python: string;
before(async () => {
  python = (await ensureAnthropicPythonClient()).python;
});

/** Calls `get_weather` without its city until asked to try again, then with it; answers in text without tools. */
const weatherCall: Behaviour = (res, seen, index) => {
  const body = completion(null, { prompt_tokens: 30, completion_tokens: 6 });
  const choice = (body.choices as Array<Record<string, unknown>>)[0] as Record<string, unknown>;
  const retried = JSON.stringify(seen.body.messages).includes("try again");
  if (seen.body.tools === undefined) choice.message = { role: "assistant", content: "I left out the city." };
  else {
    choice.message = { role: "assistant", content: null, tool_calls: [{ id: `call_${index}`, type: "function", function: { name: "get_weather", arguments: retried ? '{"city": "Oslo"}' : "{}" } }] };
    choice.finish_reason = "tool_calls";
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

describe("the official Anthropic Python client against the gateway", () => {
  it("gets a reflected tool call that passed its check, created, streamed or as raw events; a plain answer; a 400 naming the field", async (t) => {
    const upstream = await startUpstream(t, weatherCall);
    const gateway = await startTestGateway(t, {
      upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
      upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_UNSET_KEY" },
      apiKey: KEY,
    });
    const request = { model: UPSTREAM_MODEL, max_tokens: 64, system: "Use the tools.", messages: [{ role: "user", content: "Weather in Oslo?" }], tools: [weather], tool_choice: { type: "any" } };
    const result = await runAnthropicPythonClient(python, { baseUrl: gateway.url, apiKey: KEY, request, reflect: { max_turns: 2 } });
    const created = result.create as AnthropicCreateResult;
    const content = created.message.content as Array<Record<string, unknown>>;
    assert.equal(created.message.stop_reason, "tool_use");
    assert.deepEqual(content.map((b) => [b.type, b.name, b.input]), [["tool_use", "get_weather", { city: "Oslo" }]]);
    const reflect = created.message.reflect as { attempts: number; passed: boolean };
    assert.deepEqual([reflect.attempts, reflect.passed], [2, true]);
    assert.deepEqual([created.headers["x-reflect-attempts"], created.headers["x-reflect-passed"]], ["2", "true"]);
    const streamed = result.stream as AnthropicStreamResult;
    assert.deepEqual((streamed.message.content as Array<Record<string, unknown>>).map((b) => b.input), [{ city: "Oslo" }]);
    assert.equal((streamed.message.reflect as { passed: boolean }).passed, true);
    const events = result.events as AnthropicEventsResult;
    assert.deepEqual(events.types, ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    assert.equal((events.reflect as { attempts: number }).attempts, 2);
    // Three reflected requests, three upstream calls each (draft, reflection, retry).
    assert.equal(upstream.requests.length, 9);

    const plain = await runAnthropicPythonClient(python, { baseUrl: gateway.url, apiKey: KEY, request: { ...request, tools: undefined, tool_choice: undefined }, mode: "create" });
    const message = (plain.create as AnthropicCreateResult).message;
    assert.deepEqual([message.content, message.reflect], [[{ type: "text", text: "I left out the city.", citations: null }], undefined]);

    const bad = await runAnthropicPythonClient(python, { baseUrl: gateway.url, apiKey: KEY, request: { ...request, stop_sequences: [""] }, mode: "create" });
    const error = (bad.create as AnthropicClientHttpError).error;
    assert.deepEqual([error.status, error.type], [400, "BadRequestError"]);
    assert.deepEqual([(error.body as { type: string }).type, (error.body as { error: { type: string; param: string } }).error.param], ["error", "stop_sequences"]);

    const refused = await runAnthropicPythonClient(python, { baseUrl: gateway.url, apiKey: "wrong", request, mode: "create" });
    assert.deepEqual([(refused.create as AnthropicClientHttpError).error.status, (refused.create as AnthropicClientHttpError).error.type], [401, "AuthenticationError"]);
  });
});
