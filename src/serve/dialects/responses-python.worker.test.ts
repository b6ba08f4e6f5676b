/**
 * The official OpenAI Python client on the Responses dialect: first alone — a real local HTTP server parses each
 * request with `responsesDialect.parse` and answers with the dialect's own bytes (`answer`, `events`, `error`,
 * `errorEvent`), so both directions meet the client as it is — then through a real gateway over a scripted upstream
 * that speaks Chat Completions only.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it, type TestContext } from "node:test";
import { createHttpModel } from "../../models/http.js";
import { reply, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour } from "../serve-harness.js";
import { RequestFieldError } from "../../errors.js";
import type { ChatRequest, RequestBounds } from "../loop-request.js";
import type { CompletionReply, ReflectExtension } from "../response.js";
import { ensureOpenaiPythonClient, runPythonResponsesClient, type PythonClientHttpError, type PythonResponsesCreateResult, type PythonResponsesStreamResult, type PythonStreamError } from "../python-client.js";
import { responsesDialect } from "./responses.js";

const bounds: RequestBounds = { maxTurns: 4, budget: { tokens: 1000, calls: 6, seconds: 30 }, defaultMaxTokens: 64 };
const usage = { promptTokens: 40, completionTokens: 9, evaluatedPromptTokens: 40 };
const reflect: ReflectExtension = {
  attempts: 2,
  decision: "verified",
  rolled_back: false,
  stopped_by: "verified",
  selected: 2,
  passed: true,
  checks: [
    { turn: 1, source: "schema", pass: false, score: 0, feedback: "missing answer" },
    { turn: 2, source: "schema", pass: true, score: 1, feedback: "valid" },
  ],
  usage_by_role: {} as ReflectExtension["usage_by_role"],
};
const parsed: ChatRequest[] = [];
let nextReply: CompletionReply = { text: "", finishReason: "stop" };
let failWithChecks = false;

function answer(response: ServerResponse, raw: string): void {
  let chat: ChatRequest;
  try {
    chat = responsesDialect.parse(JSON.parse(raw), bounds);
  } catch (error) {
    assert.ok(error instanceof RequestFieldError);
    const body = responsesDialect.error({ status: 400, message: error.message, type: "invalid_request_error", param: error.field, code: null });
    response.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify(body));
    return;
  }
  parsed.push(chat);
  const meta = { id: `resp_${parsed.length}`, created: 1_790_000_000, model: "fake", ...(chat.echo === undefined ? {} : { echo: chat.echo }) };
  const extension = chat.reflect === undefined ? undefined : reflect;
  if (chat.stream) {
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    response.write(responsesDialect.keepAlive);
    if (failWithChecks) {
      response.end(responsesDialect.errorEvent({ status: 422, message: "the answer failed its checks after 2 attempts", type: "invalid_request_error", param: null, code: "checks_failed", reflect: { ...reflect, passed: false } }));
      return;
    }
    response.end(responsesDialect.events(meta, nextReply, usage, chat, extension));
    return;
  }
  response.writeHead(200, { "content-type": "application/json", "x-reflect-passed": "true" }).end(JSON.stringify(responsesDialect.answer(meta, nextReply, usage, extension)));
}

const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  let raw = "";
  request.setEncoding("utf8").on("data", (part: string) => (raw += part));
  request.on("end", () => answer(response, raw));
});

describe("the official openai Python client on the Responses dialect", () => {
  let python = "";
  let baseUrl = "";
  before(async () => {
    python = (await ensureOpenaiPythonClient()).python;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(() => server.close());

  it("sends a request the dialect parses, and reads the answer and its stream with usage and reflect", async () => {
    nextReply = { text: '{"answer": 42}', finishReason: "stop" };
    const schema = { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"], additionalProperties: false };
    const result = await runPythonResponsesClient(python, {
      baseUrl,
      apiKey: "k",
      request: { model: "fake", instructions: "Answer in JSON.", input: [{ role: "user", content: "six times seven?" }], text: { format: { type: "json_schema", name: "answer", schema, strict: true } }, max_output_tokens: 50, store: false },
      reflect: { max_turns: 2 },
    });
    assert.deepEqual(parsed.at(-1)?.checks.schema, { name: "answer", schema });
    assert.deepEqual(parsed.at(-1)?.messages[0], { role: "system", content: "Answer in JSON." });
    const created = result.create as PythonResponsesCreateResult;
    assert.equal(created.output_text, '{"answer": 42}');
    assert.deepEqual(created.reflect, reflect);
    assert.equal(created.headers["x-reflect-passed"], "true");
    assert.deepEqual((created.response.usage as Record<string, unknown>).total_tokens, 49);
    const streamed = result.stream as PythonResponsesStreamResult;
    assert.equal(streamed.events[0], "response.created");
    assert.equal(streamed.events.at(-1), "response.completed");
    assert.equal(streamed.text, '{"answer": 42}');
    assert.equal(streamed.output_text, '{"answer": 42}');
    assert.deepEqual(streamed.reflect, reflect);
  });

  it("sends function tools and tool outputs the dialect parses, and reads function_call items back", async () => {
    nextReply = { text: "", toolCalls: [{ id: "call_7", name: "weather", arguments: '{"city":"Oslo"}' }], finishReason: "stop" };
    const result = await runPythonResponsesClient(python, {
      baseUrl,
      apiKey: "k",
      request: {
        model: "fake",
        input: [
          { role: "user", content: "Weather?" },
          { type: "function_call", call_id: "call_1", name: "weather", arguments: '{"city":"Rome"}' },
          { type: "function_call_output", call_id: "call_1", output: "21 C" },
        ],
        tools: [{ type: "function", name: "weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }],
        tool_choice: "required",
      },
      mode: "create",
    });
    assert.deepEqual(parsed.at(-1)?.checks.tools, [{ name: "weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }]);
    // The tool turn is structured: a call on the assistant turn, its output a tool message.
    assert.deepEqual(parsed.at(-1)?.messages[1], { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "weather", arguments: '{"city":"Rome"}' }] });
    assert.deepEqual(parsed.at(-1)?.messages[2], { role: "tool", toolCallId: "call_1", content: "21 C" });
    const output = (result.create as PythonResponsesCreateResult).response.output as Array<Record<string, unknown>>;
    assert.deepEqual(output, [{ type: "function_call", id: `fc_${parsed.length}_0`, call_id: "call_7", name: "weather", arguments: '{"city":"Oslo"}', status: "completed" }]);
  });

  it("raises a 400 naming the field, and an error event mid-stream as openai.APIError", async () => {
    const refused = await runPythonResponsesClient(python, { baseUrl, apiKey: "k", request: { model: "fake", input: "x", previous_response_id: "resp_0" }, mode: "create" });
    const http = refused.create as PythonClientHttpError;
    assert.equal(http.error.status, 400);
    assert.equal((http.error.body as { param: string }).param, "previous_response_id");
    failWithChecks = true;
    const failed = await runPythonResponsesClient(python, { baseUrl, apiKey: "k", request: { model: "fake", input: "x" }, reflect: { on_failure: "error" }, mode: "stream" });
    failWithChecks = false;
    const raised = failed.stream as PythonStreamError;
    assert.equal(raised.error.type, "APIError");
    assert.deepEqual(raised.error.events, []);
    assert.equal((raised.error.body as { code: string }).code, "checks_failed");
  });
});

describe("the official openai Python client through the gateway's Responses door", () => {
  let python = "";
  before(async () => {
    python = (await ensureOpenaiPythonClient()).python;
  });

  async function gatewayOver(t: TestContext, script: Behaviour[]) {
    const upstream = await startUpstream(t, script);
    const gateway = await startTestGateway(t, {
      upstream: createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_UNSET_KEY", retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 } }),
      upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: "REFLECT_TEST_UNSET_KEY" },
    });
    return { upstream, baseUrl: `${gateway.url}/v1` };
  }

  it("gets a reflected text.format answer, plain and streamed, with usage over every call and reflect", async (t) => {
    // Per request: a draft that fails the schema, a reflection, a draft that passes.
    const drafts = ['{"answer": "forty-two"}', "The answer must be an integer.", '{"answer": 42}'];
    const { upstream, baseUrl } = await gatewayOver(t, [reply((_seen, i) => drafts[i % 3] as string)]);
    const schema = { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"], additionalProperties: false };
    const result = await runPythonResponsesClient(python, {
      baseUrl,
      apiKey: "unused",
      request: { model: UPSTREAM_MODEL, input: "Six times seven?", text: { format: { type: "json_schema", name: "answer", schema, strict: true } } },
      reflect: { max_turns: 2 },
    });
    assert.equal(upstream.requests.length, 6);
    const created = result.create as PythonResponsesCreateResult;
    assert.equal(created.output_text, '{"answer": 42}');
    assert.equal(created.headers["x-reflect-passed"], "true");
    assert.deepEqual([(created.reflect as { attempts: number }).attempts, (created.reflect as { passed: boolean }).passed], [2, true]);
    const usage = created.response.usage as { input_tokens: number; output_tokens: number };
    // The upstream's scripted usage of the first request's three calls: prompt 20+i, completion 3+i.
    assert.deepEqual([usage.input_tokens, usage.output_tokens], [20 + 21 + 22, 3 + 4 + 5]);
    const streamed = result.stream as PythonResponsesStreamResult;
    assert.equal(streamed.events.at(-1), "response.completed");
    assert.equal(streamed.output_text, '{"answer": 42}');
    assert.equal((streamed.reflect as { passed: boolean }).passed, true);
  });

  it("gets a 400 naming the field for a stored conversation it cannot continue", async (t) => {
    const { upstream, baseUrl } = await gatewayOver(t, [reply("unused")]);
    const result = await runPythonResponsesClient(python, { baseUrl, apiKey: "unused", request: { model: UPSTREAM_MODEL, input: "x", previous_response_id: "resp_0" }, mode: "create" });
    const refused = result.create as PythonClientHttpError;
    assert.equal(refused.error.status, 400);
    assert.equal((refused.error.body as { param: string }).param, "previous_response_id");
    assert.equal(upstream.requests.length, 0);
  });
});
