/**
 * The gateway with the real request checks, compiled and run in its check workers: a JSON schema from `response_format` and tool calls
 * from `tools`, each failing on the first draft and passing on the retry, over a real HTTP upstream; the tool calls come
 * back as OpenAI's `tool_calls`, streamed or not.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import type OpenAI from "openai";
import { createHttpModel } from "../models/http.js";
import { client, completion, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour, type FakeUpstream } from "./serve-harness.js";
import type { RunningGateway } from "./server.js";

async function setup(t: TestContext, script: Behaviour[]): Promise<{ upstream: FakeUpstream; gateway: RunningGateway }> {
  const upstream = await startUpstream(t, script);
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_NO_KEY" },
  });
  return { upstream, gateway };
}

const text = (content: string): Behaviour => (res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(completion(content)));
};

const toolCall = (args: string): Behaviour => (res) => {
  res.writeHead(200, { "content-type": "application/json" });
  const body = completion(null);
  const choice = (body.choices as Array<Record<string, unknown>>)[0] as Record<string, unknown>;
  choice.message = { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: args } }] };
  choice.finish_reason = "tool_calls";
  res.end(JSON.stringify(body));
};

const weatherTool = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } } };

describe("reflected requests with the real request checks", () => {
  it("retries a reply that breaks the response_format schema, with the JSON path in the feedback", async (t) => {
    const { upstream, gateway } = await setup(t, [text('{"age": "ten"}'), text("I gave a string where a number belongs."), text('{"age": 10}')]);
    const schema = { type: "object", properties: { age: { type: "integer" } }, required: ["age"], additionalProperties: false };
    const data = await client(gateway.url).chat.completions.create({
      model: UPSTREAM_MODEL,
      messages: [{ role: "user", content: "How old is Ann? JSON." }],
      response_format: { type: "json_schema", json_schema: { name: "person", schema, strict: true } },
      reflect: {},
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    assert.equal(data.choices[0]?.message.content, '{"age": 10}');
    const checks = (data as unknown as { reflect: { checks: Array<{ source: string; pass: boolean; feedback: string }> } }).reflect.checks;
    assert.deepEqual(checks.map((c) => [c.source, c.pass]), [["schema", false], ["schema", true]]);
    assert.match(checks[0]?.feedback ?? "", /age/u);
    // The upstream was asked for the schema on every attempt.
    assert.deepEqual((upstream.requests[0]?.body.response_format as { json_schema: { schema: unknown } }).json_schema.schema, schema);
  });

  it("retries a tool call with arguments that break the tool's schema, and returns tool_calls (plain and streamed)", async (t) => {
    const script = [toolCall('{"town": "Oslo"}'), text("I used the wrong argument name."), toolCall('{"city": "Oslo"}')];
    const { upstream, gateway } = await setup(t, [...script, ...script]);
    const request = { model: UPSTREAM_MODEL, messages: [{ role: "user" as const, content: "Weather in Oslo?" }], tools: [weatherTool], tool_choice: "required" as const, reflect: {} };
    const data = await client(gateway.url).chat.completions.create(request as OpenAI.ChatCompletionCreateParamsNonStreaming);
    const message = data.choices[0]?.message;
    assert.equal(data.choices[0]?.finish_reason, "tool_calls");
    assert.deepEqual(message?.tool_calls, [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city": "Oslo"}' } }]);
    assert.equal(message?.content, null);
    const checks = (data as unknown as { reflect: { checks: Array<{ source: string; pass: boolean }> } }).reflect.checks;
    assert.deepEqual(checks.map((c) => [c.source, c.pass]), [["tools", false], ["tools", true]]);
    assert.equal((upstream.requests[0]?.body.tools as unknown[]).length, 1);

    const stream = await client(gateway.url).chat.completions.create({ ...request, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming);
    const calls: Array<{ name?: string; arguments?: string }> = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) calls.push({ ...(call.function?.name === undefined ? {} : { name: call.function.name }), ...(call.function?.arguments === undefined ? {} : { arguments: call.function.arguments }) });
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.deepEqual(calls, [{ name: "get_weather", arguments: '{"city": "Oslo"}' }]);
    assert.equal(finish, "tool_calls");
  });

  it("checks a required tool call beside a JSON schema and a regex, each part compiled on its own", async (t) => {
    const { upstream, gateway } = await setup(t, [toolCall('{"city": "Oslo"}')]);
    const data = await client(gateway.url).chat.completions.create({
      model: UPSTREAM_MODEL,
      messages: [{ role: "user", content: "Weather in Oslo?" }],
      response_format: { type: "json_schema", json_schema: { name: "any", schema: { type: "object" } } },
      tools: [weatherTool],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      reflect: { regex: "^$" },
    } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    // Answered, not refused: the schema check ran on the reply (a tool call, no JSON text, so it fails first).
    const reflect = (data as unknown as { reflect: { checks: Array<{ source: string; pass: boolean }> } }).reflect;
    assert.equal(reflect.checks[0]?.source, "schema");
    assert.equal(data.choices[0]?.finish_reason, "tool_calls");
    assert.ok(upstream.requests.length >= 1);
  });

  it("answers 400 naming the field the builder refuses", async (t) => {
    const { upstream, gateway } = await setup(t, [text("unused")]);
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: "x" }], reflect: { regex: "(unclosed" } }),
    });
    assert.equal(response.status, 400);
    assert.equal(((await response.json()) as { error: { param: string } }).error.param, "reflect.regex");
    assert.equal(upstream.requests.length, 0);
  });
});
