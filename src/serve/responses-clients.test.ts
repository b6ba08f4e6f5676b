/**
 * Real clients on the gateway's Responses door (`POST /v1/responses`): the official `openai` npm client's
 * `responses.create` (plain, streamed, with a function tool, with `text.format` json_schema and `reflect` retrying a
 * failing first draft) and an `@openai/agents` Agent with a function tool, against a real gateway over a scripted
 * upstream that speaks Chat Completions only, so every request is translated.
 */
import assert from "node:assert/strict";
import { describe, it, type TestContext } from "node:test";
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool } from "@openai/agents";
import { APIError } from "openai";
import { z } from "zod";
import type { Episode } from "../loops/types.js";
import { createHttpModel, type RetryPolicy } from "../models/http.js";
import { client, completion, hang, reply, startTestGateway, startUpstream, status, UPSTREAM_MODEL, type Behaviour, type FakeUpstream } from "./serve-harness.js";
import type { DialectName } from "./dialects/index.js";
import type { RequestOutcome } from "./observer.js";
import type { GatewayLimits, RunningGateway } from "./server.js";

/** Unset: the upstream is sent no key. */
const KEY_ENV = "REFLECT_TEST_RESPONSES_UPSTREAM_KEY";
const noRetry: RetryPolicy = { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 };

interface SetupOptions {
  limits?: Partial<GatewayLimits>;
  /** What the upstream serves raw (default Chat Completions only: Responses requests are translated). */
  speaks?: DialectName[];
  timeoutMs?: number;
}

async function setup(t: TestContext, script: Behaviour | Behaviour[], options: SetupOptions = {}): Promise<{ upstream: FakeUpstream; gateway: RunningGateway; recorded: Episode[]; outcomes: RequestOutcome[] }> {
  const upstream = await startUpstream(t, script);
  const recorded: Episode[] = [];
  const outcomes: RequestOutcome[] = [];
  const gateway = await startTestGateway(t, {
    upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV, retry: noRetry, ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }) }),
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV, ...(options.speaks === undefined ? {} : { speaks: options.speaks }) },
    observer: { request: (o) => outcomes.push(o) },
    recorder: { dir: "(memory)", append: async (e) => void recorded.push(e), close: async () => {} },
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  });
  return { upstream, gateway, recorded, outcomes };
}

/** `behaviour`, answered after `ms`. */
function after(ms: number, behaviour: Behaviour): Behaviour {
  return (res, seen, index, upstream) => {
    const timer = setTimeout(() => behaviour(res, seen, index, upstream), ms);
    res.once("close", () => clearTimeout(timer));
  };
}

/** A POST of `body` (a string sent as is) to the Responses route, read whole. */
async function post(url: string, body: unknown): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(`${url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Replies with one tool call of `name` with `args`, as a Chat Completions upstream does. */
function toolCallReply(name: string, args: string): Behaviour {
  return (res, _seen, index, upstream) => {
    upstream.usage.prompt += 30;
    upstream.usage.completion += 7;
    const body = completion(null, { prompt_tokens: 30, completion_tokens: 7 });
    const choice = (body.choices as Array<Record<string, unknown>>)[0] as Record<string, unknown>;
    choice.message = { role: "assistant", content: null, tool_calls: [{ id: `call_up${index}`, type: "function", function: { name, arguments: args } }] };
    choice.finish_reason = "tool_calls";
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
}

const schema = { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"], additionalProperties: false };

describe("the Responses door with real clients", () => {
  it("answers responses.create with output items, output_text and usage", async (t) => {
    const { upstream, gateway } = await setup(t, reply("Forty-two."));
    const response = await client(gateway.url).responses.create({ model: UPSTREAM_MODEL, instructions: "Be brief.", input: "Six times seven?" });
    assert.equal(response.object, "response");
    assert.match(response.id, /^resp_/u);
    assert.equal(response.status, "completed");
    assert.equal(response.output_text, "Forty-two.");
    assert.equal(response.instructions, "Be brief.");
    assert.deepEqual([response.usage?.input_tokens, response.usage?.output_tokens], [upstream.usage.prompt, upstream.usage.completion]);
    // Translated for a Chat Completions upstream: instructions as the system message.
    assert.deepEqual((upstream.requests[0]?.body.messages as unknown[])[0], { role: "system", content: "Be brief." });
  });

  it("streams the Responses events, and responses.stream accumulates them into the final response", async (t) => {
    const { gateway } = await setup(t, reply("Forty-two."));
    const openai = client(gateway.url);
    const types: string[] = [];
    for await (const event of await openai.responses.create({ model: UPSTREAM_MODEL, input: "Six times seven?", stream: true })) types.push(event.type);
    assert.equal(types[0], "response.created");
    assert.equal(types.at(-1), "response.completed");
    assert.ok(types.includes("response.output_text.delta"));
    const final = await openai.responses.stream({ model: UPSTREAM_MODEL, input: "Six times seven?" }).finalResponse();
    assert.equal(final.output_text, "Forty-two.");
  });

  it("offers a function tool and returns the upstream's call as a function_call item", async (t) => {
    const { upstream, gateway } = await setup(t, toolCallReply("weather", '{"city":"Oslo"}'));
    const response = await client(gateway.url).responses.create({
      model: UPSTREAM_MODEL,
      input: "Weather in Oslo?",
      tools: [{ type: "function", name: "weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }, strict: true }],
    });
    const call = response.output.find((item) => item.type === "function_call");
    assert.deepEqual(call === undefined ? undefined : [call.name, call.arguments, call.call_id], ["weather", '{"city":"Oslo"}', "call_up0"]);
    // Flat Responses tools became nested Chat Completions tools upstream.
    assert.deepEqual((upstream.requests[0]?.body.tools as Array<{ function: { name: string } }>).map((x) => x.function.name), ["weather"]);
  });

  it("reflects on a text.format draft that fails its schema and returns the passing retry, with usage over every call", async (t) => {
    const drafts = ['{"answer": "forty-two"}', "The answer must be an integer, not a string.", '{"answer": 42}'];
    const { upstream, gateway, recorded, outcomes } = await setup(t, reply((_seen, i) => drafts[i] as string));
    const response = await client(gateway.url).responses.create({
      model: UPSTREAM_MODEL,
      input: "Six times seven?",
      text: { format: { type: "json_schema", name: "answer", schema, strict: true } },
      // The gateway's extension, sent as a body field.
      ...({ reflect: { max_turns: 2 } } as object),
    });
    assert.equal(response.output_text, '{"answer": 42}');
    assert.equal(upstream.requests.length, 3);
    assert.deepEqual([response.usage?.input_tokens, response.usage?.output_tokens], [upstream.usage.prompt, upstream.usage.completion]);
    const extension = (response as unknown as { reflect: { attempts: number; passed: boolean } }).reflect;
    assert.deepEqual([extension.attempts, extension.passed], [2, true]);
    // The record and the metrics name the door the request came in by.
    assert.equal(recorded.length, 1);
    assert.equal((recorded[0]?.record as { dialect?: string } | undefined)?.dialect, "responses");
    assert.equal(outcomes.at(-1)?.dialect, "responses");
  });

  it("refuses previous_response_id and hosted tools with a 400 naming the field", async (t) => {
    const { upstream, gateway } = await setup(t, reply("unused"));
    const openai = client(gateway.url);
    await assert.rejects(openai.responses.create({ model: UPSTREAM_MODEL, input: "x", previous_response_id: "resp_0" }), (e: unknown) => e instanceof APIError && e.status === 400 && e.param === "previous_response_id");
    await assert.rejects(openai.responses.create({ model: UPSTREAM_MODEL, input: "x", tools: [{ type: "web_search" }], tool_choice: { type: "web_search" } as never }), (e: unknown) => e instanceof APIError && e.status === 400 && e.param === "tool_choice");
    assert.equal(upstream.requests.length, 0);
  });

  it("runs an @openai/agents Agent with a function tool through the gateway", async (t) => {
    setTracingDisabled(true);
    const { upstream, gateway } = await setup(t, [toolCallReply("weather", '{"city":"Oslo"}'), reply("It is 4 C in Oslo.")]);
    const calls: string[] = [];
    const weather = tool({
      name: "weather",
      description: "The weather in a city",
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        calls.push(city);
        return "4 C";
      },
    });
    const agent = new Agent({ name: "forecaster", instructions: "Use the weather tool.", tools: [weather], model: new OpenAIResponsesModel(client(gateway.url), UPSTREAM_MODEL) });
    const result = await run(agent, "Weather in Oslo?");
    assert.equal(result.finalOutput, "It is 4 C in Oslo.");
    assert.deepEqual(calls, ["Oslo"]);
    assert.equal(upstream.requests.length, 2);
    // The tool's output reached the upstream in the second request.
    assert.match(JSON.stringify(upstream.requests[1]?.body.messages), /4 C/u);
  });

  it("runs an @openai/agents Agent streamed through the gateway", async (t) => {
    setTracingDisabled(true);
    const { upstream, gateway } = await setup(t, [toolCallReply("weather", '{"city":"Oslo"}'), reply("It is 4 C in Oslo.")]);
    const weather = tool({ name: "weather", description: "The weather in a city", parameters: z.object({ city: z.string() }), execute: async () => "4 C" });
    const agent = new Agent({ name: "forecaster", tools: [weather], model: new OpenAIResponsesModel(client(gateway.url), UPSTREAM_MODEL) });
    const result = await run(agent, "Weather in Oslo?", { stream: true });
    for await (const _ of result.toStream()) void _;
    await result.completed;
    assert.equal(result.finalOutput, "It is 4 C in Oslo.");
    assert.equal(upstream.requests.length, 2);
  });
});

describe("the Responses door when things go wrong", () => {
  it("keeps a slow reflected stream alive, then sends the Responses events the official client reads", async (t) => {
    const { gateway } = await setup(t, [after(300, reply("42"))], { limits: { streamKeepAliveMs: 60 } });
    const raw = await post(gateway.url, { model: UPSTREAM_MODEL, input: "Six times seven? Digits only.", stream: true, reflect: { regex: "^\\d+$" } });
    assert.equal(raw.status, 200);
    assert.match(raw.text, /^: keep-alive\n\n(?:: keep-alive\n\n)+event: response\.created\n/u);
    assert.match(raw.text, /event: response\.completed\n/u);

    const { gateway: again } = await setup(t, [after(300, reply("42"))], { limits: { streamKeepAliveMs: 60 } });
    const final = await client(again.url)
      .responses.stream({ model: UPSTREAM_MODEL, input: "Six times seven? Digits only.", ...({ reflect: { regex: "^\\d+$" } } as object) })
      .finalResponse();
    assert.equal(final.output_text, "42");
  });

  it("sends checks that failed after the keep-alive began as an error event the official client raises", async (t) => {
    const script = [after(200, reply("maybe")), reply("I must answer in digits."), reply("still words")];
    const { gateway, outcomes } = await setup(t, script, { limits: { streamKeepAliveMs: 50 } });
    const stream = await client(gateway.url).responses.create({ model: UPSTREAM_MODEL, input: "Six times seven? Digits only.", stream: true, ...({ reflect: { regex: "^\\d+$", on_failure: "error" } } as object) });
    await assert.rejects(
      async () => {
        for await (const _ of stream) void _;
      },
      (error: unknown) => error instanceof APIError && error.code === "checks_failed" && /failed its checks/u.test(error.message),
    );
    assert.equal(outcomes.at(-1)?.status, 422);
  });

  it("answers the failed checks of a settled request with a 422 carrying reflect", async (t) => {
    const { gateway } = await setup(t, [reply("maybe"), reply("I must answer in digits."), reply("still words")]);
    const raw = await post(gateway.url, { model: UPSTREAM_MODEL, input: "Six times seven?", reflect: { regex: "^\\d+$", on_failure: "error" } });
    assert.equal(raw.status, 422);
    assert.equal(raw.headers.get("x-reflect-passed"), "false");
    const body = JSON.parse(raw.text) as { error: { code: string; type: string }; reflect: { passed: boolean; attempts: number } };
    assert.deepEqual([body.error.code, body.error.type, body.reflect.passed, body.reflect.attempts], ["checks_failed", "invalid_request_error", false, 2]);
  });

  it("answers an upstream's 429, 500 and silence in OpenAI's error shape, which the official client raises", async (t) => {
    // A call the gateway makes itself (translated or reflected): a rate limit is the client's to wait out (429 with
    // Retry-After), another failure the gateway's (502), silence a timeout (504).
    const cases: Array<[Behaviour, number]> = [
      [status(429, { error: { message: "slow down", type: "rate_limit_error" } }, { "retry-after": "7" }), 429],
      [status(500, { error: { message: "boom", type: "server_error" } }), 502],
      [hang, 504],
    ];
    for (const [behaviour, expected] of cases) {
      const { upstream, gateway } = await setup(t, behaviour, expected === 504 ? { timeoutMs: 1000, limits: { requestTimeoutMs: 1000 } } : {});
      for (const reflect of [undefined, { regex: "^\\d+$" }]) {
        const label = `${expected}, ${reflect === undefined ? "translated" : "reflected"}`;
        await assert.rejects(
          client(gateway.url).responses.create({ model: UPSTREAM_MODEL, input: "x", ...(reflect === undefined ? {} : ({ reflect } as object)) }),
          (error: unknown) => {
            assert.ok(error instanceof APIError, label);
            assert.equal(error.status, expected, label);
            assert.equal(typeof (error.error as { message?: unknown }).message, "string", label);
            if (expected === 429) assert.match(error.headers?.get("retry-after") ?? "", /^\d+$/u, label);
            return true;
          },
        );
      }
      assert.ok(upstream.requests.length >= 1, "the upstream was called");
    }
  });

  it("relays a request raw to an upstream that speaks Responses, byte for byte", async (t) => {
    const answer = { id: "resp_upstream", object: "response", created_at: 1, status: "completed", model: UPSTREAM_MODEL, output: [], usage: null };
    const { upstream, gateway } = await setup(t, status(200, answer), { speaks: ["chat", "responses"] });
    const body = '{"model":"fake-upstream",  "input":"x", "store":true, "previous_response_id":"resp_0"}';
    const raw = await post(gateway.url, body);
    assert.equal(raw.status, 200);
    assert.deepEqual(JSON.parse(raw.text), answer);
    assert.equal(upstream.requests[0]?.raw.toString("utf8"), body);
  });

  it("cuts the client's stream where an upstream that speaks Responses cuts its own, and the official client raises", async (t) => {
    const created = { type: "response.created", sequence_number: 0, response: { id: "resp_up", object: "response", created_at: 1, status: "in_progress", model: UPSTREAM_MODEL, output: [] } };
    const cut: Behaviour = (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`event: response.created\ndata: ${JSON.stringify(created)}\n\n`);
      setTimeout(() => res.socket?.destroy(), 50);
    };
    const { gateway, outcomes } = await setup(t, cut, { speaks: ["chat", "responses"] });
    const types: string[] = [];
    await assert.rejects(async () => {
      for await (const event of await client(gateway.url).responses.create({ model: UPSTREAM_MODEL, input: "x", stream: true })) types.push(event.type);
    }, /terminated/u);
    assert.deepEqual(types, ["response.created"]);
    while (outcomes.length === 0) await new Promise((r) => setTimeout(r, 10));
    assert.equal(outcomes[0]?.dialect, "responses");
  });

  it("cancels a reflected episode and its upstream call when the client goes away", async (t) => {
    const { upstream, gateway, outcomes, recorded } = await setup(t, hang);
    const controller = new AbortController();
    const asked = fetch(`${gateway.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: UPSTREAM_MODEL, input: "x", reflect: { regex: "^\\d+$" } }), signal: controller.signal });
    await upstream.received(1);
    controller.abort();
    await asked.catch(() => {});
    await upstream.closed(0);
    assert.equal(upstream.requests[0]?.closedEarly, true);
    while (outcomes.length === 0) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual([outcomes[0]?.status, outcomes[0]?.dialect], [499, "responses"]);
    assert.equal(recorded.length, 0);
  });

  it("refuses hostile bodies before any upstream call, naming the field", async (t) => {
    const { upstream, gateway } = await setup(t, reply("unused"));
    const deep = { model: UPSTREAM_MODEL, input: "x", reflect: {}, metadata: JSON.parse(`${"[".repeat(200)}${"]".repeat(200)}`) as unknown };
    const cases: Array<[unknown, number, string]> = [
      ["{not json", 400, "body"],
      ["[1, 2]", 400, "body"],
      [{ model: UPSTREAM_MODEL, input: [{ role: "user", content: [{ type: "input_image", image_url: "data:image/png;base64,AAAA" }] }] }, 400, "input[0].content[0]"],
      [{ model: UPSTREAM_MODEL, input: [{ type: "item_reference", id: "msg_1" }] }, 400, "input[0]"],
      [{ model: UPSTREAM_MODEL, input: "x", conversation: "conv_1" }, 400, "conversation"],
      [{ model: UPSTREAM_MODEL, input: "x", background: true }, 400, "background"],
      [{ model: UPSTREAM_MODEL, input: "x", tools: [{ type: "function", name: "f", parameters: { type: "object" } }], tool_choice: { type: "function", name: "g" }, reflect: {} }, 400, "tool_choice"],
      [deep, 400, "body"],
    ];
    for (const [body, code, param] of cases) {
      const raw = await post(gateway.url, body);
      assert.equal(raw.status, code, raw.text);
      const error = (JSON.parse(raw.text) as { error: { param: string | null; type: string; message: string } }).error;
      assert.equal(error.param, param, raw.text);
      assert.equal(error.type, "invalid_request_error");
    }
    assert.equal(upstream.requests.length, 0);
  });
});
