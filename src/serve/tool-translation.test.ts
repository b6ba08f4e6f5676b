/**
 * A client's tool use through a translating door: each door (Chat Completions, Responses, Messages) in front of a real
 * local Chat Completions upstream that logs the bodies it gets, the gateway calling it through the HTTP model. A forced
 * tool choice reaches the upstream as its `tool_choice` (on every attempt of a reflected request); earlier tool calls
 * and results as `tool_calls` and `tool` messages with their ids; a tool's `strict` as `function.strict`; and no
 * `max_tokens` where the client set none. A relayed Messages request keeps its query string, which can move the
 * request to no other host or path. Bad tool fields are refused naming them, before the upstream is called.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { createHttpModel } from "../models/http.js";
import type { GatewayOptions } from "./gateway-options.js";
import { relayPath } from "./pass-through.js";
import { completion, rawRequest, reply, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour, type FakeUpstream } from "./serve-harness.js";
import { parseGatewayKeys } from "./tenants.js";

const KEY = "gateway-key-tools-0123456789";
const noRetry = { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 };
const parameters = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const question = "Weather in Oslo?";

/** A completion that calls `get_weather` with `args`. */
function toolCall(args: string): Behaviour {
  return (res, _seen, index) => {
    const body = completion(null);
    const choice = (body.choices as Array<Record<string, unknown>>)[0] as Record<string, unknown>;
    choice.message = { role: "assistant", content: null, tool_calls: [{ id: `call_up${index}`, type: "function", function: { name: "get_weather", arguments: args } }] };
    choice.finish_reason = "tool_calls";
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
}

/** A gateway with no relay: every door's request is translated and sent through the HTTP model. */
async function translating(t: TestContext, script: Behaviour | Behaviour[], extra: Partial<GatewayOptions> = {}): Promise<{ upstream: FakeUpstream; url: string }> {
  const upstream = await startUpstream(t, script);
  const gateway = await startTestGateway(t, { upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: noRetry }), apiKey: KEY, ...extra });
  return { upstream, url: gateway.url };
}

async function post(url: string, route: string, body: unknown, key = KEY): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  const response = await fetch(`${url}${route}`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, json: JSON.parse(text) as Record<string, unknown>, text };
}

type Door = { route: string; forced: Record<string, unknown>; required: Record<string, unknown>; history: Record<string, unknown> };

/** The same request in each door's words: two tools (one strict), forced to one, forced to any, and a tool history. */
const doors: Record<string, Door> = {
  chat: {
    route: "/v1/chat/completions",
    forced: {
      model: UPSTREAM_MODEL,
      messages: [{ role: "user", content: question }],
      tools: [{ type: "function", function: { name: "get_weather", parameters, strict: true } }, { type: "function", function: { name: "get_time" } }],
      tool_choice: { type: "function", function: { name: "get_weather" } },
    },
    required: { tool_choice: "required" },
    history: {
      messages: [
        { role: "user", content: question },
        { role: "assistant", content: "Looking.", tool_calls: [{ id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
        { role: "tool", tool_call_id: "call_a", content: "4 C" },
      ],
    },
  },
  responses: {
    route: "/v1/responses",
    forced: {
      model: UPSTREAM_MODEL,
      input: question,
      tools: [{ type: "function", name: "get_weather", parameters, strict: true }, { type: "function", name: "get_time" }],
      tool_choice: { type: "function", name: "get_weather" },
    },
    required: { tool_choice: "required" },
    history: {
      input: [
        { role: "user", content: question },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Looking." }] },
        { type: "function_call", call_id: "call_a", name: "get_weather", arguments: '{"city":"Oslo"}' },
        { type: "function_call_output", call_id: "call_a", output: "4 C" },
      ],
    },
  },
  messages: {
    route: "/v1/messages",
    forced: {
      model: UPSTREAM_MODEL,
      max_tokens: 64,
      messages: [{ role: "user", content: question }],
      tools: [{ name: "get_weather", input_schema: parameters, strict: true }, { name: "get_time", input_schema: { type: "object" } }],
      tool_choice: { type: "tool", name: "get_weather" },
    },
    required: { tool_choice: { type: "any" } },
    history: {
      messages: [
        { role: "user", content: question },
        { role: "assistant", content: [{ type: "text", text: "Looking." }, { type: "tool_use", id: "call_a", name: "get_weather", input: { city: "Oslo" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_a", content: "4 C" }] },
      ],
    },
  },
};

const historyAsChat = [
  { role: "user", content: question },
  { role: "assistant", content: "Looking.", tool_calls: [{ id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
  { role: "tool", tool_call_id: "call_a", content: "4 C" },
];

describe("tool use through a translating door", () => {
  for (const [name, door] of Object.entries(doors)) {
    it(`${name}: a forced tool reaches the upstream as its tool_choice, the tool strict, and the call comes back`, async (t) => {
      const { upstream, url } = await translating(t, toolCall('{"city":"Oslo"}'));
      const answer = await post(url, door.route, door.forced);
      assert.equal(answer.status, 200, answer.text);
      const sent = upstream.requests[0]?.body as Record<string, unknown>;
      assert.deepEqual(sent.tool_choice, { type: "function", function: { name: "get_weather" } });
      assert.deepEqual(sent.tools, [{ type: "function", function: { name: "get_weather", parameters, strict: true } }]);
      assert.match(answer.text, /get_weather/u, "the client gets the forced call back");
    });

    it(`${name}: a choice of any tool reaches the upstream as tool_choice "required", every tool offered`, async (t) => {
      const { upstream, url } = await translating(t, toolCall('{"city":"Oslo"}'));
      assert.equal((await post(url, door.route, { ...door.forced, ...door.required })).status, 200);
      const sent = upstream.requests[0]?.body as Record<string, unknown>;
      assert.equal(sent.tool_choice, "required");
      assert.deepEqual((sent.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name), ["get_weather", "get_time"]);
    });

    it(`${name}: earlier tool calls and results reach the upstream as tool_calls and tool messages with their ids`, async (t) => {
      const { upstream, url } = await translating(t, reply("It is 4 C."));
      const { tool_choice: _forced, ...auto } = door.forced;
      const answer = await post(url, door.route, { ...auto, ...door.history });
      assert.equal(answer.status, 200, answer.text);
      const sent = upstream.requests[0]?.body as Record<string, unknown>;
      assert.deepEqual(sent.messages, historyAsChat);
      assert.equal(sent.tool_choice, undefined, "no forced choice where the client asked none");
    });
  }

  it("no max_tokens from the client: the upstream gets none (Chat and Responses); Messages sends its own", async (t) => {
    const { upstream, url } = await translating(t, reply("ok"));
    assert.equal((await post(url, "/v1/chat/completions", { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "hi" }] })).status, 200);
    assert.equal((await post(url, "/v1/responses", { model: UPSTREAM_MODEL, input: "hi" })).status, 200);
    assert.equal((await post(url, "/v1/messages", { model: UPSTREAM_MODEL, max_tokens: 77, messages: [{ role: "user", content: "hi" }] })).status, 200);
    assert.deepEqual(upstream.requests.map((r) => r.body.max_tokens), [undefined, undefined, 77]);
    assert.ok(!upstream.requests[0]?.raw.toString("utf8").includes("max_tokens"));
  });

  it("no max_tokens on a reflected request: its attempts send none either; an operator's default is sent", async (t) => {
    const { upstream, url } = await translating(t, reply("42"));
    assert.equal((await post(url, "/v1/chat/completions", { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "6 * 7?" }], reflect: { regex: "^\\d+$" } })).status, 200);
    assert.equal(upstream.requests[0]?.body.max_tokens, undefined);
    const capped = await translating(t, reply("42"), { limits: { defaultMaxTokens: 100 } });
    assert.equal((await post(capped.url, "/v1/chat/completions", { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "hi" }] })).status, 200);
    assert.equal(capped.upstream.requests[0]?.body.max_tokens, 100);
  });

  it("a reflected request with a forced tool asks for it on every attempt, and never on the reflection", async (t) => {
    const { upstream, url } = await translating(t, [reply("I would look it up."), reply("I must call the tool."), toolCall('{"city":"Oslo"}')]);
    const answer = await post(url, "/v1/chat/completions", { ...doors.chat?.forced, reflect: { max_turns: 2 } });
    assert.equal(answer.status, 200, answer.text);
    const withTools = upstream.requests.filter((r) => r.body.tools !== undefined);
    const without = upstream.requests.filter((r) => r.body.tools === undefined);
    assert.equal(withTools.length, 2, "two attempts");
    for (const attempt of withTools) assert.deepEqual(attempt.body.tool_choice, { type: "function", function: { name: "get_weather" } });
    assert.ok(without.length >= 1 && without.every((r) => r.body.tool_choice === undefined), "the reflection is asked no tool");
    assert.match(answer.text, /get_weather/u);
  });
});

describe("tool fields a client gets wrong, and what must not leak", () => {
  it("refuses a tool message without its call id, and a strict that is not a boolean, naming the field, calling no upstream", async (t) => {
    const { upstream, url } = await translating(t, reply("ok"));
    const chat = doors.chat as Door;
    const noId = await post(url, chat.route, { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "hi" }, { role: "tool", content: "4 C" }] });
    assert.equal(noId.status, 400);
    assert.equal((noId.json.error as { param: string }).param, "messages[1].tool_call_id");
    const badStrict = await post(url, chat.route, { model: UPSTREAM_MODEL, messages: [{ role: "user", content: "hi" }], tools: [{ type: "function", function: { name: "f", strict: "yes" } }] });
    assert.equal((badStrict.json.error as { param: string }).param, "tools[0].function.strict");
    const messagesStrict = await post(url, "/v1/messages", { ...(doors.messages as Door).forced, tools: [{ name: "get_weather", input_schema: parameters, strict: 1 }] });
    assert.equal(messagesStrict.status, 400);
    assert.equal((messagesStrict.json.error as { param: string }).param, "tools[0].strict");
    const responsesStrict = await post(url, "/v1/responses", { ...(doors.responses as Door).forced, tools: [{ type: "function", name: "get_weather", strict: "no" }] });
    assert.equal((responsesStrict.json.error as { param: string }).param, "tools[0].strict");
    assert.equal(upstream.requests.length, 0);
  });

  it("never shows the upstream's key, even in the arguments of a forced call the upstream echoes it into", async (t) => {
    const secret = "sk-upstream-tools-4f1c9e2ab7";
    const variable = "REFLECT_TEST_TOOLS_KEY";
    process.env[variable] = secret;
    t.after(() => delete process.env[variable]);
    const upstream = await startUpstream(t, toolCall(JSON.stringify({ city: secret })));
    const gateway = await startTestGateway(t, {
      upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: variable, retry: noRetry }),
      // The upstream relays only Responses: Chat and Messages requests are translated, with the key known to redact.
      upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: variable, speaks: ["responses"] },
      apiKey: KEY,
    });
    for (const door of [doors.chat, doors.messages] as Door[]) {
      const answer = await post(gateway.url, door.route, door.forced);
      assert.equal(answer.status, 200, answer.text);
      assert.ok(!answer.text.includes(secret), `${door.route} answered with the key`);
      assert.match(answer.text, /get_weather/u);
    }
    assert.equal(upstream.requests[0]?.headers.authorization, `Bearer ${secret}`, "the upstream did get its key");
  });

  it("keeps two tenants' tool histories apart: each upstream call carries its own tenant's calls only", async (t) => {
    const keyA = "tenant-a-key-0123456789";
    const keyB = "tenant-b-key-0123456789";
    const { upstream, url } = await translating(t, reply("ok"), { apiKey: undefined, tenants: parseGatewayKeys(`team-a:${keyA},team-b:${keyB}`) });
    const history = (id: string, city: string) => ({
      model: UPSTREAM_MODEL,
      messages: [
        { role: "user", content: `Weather in ${city}?` },
        { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ city }) } }] },
        { role: "tool", tool_call_id: id, content: `${city}: 4 C` },
      ],
      tools: [{ type: "function", function: { name: "get_weather", parameters } }],
    });
    const answers = await Promise.all([post(url, "/v1/chat/completions", history("call_team_a", "Oslo"), keyA), post(url, "/v1/chat/completions", history("call_team_b", "Rome"), keyB)]);
    assert.deepEqual(answers.map((a) => a.status), [200, 200]);
    const ids = upstream.requests.map((r) => (r.body.messages as Array<{ tool_call_id?: string; tool_calls?: Array<{ id: string }> }>).flatMap((m) => [m.tool_call_id, ...(m.tool_calls ?? []).map((c) => c.id)]).filter((id) => id !== undefined));
    assert.deepEqual(ids.map((pair) => pair.join(",")).sort(), ["call_team_a,call_team_a", "call_team_b,call_team_b"]);
  });
});

describe("a relayed request's query string", () => {
  async function relaying(t: TestContext): Promise<{ upstream: FakeUpstream; url: string }> {
    const upstream = await startUpstream(t, reply("ok"));
    const gateway = await startTestGateway(t, {
      upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, retry: noRetry }),
      upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_UNSET_KEY", speaks: ["messages"] },
      apiKey: KEY,
    });
    return { upstream, url: gateway.url };
  }
  const body = JSON.stringify({ model: UPSTREAM_MODEL, max_tokens: 16, messages: [{ role: "user", content: "hi" }] });

  it("reaches the upstream on the Messages path, as Claude Code sends it (?beta=true)", async (t) => {
    const { upstream, url } = await relaying(t);
    const response = await fetch(`${url}/v1/messages?beta=true`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": KEY }, body });
    assert.equal(response.status, 200);
    assert.equal(upstream.requests[0]?.url, "/v1/messages?beta=true");
  });

  it("cannot change the upstream's host or path: @, encoded slashes and dot segments stay in the query", async (t) => {
    const { upstream, url } = await relaying(t);
    const hostile = "/v1/messages?x=@evil.example/&p=%2F..%2F..%2Fadmin&q=/../../admin";
    const answer = await rawRequest(`${url}${hostile}`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": KEY, host: new URL(url).host }, body });
    assert.equal(answer.status, 200, answer.body);
    // The request reached this upstream (its host is the only one it could reach), on the Messages path.
    assert.equal(upstream.requests.length, 1);
    assert.equal(upstream.requests[0]?.url, hostile);
    assert.ok(upstream.requests[0]?.url.startsWith("/v1/messages?"));
  });

  it("takes only the query of the client's URL, after the base URL's own", () => {
    const base = new URL("http://127.0.0.1:9/v1");
    assert.equal(relayPath(base, { upstreamPath: "/messages" }, "//evil.example/admin?beta=true"), "/v1/messages?beta=true");
    assert.equal(relayPath(base, { upstreamPath: "/messages" }, "/v1/messages"), "/v1/messages");
    assert.equal(relayPath(new URL("http://127.0.0.1:9/v1?api-version=1"), { upstreamPath: "/messages" }, "/v1/messages?beta=true#x"), "/v1/messages?api-version=1&beta=true");
    assert.equal(relayPath(base, { upstreamPath: "/messages" }, "/v1/messages?a=b c\r\nHost: evil"), "/v1/messages?a=b%20cHost:%20evil");
  });
});
