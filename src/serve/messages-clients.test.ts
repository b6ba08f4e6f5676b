/**
 * The official `@anthropic-ai/sdk` client against the real gateway's `/v1/messages`, in front of a real local
 * OpenAI-compatible upstream (it speaks Chat Completions only, so every Messages request is translated): a plain
 * `messages.create`, a reflected one with tools whose first draft fails the tools check and whose retry passes,
 * `messages.stream` and `stream: true` (settled at once, and kept alive with pings while the loop settles), and the
 * errors and upstream faults a client meets, each raised as the SDK's own error class with Anthropic's error shape.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import type { Episode } from "../loops/types.js";
import { createHttpModel } from "../models/http.js";
import type { ReflectExtension } from "./response.js";
import { completion, hang, reply, startTestGateway, startUpstream, status, UPSTREAM_MODEL, type Behaviour, type UpstreamRequest } from "./serve-harness.js";
import type { GatewayLimits } from "./server.js";

const KEY = "gateway-key-0123456789";
const weather = { name: "get_weather", description: "Weather of a city", input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] } };
const ask = { model: UPSTREAM_MODEL, max_tokens: 64, system: "Answer briefly.", messages: [{ role: "user" as const, content: "What is six times seven? Digits only." }] };

/** A completion that calls `get_weather` with `args`. */
function toolCall(args: string): Behaviour {
  return (res, _seen, index) => {
    const body = completion(null, { prompt_tokens: 30 + index, completion_tokens: 6 + index });
    const choice = (body.choices as Array<Record<string, unknown>>)[0] as Record<string, unknown>;
    choice.message = { role: "assistant", content: null, tool_calls: [{ id: `call_${index}`, type: "function", function: { name: "get_weather", arguments: args } }] };
    choice.finish_reason = "tool_calls";
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
}

/** `behaviour`, answered after `ms`. */
function later(ms: number, behaviour: Behaviour): Behaviour {
  return (res, seen, index, upstream) => {
    const timer = setTimeout(() => behaviour(res, seen, index, upstream), ms);
    res.once("close", () => clearTimeout(timer));
  };
}

async function setup(t: TestContext, script: Behaviour | Behaviour[], limits: Partial<GatewayLimits> = {}) {
  const upstream = await startUpstream(t, script);
  const recorded: Episode[] = [];
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_UNSET_KEY" },
    apiKey: KEY,
    recorder: { dir: "(memory)", append: async (episode) => void recorded.push(episode), close: async () => {} },
    limits,
  });
  return { upstream, gateway, recorded, anthropic: new Anthropic({ baseURL: gateway.url, apiKey: KEY, maxRetries: 0 }) };
}

const reflectOf = (message: unknown): ReflectExtension => (message as { reflect: ReflectExtension }).reflect;
const sentMessages = (seen: UpstreamRequest | undefined) => seen?.body.messages as Array<{ role: string; content: string }>;

describe("the official Anthropic client on /v1/messages", () => {
  it("creates a message: the conversation translated for the upstream, the answer as a Message", async (t) => {
    const { upstream, anthropic } = await setup(t, reply("42"));
    const message = await anthropic.messages.create(ask);
    assert.match(message.id, /^msg_/u);
    assert.deepEqual([message.type, message.role, message.model, message.stop_reason, message.stop_sequence], ["message", "assistant", UPSTREAM_MODEL, "end_turn", null]);
    assert.deepEqual(message.content, [{ type: "text", text: "42", citations: null }]);
    assert.deepEqual([message.usage.input_tokens, message.usage.output_tokens], [20, 3]);
    assert.equal(reflectOf(message), undefined, "a request without reflect is not reflected");
    assert.deepEqual(sentMessages(upstream.requests[0]), [
      { role: "system", content: "Answer briefly." },
      { role: "user", content: "What is six times seven? Digits only." },
    ]);
    assert.equal(upstream.requests[0]?.body.max_tokens, 64);
    assert.equal(upstream.requests[0]?.headers.authorization, undefined, "the gateway's key is never forwarded");

    // Streamed, the one call's answer as Anthropic's events.
    const final = await anthropic.messages.stream(ask).finalMessage();
    assert.deepEqual([final.content, final.stop_reason, final.usage.output_tokens, reflectOf(final)], [[{ type: "text", text: "42", citations: null }], "end_turn", 4, undefined]);
  });

  it("retries a tool call that failed the tools check and answers the one that passed, then takes its tool result", async (t) => {
    const { upstream, anthropic, recorded } = await setup(t, [toolCall("{}"), reply("I left out the city; I will name it."), toolCall('{"city":"Oslo"}'), reply("It is 18 C in Oslo.")]);
    const request = { ...ask, messages: [{ role: "user" as const, content: "Weather in Oslo?" }], tools: [weather], tool_choice: { type: "any" as const } };
    const { data: message, response } = await anthropic.messages.create({ ...request, reflect: { max_turns: 2 } } as never as typeof request).withResponse();
    assert.equal(message.stop_reason, "tool_use");
    assert.deepEqual(message.content, [{ type: "tool_use", id: "call_2", name: "get_weather", input: { city: "Oslo" }, caller: { type: "direct" } }]);
    const reflect = reflectOf(message);
    assert.deepEqual([reflect.attempts, reflect.passed, reflect.checks.map((c) => [c.turn, c.source, c.pass])], [2, true, [[1, "tools", false], [2, "tools", true]]]);
    assert.deepEqual([response.headers.get("x-reflect-attempts"), response.headers.get("x-reflect-passed")], ["2", "true"]);
    // Usage counts every call the request caused: two attempts and the reflection between them.
    assert.deepEqual([message.usage.input_tokens, message.usage.output_tokens], [30 + 21 + 32, 6 + 4 + 8]);
    assert.equal((recorded[0]?.record as { dialect?: string } | undefined)?.dialect, "messages", "the record names the door the request came in by");
    const first = upstream.requests[0]?.body as { tools: Array<{ function: { name: string; parameters: unknown } }>; tool_choice?: unknown };
    assert.deepEqual(first.tools.map((tool) => [tool.function.name, tool.function.parameters]), [["get_weather", weather.input_schema]]);

    // The application runs the tool and sends its result back, as Anthropic's tool-use loop does.
    const toolUse = message.content[0] as Anthropic.ToolUseBlock;
    const followUp = await anthropic.messages.create({
      ...request,
      tool_choice: { type: "auto" },
      messages: [...request.messages, { role: "assistant", content: message.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: toolUse.id, content: "18 C" }] }],
    });
    assert.deepEqual(followUp.content, [{ type: "text", text: "It is 18 C in Oslo.", citations: null }]);
    assert.deepEqual(sentMessages(upstream.requests[3]).slice(-2), [
      // The tool use and its result reach the Chat Completions upstream as its own tool_calls and tool message.
      { role: "assistant", content: null, tool_calls: [{ id: "call_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
      { role: "tool", tool_call_id: "call_2", content: "18 C" },
    ]);
  });

  it("streams a reflected answer the SDK accumulates, reflect included, through messages.stream and stream: true", async (t) => {
    const draftThenDigits: Behaviour[] = [reply("forty-two"), reply("I must answer in digits."), reply("42")];
    const { anthropic } = await setup(t, [...draftThenDigits, ...draftThenDigits]);
    const request = { ...ask, reflect: { regex: "^\\d+$" } } as never as typeof ask;
    const stream = anthropic.messages.stream(request);
    const texts: string[] = [];
    stream.on("text", (text) => texts.push(text));
    const final = await stream.finalMessage();
    assert.deepEqual(texts, ["42"]);
    assert.deepEqual([final.content, final.stop_reason], [[{ type: "text", text: "42", citations: null }], "end_turn"]);
    assert.deepEqual([reflectOf(final).attempts, reflectOf(final).passed], [2, true]);
    assert.equal(final.usage.output_tokens, 3 + 4 + 5);

    const types: string[] = [];
    let reflect: unknown;
    for await (const event of await anthropic.messages.create({ ...request, stream: true })) {
      types.push(event.type);
      if (event.type === "message_delta") reflect = (event as unknown as { reflect: unknown }).reflect;
    }
    assert.deepEqual(types, ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    assert.equal((reflect as ReflectExtension).passed, true);
  });

  it("keeps a slow reflected stream alive with pings the SDK skips, and raises a failure after them as an error event", async (t) => {
    const { anthropic } = await setup(t, later(300, reply("42")), { streamKeepAliveMs: 60 });
    const raw = await fetch(`${(anthropic as unknown as { baseURL: string }).baseURL}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": KEY, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ ...ask, stream: true, reflect: { regex: "^\\d+$" } }),
    });
    const text = await raw.text();
    assert.equal(raw.status, 200);
    assert.ok(text.startsWith('event: ping\ndata: {"type": "ping"}\n\nevent: ping\n'), `pings first: ${text.slice(0, 120)}`);
    assert.ok(text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n'));

    const { anthropic: again } = await setup(t, later(300, reply("42")), { streamKeepAliveMs: 60 });
    const final = await again.messages.stream({ ...ask, reflect: { regex: "^\\d+$" } } as never as typeof ask).finalMessage();
    assert.deepEqual(final.content, [{ type: "text", text: "42", citations: null }]);

    const failing: Behaviour[] = [later(200, reply("maybe")), reply("I must answer in digits."), reply("still words")];
    const { anthropic: failed } = await setup(t, failing, { streamKeepAliveMs: 50 });
    await assert.rejects(failed.messages.stream({ ...ask, reflect: { regex: "^\\d+$", on_failure: "error" } } as never as typeof ask).finalMessage(), (error: unknown) => {
      assert.ok(error instanceof Anthropic.APIError, String(error));
      const body = error.error as { type: string; error: { type: string; code: string }; reflect: ReflectExtension };
      assert.deepEqual([body.type, body.error.type, body.error.code, body.reflect.passed], ["error", "invalid_request_error", "checks_failed", false]);
      return true;
    });
  });

  it("raises the gateway's refusals as the SDK's error classes, in Anthropic's error shape", async (t) => {
    const { upstream, gateway, anthropic } = await setup(t, [reply("maybe"), reply("I must answer in digits."), reply("still words")]);
    const image = { type: "image" as const, source: { type: "base64" as const, media_type: "image/png" as const, data: "iVBORw0KGgo=" } };
    await assert.rejects(anthropic.messages.create({ ...ask, messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, image] }] }), (error: unknown) => {
      assert.ok(error instanceof Anthropic.BadRequestError, String(error));
      assert.equal(error.type, "invalid_request_error");
      assert.equal((error.error as { error: { param: string } }).error.param, "messages[0].content[1]");
      return true;
    });
    await assert.rejects(anthropic.messages.create({ ...ask, tools: [{ type: "web_search_20250305", name: "web_search" }], tool_choice: { type: "tool", name: "web_search" } }), (error: unknown) => error instanceof Anthropic.BadRequestError && /tool_choice/u.test(error.message));
    const { max_tokens: _dropped, ...withoutMax } = ask;
    await assert.rejects(anthropic.messages.create(withoutMax as typeof ask), (error: unknown) => error instanceof Anthropic.BadRequestError && /max_tokens: is required/u.test(error.message));
    await assert.rejects(anthropic.messages.countTokens({ model: ask.model, system: ask.system, messages: ask.messages }), (error: unknown) => {
      assert.ok(error instanceof Anthropic.BadRequestError, String(error));
      assert.equal((error.error as { error: { code: string } }).error.code, "cannot_count");
      return true;
    });
    assert.equal(upstream.requests.length, 0, "a refused request costs no upstream call");

    const wrongKey = new Anthropic({ baseURL: gateway.url, apiKey: "wrong", maxRetries: 0 });
    await assert.rejects(wrongKey.messages.create(ask), (error: unknown) => error instanceof Anthropic.AuthenticationError && error.type === "authentication_error");
    // Anthropic's header form of the key, as the Python client and older SDKs send it.
    const byHeader = await fetch(`${gateway.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "wrong" }, body: JSON.stringify(ask) });
    assert.deepEqual([byHeader.status, ((await byHeader.json()) as { error: { type: string } }).error.type], [401, "authentication_error"]);

    await assert.rejects(anthropic.messages.create({ ...ask, reflect: { regex: "^\\d+$", on_failure: "error" } } as never as typeof ask), (error: unknown) => {
      assert.ok(error instanceof Anthropic.UnprocessableEntityError, String(error));
      const body = error.error as { error: { type: string; code: string; message: string }; reflect: ReflectExtension };
      assert.deepEqual([body.error.type, body.error.code, body.reflect.passed, body.reflect.attempts], ["invalid_request_error", "checks_failed", false, 2]);
      assert.match(body.error.message, /failed its checks after 2 attempts/u);
      return true;
    });
  });

  it("answers an upstream that fails or hangs as api_error or timeout_error, which the SDK raises", async (t) => {
    const { anthropic } = await setup(t, status(500, { error: { message: "boom", type: "server_error" } }));
    await assert.rejects(anthropic.messages.create(ask), (error: unknown) => error instanceof Anthropic.InternalServerError && error.status === 502 && error.type === "api_error");
    await assert.rejects(anthropic.messages.create({ ...ask, reflect: {} } as never as typeof ask), (error: unknown) => error instanceof Anthropic.InternalServerError && error.status === 502 && error.type === "api_error");
    const { anthropic: slow } = await setup(t, hang, { requestTimeoutMs: 300 });
    await assert.rejects(slow.messages.create(ask), (error: unknown) => error instanceof Anthropic.APIError && error.status === 504 && error.type === "timeout_error");
  });
});

/** An Anthropic event stream as its documentation shows it, a ping among the events. */
const upstreamEvents = [
  ["message_start", { type: "message_start", message: { id: "msg_up2", type: "message", role: "assistant", model: "claude-up", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } } }],
  ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
  ["ping", { type: "ping" }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lo!" } }],
  ["content_block_stop", { type: "content_block_stop", index: 0 }],
  ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 3 } }],
  ["message_stop", { type: "message_stop" }],
].map(([name, data]) => `event: ${name as string}\ndata: ${JSON.stringify(data)}\n\n`);

/** An Anthropic Messages endpoint: a Message, or the event stream above, one event at a time. */
const anthropicUpstream: Behaviour = (res, seen) => {
  if (seen.body.max_tokens === undefined) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ input_tokens: 17 }));
    return;
  }
  if (seen.body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json", "request-id": "req_up1" });
    res.end(JSON.stringify({ id: "msg_up1", type: "message", role: "assistant", model: "claude-up", content: [{ type: "text", text: "Hello!" }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 12, output_tokens: 3 } }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let i = 0;
  const next = (): void => {
    if (res.destroyed) return;
    if (i === upstreamEvents.length) {
      res.end();
      return;
    }
    res.write(upstreamEvents[i++]);
    setTimeout(next, 5);
  };
  next();
};

describe("the Messages route under faults and hostile bodies", () => {
  it("answers an upstream still rate-limiting as a 429 rate_limit_error with Retry-After, which the SDK raises", async (t) => {
    const limited = status(429, { error: { message: "slow down", type: "rate_limit_error" } }, { "retry-after": "0" });
    const { anthropic } = await setup(t, limited);
    for (const body of [ask, { ...ask, reflect: {} }]) {
      await assert.rejects(anthropic.messages.create(body as typeof ask), (error: unknown) => {
        assert.ok(error instanceof Anthropic.RateLimitError, String(error));
        assert.equal(error.type, "rate_limit_error");
        assert.ok(Number(error.headers?.get("retry-after")) >= 1);
        return true;
      });
    }
  });

  it("refuses a body that is not JSON, too large or too deep in Anthropic's shape, before any upstream call", async (t) => {
    const { upstream, gateway } = await setup(t, reply("42"), { bodyBytes: 64 * 1024, bodyDepth: 16 });
    const post = (body: string) => fetch(`${gateway.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": KEY }, body });
    const deep = JSON.stringify({ ...ask, metadata: JSON.parse(`${"{\"a\":".repeat(40)}1${"}".repeat(40)}`) as unknown });
    const cases: Array<[string, number, string]> = [
      ['{"model": ', 400, "invalid_request_error"],
      [JSON.stringify({ ...ask, system: "x".repeat(100 * 1024) }), 413, "request_too_large"],
      [deep, 400, "invalid_request_error"],
      [JSON.stringify([ask]), 400, "invalid_request_error"],
      [JSON.stringify({ ...ask, reflect: {}, messages: Array.from({ length: 3 }, () => ({ role: "user", content: [{ type: "image", source: { type: "url", url: "http://127.0.0.1:1/x.png" } }] })) }), 400, "invalid_request_error"],
    ];
    for (const [body, code, type] of cases) {
      const answer = await post(body);
      const error = (await answer.json()) as { type: string; error: { type: string; message: string } };
      assert.deepEqual([answer.status, error.type, error.error.type], [code, "error", type], `${body.slice(0, 60)} → ${error.error.message}`);
    }
    assert.equal(upstream.requests.length, 0);
  });
});

describe("the Messages door in front of an upstream that speaks Messages", () => {
  it("relays a request that does not ask for reflection byte for byte, the upstream's key in x-api-key, the gateway's never", async (t) => {
    const upstreamKeyEnv = "REFLECT_TEST_MESSAGES_UPSTREAM_KEY";
    process.env[upstreamKeyEnv] = "sk-ant-upstream-0123456789";
    t.after(() => delete process.env[upstreamKeyEnv]);
    const upstream = await startUpstream(t, [anthropicUpstream, anthropicUpstream, anthropicUpstream, anthropicUpstream, status(429, { type: "error", error: { type: "rate_limit_error", message: "slow down" } }, { "retry-after": "7" })]);
    const gateway = await startTestGateway(t, {
      upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL }),
      upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: upstreamKeyEnv, speaks: ["chat", "messages"] },
      apiKey: KEY,
    });
    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: KEY, maxRetries: 0 });
    const message = await anthropic.messages.create(ask);
    assert.deepEqual([message.id, message.content], ["msg_up1", [{ type: "text", text: "Hello!" }]]);
    const seen = upstream.requests[0];
    assert.equal(seen?.headers["x-api-key"], "sk-ant-upstream-0123456789");
    assert.equal(seen?.headers.authorization, undefined, "the gateway's key is not forwarded");
    assert.ok(typeof seen?.headers["anthropic-version"] === "string", "Anthropic's headers go through");
    assert.deepEqual(seen?.body, ask, "the body is the client's, untranslated");

    const final = await anthropic.messages.stream(ask).finalMessage();
    assert.deepEqual([final.id, final.content], ["msg_up2", [{ type: "text", text: "Hello!" }]]);

    // The stream byte for byte as the upstream wrote it, its ping included: with the upstream's key set, the text's
    // deltas are held back by the redactor's window, whole, and go out as they came at the block's stop.
    const raw = await fetch(`${gateway.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": KEY, "anthropic-version": "2023-06-01" }, body: JSON.stringify({ ...ask, stream: true }) });
    assert.equal(await raw.text(), upstreamEvents.join(""));

    // count_tokens too goes to the upstream that can count.
    const counted = await anthropic.messages.countTokens({ model: ask.model, system: ask.system, messages: ask.messages });
    assert.equal(counted.input_tokens, 17);
    assert.equal(upstream.requests[3]?.headers["x-api-key"], "sk-ant-upstream-0123456789");

    // The upstream's own errors reach the client as sent: a 429 with its retry-after.
    await assert.rejects(anthropic.messages.create(ask), (error: unknown) => error instanceof Anthropic.RateLimitError && error.type === "rate_limit_error" && error.headers?.get("retry-after") === "7");
    assert.ok(upstream.requests.every((r) => r.raw.toString("utf8").includes('"messages"')) && upstream.requests.length === 5);
  });
});

