/**
 * The official Anthropic Python client (the pinned venv of anthropic-python-client.ts) reads what the Messages dialect
 * writes: a real local HTTP server parses each request with the dialect (so the client's own bodies must parse) and
 * answers with its Message, its event stream and its errors, as the gateway's `/v1/messages` does.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { RequestFieldError } from "../../errors.js";
import { ensureAnthropicPythonClient, runAnthropicPythonClient, type AnthropicClientHttpError, type AnthropicCreateResult, type AnthropicEventsResult, type AnthropicStreamResult } from "../anthropic-python-client.js";
import type { RequestBounds } from "../loop-request.js";
import type { CompletionReply, ReflectExtension } from "../response.js";
import { messagesDialect } from "./messages.js";

const KEY = "test-key-0123456789";
const bounds: RequestBounds = { maxTurns: 4, budget: { tokens: 1000, calls: 6, seconds: 30 }, defaultMaxTokens: 64 };
const meta = { id: "msg_py1", created: 1_764_000_000, model: "claude-test" };
const usage = { promptTokens: 30, completionTokens: 12, evaluatedPromptTokens: 30 };
const reflect = { attempts: 2, decision: "verified", rolled_back: false, stopped_by: "verified", selected: 2, passed: true, checks: [{ turn: 1, source: "tools", pass: false, score: 0, feedback: "city is required" }, { turn: 2, source: "tools", pass: true, score: 1, feedback: "valid" }], usage_by_role: {} } as unknown as ReflectExtension;
const weather = { name: "get_weather", description: "Weather of a city", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };
const toolReply: CompletionReply = { text: "Looking it up.", finishReason: "stop", toolCalls: [{ id: "toolu_01", name: "get_weather", arguments: '{"city":"Oslo"}' }] };

const seen: Array<{ headers: IncomingMessage["headers"]; body: Record<string, unknown> }> = [];

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json", ...(status === 200 ? { "x-reflect-attempts": "2", "x-reflect-passed": "true" } : {}) }).end(JSON.stringify(body));
}

function answer(request: IncomingMessage, response: ServerResponse, raw: string): void {
  const body = JSON.parse(raw) as Record<string, unknown>;
  seen.push({ headers: request.headers, body });
  if (request.headers["x-api-key"] !== KEY) {
    send(response, 401, messagesDialect.error({ status: 401, message: "missing or wrong API key", type: "authentication_error", param: null, code: "invalid_api_key" }));
    return;
  }
  let parsed;
  try {
    parsed = messagesDialect.parse(body, bounds);
  } catch (error) {
    if (!(error instanceof RequestFieldError)) throw error;
    send(response, 400, messagesDialect.error({ status: 400, message: error.message, type: "invalid_request_error", param: error.field, code: null }));
    return;
  }
  if (parsed.reflect?.onFailure === "error") {
    send(response, 422, messagesDialect.error({ status: 422, message: "the answer failed its checks after 2 attempts", type: "invalid_request_error", param: null, code: "checks_failed", reflect: { ...reflect, decision: "failed", passed: false } }));
    return;
  }
  const ext = parsed.reflect === undefined ? undefined : reflect;
  if (parsed.stream) {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    // A reflected stream settles behind keep-alive pings; `max_tokens: 13` stands for a stream that fails after them.
    response.write(messagesDialect.keepAlive);
    if (parsed.sampling.maxTokens === 13) {
      response.end(messagesDialect.errorEvent({ status: 502, message: "the upstream failed: 500", type: "server_error", param: null, code: "upstream_status" }));
      return;
    }
    response.end(messagesDialect.events(meta, toolReply, usage, parsed, ext));
    return;
  }
  send(response, 200, messagesDialect.answer(meta, toolReply, usage, ext));
}

const server = createServer((request, response) => {
  let raw = "";
  request.setEncoding("utf8").on("data", (part: string) => (raw += part));
  request.on("end", () => answer(request, response, raw));
});

let python: string;
let baseUrl: string;
before(async () => {
  python = (await ensureAnthropicPythonClient()).python;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const request = { model: "claude-test", max_tokens: 64, system: "Use the tools.", messages: [{ role: "user", content: "Weather in Oslo?" }], tools: [weather], tool_choice: { type: "any" } };

describe("the official Anthropic Python client reads the Messages dialect", () => {
  it("creates, streams and reads raw events of a reflected answer, reflect and tool input intact", async () => {
    const result = await runAnthropicPythonClient(python, { baseUrl, apiKey: KEY, request, reflect: { max_turns: 2 } });
    const expected = messagesDialect.answer(meta, toolReply, usage, reflect);
    const created = result.create as AnthropicCreateResult;
    assert.deepEqual(created.message, expected);
    assert.deepEqual(created.headers, { "x-reflect-attempts": "2", "x-reflect-passed": "true" });
    const streamed = result.stream as AnthropicStreamResult;
    assert.deepEqual(streamed.texts, ["Looking it up."]);
    assert.deepEqual(streamed.message, expected, "the accumulated message carries reflect (it rides on message_start)");
    const events = result.events as AnthropicEventsResult;
    assert.deepEqual(events.types, ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    assert.deepEqual(events.reflect, reflect);
    const sent = seen.at(-1)!;
    assert.equal(sent.headers["x-api-key"], KEY);
    assert.ok(typeof sent.headers["anthropic-version"] === "string");
    assert.deepEqual(sent.body.reflect, { max_turns: 2 });
  });

  it("gets a 400 naming the field, a 422 with checks_failed and reflect, and a stream's error event, each as the client's error", async () => {
    const bad = await runAnthropicPythonClient(python, { baseUrl, apiKey: KEY, request: { ...request, thinking: { type: "enabled" } }, mode: "create" });
    const badError = (bad.create as AnthropicClientHttpError).error;
    assert.deepEqual([badError.status, badError.type], [400, "BadRequestError"]);
    assert.deepEqual((badError.body as { error: unknown }).error, { type: "invalid_request_error", message: 'thinking.budget_tokens: is required with { "type": "enabled" }: the most tokens the model may think in', param: "thinking.budget_tokens" });

    const failed = await runAnthropicPythonClient(python, { baseUrl, apiKey: KEY, request, reflect: { on_failure: "error" }, mode: "create" });
    const failedError = (failed.create as AnthropicClientHttpError).error;
    assert.deepEqual([failedError.status, failedError.type], [422, "UnprocessableEntityError"]);
    const body = failedError.body as { error: { type: string; code: string }; reflect: { passed: boolean } };
    assert.deepEqual([body.error.type, body.error.code, body.reflect.passed], ["invalid_request_error", "checks_failed", false]);

    const cut = await runAnthropicPythonClient(python, { baseUrl, apiKey: KEY, request: { ...request, max_tokens: 13 }, mode: "all" });
    for (const part of [cut.stream, cut.events] as AnthropicClientHttpError[]) {
      // The stream had begun (200, keep-alive pings sent): the client raises the event's error with the stream's status.
      assert.equal(part.error.status, 200);
      assert.deepEqual((part.error.body as { error: unknown }).error, { type: "api_error", message: "the upstream failed: 500", code: "upstream_status" });
    }

    const unauthorised = await runAnthropicPythonClient(python, { baseUrl, apiKey: "wrong", request, mode: "create" });
    assert.equal((unauthorised.create as AnthropicClientHttpError).error.type, "AuthenticationError");
  });
});
