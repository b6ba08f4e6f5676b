import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RequestFieldError, UsageError } from "../errors.js";
import { createHttpModel } from "../models/http.js";
import { parseChatRequest } from "./dialects/chat.js";
import type { RequestBounds } from "./loop-request.js";
import { client, reply, startTestGateway, startUpstream, UPSTREAM_MODEL } from "./serve-harness.js";
import { startGateway } from "./server.js";

const bounds: RequestBounds = { maxTurns: 4, budget: { tokens: 1000, calls: 6, seconds: 30 }, defaultMaxTokens: 64 };
const user = { role: "user", content: "hi" };

function fieldOf(body: unknown): string {
  try {
    parseChatRequest(body, bounds);
  } catch (error) {
    assert.ok(error instanceof RequestFieldError, String(error));
    return error.field;
  }
  assert.fail("expected a RequestFieldError");
}

describe("parseChatRequest", () => {
  it("maps OpenAI's fields onto the loop's options and checks", () => {
    const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["a"] };
    const parsed = parseChatRequest(
      {
        model: "m",
        messages: [
          { role: "developer", content: "Be brief." },
          { role: "user", content: [{ type: "text", text: "Call " }, { type: "text", text: "it." }] },
          { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "get", arguments: '{"a":1}' } }] },
          { role: "tool", tool_call_id: "c1", content: "3" },
        ],
        max_completion_tokens: 40,
        temperature: 0.5,
        top_p: 0.9,
        seed: 7,
        stop: "END",
        response_format: { type: "json_schema", json_schema: { name: "out", schema, strict: true } },
        tools: [{ type: "function", function: { name: "get", parameters: { type: "object" } } }, { type: "function", function: { name: "put" } }],
        tool_choice: { type: "function", function: { name: "get" } },
        stream: true,
        stream_options: { include_usage: true },
        frequency_penalty: 0,
        user: "u-1",
        reflect: { max_turns: 3, feedback: "binary", stop: "verified,unchanged", budget: { calls: 4 }, regex: { pattern: "a", flags: "i" }, tests: "assert f() == 1", task: "gsm8k", item: { answer: 3 }, reflection_max_tokens: 32, on_failure: "error" },
      },
      bounds,
    );
    assert.deepEqual(parsed.messages, [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Call it." },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "get", arguments: '{"a":1}' }] },
      { role: "tool", toolCallId: "c1", content: "3" },
    ]);
    const tools = [{ name: "get", parameters: { type: "object" } }];
    // The user rides on the attempt's sampling; each model's upstream sends it only where its `send` names it.
    assert.deepEqual(parsed.sampling, { maxTokens: 40, temperature: 0.5, topP: 0.9, stop: ["END"], responseFormat: { type: "json", schema }, tools, toolChoice: { type: "tool", name: "get" }, user: "u-1" });
    assert.deepEqual(parsed.checks, { schema: { name: "out", schema }, tools, toolsRequired: true, task: { name: "gsm8k", item: { answer: 3 } }, tests: ["assert f() == 1"], regex: { pattern: "a", flags: "i" } });
    assert.equal(parsed.toolChoiceRequired, true);
    assert.equal(parsed.seed, 7);
    assert.deepEqual([parsed.stream, parsed.includeUsage], [true, true]);
    assert.deepEqual({ ...parsed.reflect, stopWhen: parsed.reflect?.stopWhen?.map((s) => s.label) }, { maxTurns: 3, feedback: "binary", stopWhen: ["verified", "unchanged"], stopSpec: "verified,unchanged", budget: { tokens: 1000, calls: 4, ms: 30_000 }, reflectionMaxTokens: 32, onFailure: "error" });
  });

  it("defaults: two turns, detailed feedback, the gateway's budget caps, its default max_tokens, JSON mode with no schema check", () => {
    const parsed = parseChatRequest({ messages: [user], response_format: { type: "json_object" }, reflect: {} }, bounds);
    assert.deepEqual(parsed.reflect, { maxTurns: 2, feedback: "detailed", budget: { tokens: 1000, calls: 6, ms: 30_000 }, onFailure: "return" });
    assert.deepEqual(parsed.sampling, { maxTokens: 64, responseFormat: { type: "json", schema: { type: "object" } } });
    assert.deepEqual(parsed.checks, {});
    assert.equal(parseChatRequest({ messages: [user] }, bounds).reflect, undefined);
  });

  it("names the offending field", () => {
    const cases: Array<[unknown, string]> = [
      [[], "body"],
      [{}, "messages"],
      [{ messages: [{ role: "user", content: [{ type: "text", text: "see" }, { type: "image_url", image_url: { url: "http://x/y.png" } }] }] }, "messages[0].content[1]"],
      [{ messages: [user, { role: "robot", content: "x" }] }, "messages[1].role"],
      [{ messages: [user], temperature: 3 }, "temperature"],
      [{ messages: [user], max_tokens: 0 }, "max_tokens"],
      [{ messages: [user], n: 2 }, "n"],
      [{ messages: [user], logprobs: true }, "logprobs"],
      [{ messages: [user], functions: [] }, "functions"],
      [{ messages: [user], stop: ["a", "b", "c", "d", "e"] }, "stop"],
      [{ messages: [user], response_format: { type: "json_schema", json_schema: { name: "x" } } }, "response_format.json_schema.schema"],
      [{ messages: [user], tools: [{ type: "function", function: { name: "bad name" } }] }, "tools[0].function.name"],
      [{ messages: [user], tools: [{ type: "function", function: { name: "a" } }], tool_choice: { type: "function", function: { name: "b" } } }, "tool_choice"],
      [{ messages: [user], reflect: { colour: "red" } }, "reflect.colour"],
      [{ messages: [user], reflect: { max_turns: 9 } }, "reflect.max_turns"],
      [{ messages: [user], reflect: { feedback: "loud" } }, "reflect.feedback"],
      [{ messages: [user], reflect: { stop: "sometimes" } }, "reflect.stop"],
      [{ messages: [user], reflect: { budget: { calls: 7 } } }, "reflect.budget.calls"],
      [{ messages: [user], reflect: { budget: { dollars: 1 } } }, "reflect.budget.dollars"],
      [{ messages: [user], reflect: { task: "gsm8k" } }, "reflect.item"],
      [{ messages: [user], reflect: { regex: 5 } }, "reflect.regex"],
      [{ messages: [user], reflect: "yes" }, "reflect"],
    ];
    for (const [body, field] of cases) assert.equal(fieldOf(body), field, JSON.stringify(body));
  });
});

describe("bad requests over HTTP", () => {
  it("answers 400 in OpenAI's shape naming the field, 413 for an oversize body, 404 elsewhere; lists the models", async (t) => {
    const upstream = await startUpstream(t, reply("unused"));
    const gateway = await startTestGateway(t, {
      upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL }),
      upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_NO_KEY" },
      judges: new Map([["judge-spec", createHttpModel({ baseUrl: upstream.baseUrl, model: "judge" })]]),
      limits: { bodyBytes: 2048 },
    });
    const post = (body: string) => fetch(`${gateway.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const cases: Array<[string, string]> = [
      ["{not json", "body"],
      [JSON.stringify({ model: "m", messages: [{ role: "user", content: [{ type: "input_audio", input_audio: {} }] }], reflect: {} }), "messages[0].content[0]"],
      [JSON.stringify({ model: "m", messages: [user], reflect: { max_turns: 0 } }), "reflect.max_turns"],
      [JSON.stringify({ model: "m", messages: [user], reflect: { judge: "/etc/passwd" } }), "reflect.judge"],
      [JSON.stringify({ model: "m", messages: [user], n: 3, reflect: {} }), "n"],
      [JSON.stringify({ model: "m", messages: [user], reflect: { wat: 1 } }), "reflect.wat"],
    ];
    for (const [body, param] of cases) {
      const response = await post(body);
      assert.equal(response.status, 400, body);
      const error = ((await response.json()) as { error: { type: string; param: string; message: string } }).error;
      assert.equal(error.type, "invalid_request_error");
      assert.equal(error.param, param, body);
      assert.ok(error.message.startsWith(param), error.message);
    }
    // None of them reached the upstream.
    assert.equal(upstream.requests.length, 0);

    const big = await post(JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(4096) }] }));
    assert.equal(big.status, 413);
    assert.equal(((await big.json()) as { error: { code: string } }).error.code, "request_too_large");
    // A body sent in chunks with no length announced is cut at the limit too.
    const chunked = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new ReadableStream({ start: (c) => { for (let i = 0; i < 8; i++) c.enqueue(new TextEncoder().encode("x".repeat(512))); c.close(); } }),
      duplex: "half",
    } as RequestInit);
    assert.equal(chunked.status, 413);
    assert.equal(upstream.requests.length, 0);

    assert.equal((await fetch(`${gateway.url}/v1/completions`, { method: "POST", headers: { "content-type": "application/json" } })).status, 404);
    const models = await client(gateway.url).models.list();
    assert.deepEqual(models.data.map((m) => [m.id, m.owned_by]), [[UPSTREAM_MODEL, "reflectkit-upstream"], ["judge-spec", "reflectkit-judge"]]);
    assert.equal((await fetch(`${gateway.url}/metrics`)).status, 404, "no metrics unless the gateway is given them");
  });

  it("serves /metrics from the metrics it is given, and /healthz", async (t) => {
    const upstream = await startUpstream(t, reply("unused"));
    const gateway = await startTestGateway(t, {
      upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL }),
      metricsText: async () => ({ contentType: "text/plain; version=0.0.4", body: "reflect_requests_total 3\n" }),
    });
    const metrics = await fetch(`${gateway.url}/metrics`);
    assert.equal(metrics.headers.get("content-type"), "text/plain; version=0.0.4");
    assert.equal(await metrics.text(), "reflect_requests_total 3\n");
    assert.deepEqual(await (await fetch(`${gateway.url}/healthz`)).json(), { status: "ok" });
  });

  it("refuses a port in use with a UsageError that says what to do", async (t) => {
    const upstream = await startUpstream(t, reply("unused"));
    const options = { upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL }), buildChecks: () => [] };
    const first = await startTestGateway(t, options);
    await assert.rejects(startGateway({ ...options, port: Number(new URL(first.url).port) }), (error: unknown) => error instanceof UsageError && /is in use — pass another --port/u.test(error.message));
  });
});
