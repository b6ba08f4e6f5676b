/**
 * LangChain JS through every door of a real gateway: `ChatOpenAI` on Chat Completions, `ChatOpenAI` with
 * `useResponsesApi: true` on Responses and `ChatAnthropic` on Messages, each pointed at the gateway with a client key
 * and no retries, in front of one scripted upstream that answers each dialect on its own path. Three setups: relay (the
 * upstream speaks the door's dialect, so a request without `reflect` reaches it raw), translation (it speaks Chat
 * Completions only and no door is relayed) and, for the OpenAI doors, an upstream that speaks Messages only (opened as
 * `api: "messages"`). Each runs `invoke`, `stream`, `bindTools` with a second turn carrying the `ToolMessage`, and
 * `withStructuredOutput` by function calling (Anthropic's tool method) and by JSON schema; each asserts what the
 * upstream received and that the upstream's key, which the upstream writes into every free-text reply, never reaches
 * LangChain's result. A `reflect` object passed through `modelKwargs` (`invocationKwargs` on ChatAnthropic) gets a
 * reflected answer.
 *
 * Versions, as package-lock.json resolves them: @langchain/core 1.4.0, @langchain/openai 1.5.8 (its own openai),
 * @langchain/anthropic 1.5.11 (its own @anthropic-ai/sdk); zod 4.6.7.
 */
import assert from "node:assert/strict";
import type http from "node:http";
import { describe, it, type TestContext } from "node:test";
import { ChatAnthropic } from "@langchain/anthropic";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { concat } from "@langchain/core/utils/stream";
import { ChatOpenAI } from "@langchain/openai";
import { z } from "zod";
import { createHttpModel } from "../models/http.js";
import { openModel } from "../models/open.js";
import type { DialectName } from "./dialects/index.js";
import { redactionMark } from "./redact-secret.js";
import { parseGatewayKeys } from "./tenants.js";
import { reply, startTestGateway, startUpstream, UPSTREAM_MODEL, type Behaviour, type FakeUpstream, type UpstreamRequest } from "./serve-harness.js";

const KEY = "gateway-key-langchain-0123456789";
const UPSTREAM_KEY = "sk-upstream-langchain-5d2e8a41c9";
const KEY_ENV = "REFLECT_TEST_LANGCHAIN_UPSTREAM_KEY";
const noRetry = { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0 };

const weather = tool(async ({ city }: { city: string }) => `${city}: 4 C`, { name: "get_weather", description: "Weather of a city", schema: z.object({ city: z.string() }) });
const Person = z.object({ name: z.string(), age: z.number() });
const ada = { name: "Ada", age: 36 };
/** A tool call's arguments, by tool; `json` is the tool `@ai-sdk/anthropic` forces for a JSON schema. */
const argsOf: Record<string, Record<string, unknown>> = { get_weather: { city: "Oslo" }, Person: ada, json: ada };

// ---------------------------------------------------------------------------------------------------------------
// The scripted upstream: one server that answers Chat Completions, Responses and Messages, each on its own path.
// ---------------------------------------------------------------------------------------------------------------

type Wire = "chat" | "responses" | "messages";
const wireOf = (seen: UpstreamRequest): Wire => (seen.url.includes("/responses") ? "responses" : seen.url.includes("/messages") ? "messages" : "chat");
const keyOf = (seen: UpstreamRequest): string => String(seen.headers["x-api-key"] ?? String(seen.headers.authorization ?? "").replace(/^Bearer /u, ""));

/** What the upstream was asked, read in the words of the path it was asked on. */
interface Asked {
  /** The tool the request forces, if it forces one by name. */
  forced?: string;
  tools: string[];
  /** The JSON schema the request asks the text to follow (on Messages, as an output format or a forced `json` tool). */
  schema?: unknown;
  /** JSON mode: a JSON object asked for without a schema (`json_object`). */
  jsonMode?: boolean;
  /** The last turn is a tool's result: `[call id, result text]`. */
  toolResult?: [string, string];
}

function asked(seen: UpstreamRequest): Asked {
  const body = seen.body as Record<string, any>;
  const wire = wireOf(seen);
  if (wire === "chat") {
    const last = (body.messages as Array<Record<string, any>>).at(-1);
    return {
      forced: body.tool_choice?.function?.name,
      tools: ((body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name),
      schema: body.response_format?.type === "json_schema" ? body.response_format.json_schema.schema : undefined,
      jsonMode: body.response_format?.type === "json_object",
      toolResult: last?.role === "tool" ? [last.tool_call_id, typeof last.content === "string" ? last.content : JSON.stringify(last.content)] : undefined,
    };
  }
  if (wire === "responses") {
    const input = typeof body.input === "string" ? [] : (body.input as Array<Record<string, any>>);
    const last = input.at(-1);
    return {
      forced: body.tool_choice?.type === "function" ? body.tool_choice.name : undefined,
      tools: ((body.tools ?? []) as Array<{ name: string }>).map((t) => t.name),
      schema: body.text?.format?.type === "json_schema" ? body.text.format.schema : undefined,
      jsonMode: body.text?.format?.type === "json_object",
      toolResult: last?.type === "function_call_output" ? [last.call_id, String(last.output)] : undefined,
    };
  }
  const content = (body.messages as Array<Record<string, any>>).at(-1)?.content;
  const result = Array.isArray(content) ? (content as Array<Record<string, any>>).find((block) => block.type === "tool_result") : undefined;
  const resultText = result === undefined ? "" : typeof result.content === "string" ? result.content : (result.content as Array<{ text: string }>).map((b) => b.text).join("");
  const tools = (body.tools ?? []) as Array<{ name: string; input_schema: unknown }>;
  const jsonTool = body.tool_choice?.type === "any" ? tools.find((t) => t.name === "json") : undefined;
  return {
    forced: body.tool_choice?.type === "tool" ? body.tool_choice.name : undefined,
    tools: tools.map((t) => t.name),
    schema: body.output_config?.format?.type === "json_schema" ? body.output_config.format.schema : jsonTool?.input_schema,
    toolResult: result === undefined ? undefined : [result.tool_use_id, resultText],
  };
}

/** The system prompt the upstream was sent, in its wire's words. */
function systemOf(seen: UpstreamRequest): unknown {
  const body = seen.body as Record<string, any>;
  if (wireOf(seen) === "messages") return typeof body.system === "string" ? body.system : (body.system as Array<{ text: string }> | undefined)?.map((b) => b.text).join("");
  const turns = (body.messages ?? body.input) as Array<{ role: string; content: unknown }>;
  const system = turns.find((turn) => turn.role === "system" || turn.role === "developer")?.content ?? body.instructions;
  return Array.isArray(system) ? (system as Array<{ text: string }>).map((b) => b.text).join("") : system;
}

/** The reply: a tool's result answered in text, a forced or offered tool called, a schema's JSON, else a greeting. */
type Answer = { text: string } | { call: { id: string; name: string; args: string } };

function answerFor(seen: UpstreamRequest, index: number): Answer {
  const what = asked(seen);
  if (what.toolResult !== undefined) return { text: `It is 4 C in Oslo. ${keyOf(seen)}` };
  const name = what.forced ?? what.tools[0];
  // `whoami` is answered with the key the upstream was sent, as a careless upstream might echo it.
  if (name !== undefined) return { call: { id: `call_up${index}`, name, args: JSON.stringify(name === "whoami" ? { key: keyOf(seen) } : (argsOf[name] ?? {})) } };
  if (what.schema !== undefined || what.jsonMode === true) return { text: JSON.stringify(ada) };
  return { text: `Hello from the upstream. ${keyOf(seen)}` };
}

/** The text in three pieces, so a stream has several deltas. */
const piecesOf = (text: string): string[] => [text.slice(0, 5), text.slice(5, 12), text.slice(12)].filter((p) => p !== "");

function sse(res: http.ServerResponse, events: Array<[string | undefined, unknown]>, done = false): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const [name, data] of events) res.write(`${name === undefined ? "" : `event: ${name}\n`}data: ${JSON.stringify(data)}\n\n`);
  res.end(done ? "data: [DONE]\n\n" : "");
}

function json(res: http.ServerResponse, body: unknown): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function answerChat(res: http.ServerResponse, seen: UpstreamRequest, answer: Answer): void {
  const usage = { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 };
  const base = { id: "chatcmpl-lc", created: 1_700_000_000, model: UPSTREAM_MODEL };
  const message = "text" in answer ? { role: "assistant", content: answer.text } : { role: "assistant", content: null, tool_calls: [{ id: answer.call.id, type: "function", function: { name: answer.call.name, arguments: answer.call.args } }] };
  const finish = "text" in answer ? "stop" : "tool_calls";
  if (seen.body.stream !== true) return json(res, { ...base, object: "chat.completion", choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage });
  const chunk = (delta: unknown, finish_reason: string | null = null) => [undefined, { ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason }] }] as [undefined, unknown];
  const deltas = "text" in answer ? piecesOf(answer.text).map((piece, i) => chunk(i === 0 ? { role: "assistant", content: piece } : { content: piece })) : [chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, ...(message.tool_calls?.[0] ?? {}) }] })];
  sse(res, [...deltas, chunk({}, finish), [undefined, { ...base, object: "chat.completion.chunk", choices: [], usage }]], true);
}

function answerResponses(res: http.ServerResponse, seen: UpstreamRequest, answer: Answer): void {
  const item = "text" in answer ? { type: "message", id: "msg_lc", role: "assistant", status: "completed", content: [{ type: "output_text", text: answer.text, annotations: [] }] } : { type: "function_call", id: "fc_lc", call_id: answer.call.id, name: answer.call.name, arguments: answer.call.args, status: "completed" };
  const response = (status: string, output: unknown[]) => ({ id: "resp_lc", object: "response", created_at: 1_700_000_000, status, model: UPSTREAM_MODEL, output, usage: { input_tokens: 12, output_tokens: 4, total_tokens: 16 } });
  if (seen.body.stream !== true) return json(res, response("completed", [item]));
  const events: Array<[string, unknown]> = [["response.created", { type: "response.created", sequence_number: 0, response: response("in_progress", []) }]];
  if ("text" in answer) {
    events.push(["response.output_item.added", { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } }]);
    events.push(["response.content_part.added", { type: "response.content_part.added", item_id: "msg_lc", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }]);
    for (const delta of piecesOf(answer.text)) events.push(["response.output_text.delta", { type: "response.output_text.delta", item_id: "msg_lc", output_index: 0, content_index: 0, delta }]);
    events.push(["response.output_text.done", { type: "response.output_text.done", item_id: "msg_lc", output_index: 0, content_index: 0, text: answer.text }]);
  } else {
    events.push(["response.output_item.added", { type: "response.output_item.added", output_index: 0, item: { ...item, arguments: "", status: "in_progress" } }]);
    events.push(["response.function_call_arguments.delta", { type: "response.function_call_arguments.delta", item_id: "fc_lc", output_index: 0, delta: answer.call.args }]);
    events.push(["response.function_call_arguments.done", { type: "response.function_call_arguments.done", item_id: "fc_lc", output_index: 0, arguments: answer.call.args }]);
  }
  events.push(["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }]);
  events.push(["response.completed", { type: "response.completed", response: response("completed", [item]) }]);
  sse(res, events.map(([name, data], i) => [name, { ...(data as object), sequence_number: i }]));
}

function answerMessages(res: http.ServerResponse, seen: UpstreamRequest, answer: Answer): void {
  const block = "text" in answer ? { type: "text", text: answer.text } : { type: "tool_use", id: answer.call.id.replace("call_", "toolu_"), name: answer.call.name, input: JSON.parse(answer.call.args) as unknown };
  const stop_reason = "text" in answer ? "end_turn" : "tool_use";
  const message = { id: "msg_lc", type: "message", role: "assistant", model: UPSTREAM_MODEL, stop_sequence: null };
  if (seen.body.stream !== true) return json(res, { ...message, content: [block], stop_reason, usage: { input_tokens: 12, output_tokens: 4 } });
  const start = "text" in answer ? { type: "text", text: "" } : { ...block, input: {} };
  const deltas = "text" in answer ? piecesOf(answer.text).map((text) => ({ type: "text_delta", text })) : [{ type: "input_json_delta", partial_json: answer.call.args }];
  sse(res, [
    ["message_start", { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 12, output_tokens: 1 } } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: start }],
    ...deltas.map((delta) => ["content_block_delta", { type: "content_block_delta", index: 0, delta }] as [string, unknown]),
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: 4 } }],
    ["message_stop", { type: "message_stop" }],
  ]);
}

/** Answers each dialect on its path, by what the request asks (see `answerFor`). */
const polyglot: Behaviour = (res, seen, index) => {
  const answer = answerFor(seen, index);
  ({ chat: answerChat, responses: answerResponses, messages: answerMessages })[wireOf(seen)](res, seen, answer);
};

/** Two calls of `get_weather` in one reply, on Chat Completions or Messages. */
const twoCalls: Behaviour = (res, seen) => {
  const cities = ["Oslo", "Rome"];
  if (wireOf(seen) === "messages") return json(res, { id: "msg_two", type: "message", role: "assistant", model: UPSTREAM_MODEL, stop_sequence: null, stop_reason: "tool_use", usage: { input_tokens: 12, output_tokens: 4 }, content: cities.map((city, i) => ({ type: "tool_use", id: `toolu_${i}`, name: "get_weather", input: { city } })) });
  const tool_calls = cities.map((city, i) => ({ id: `call_${i}`, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ city }) } }));
  json(res, { id: "chatcmpl-two", object: "chat.completion", created: 1_700_000_000, model: UPSTREAM_MODEL, choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls }, logprobs: null, finish_reason: "tool_calls" }], usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 } });
};

// ---------------------------------------------------------------------------------------------------------------
// The doors, the setups, and what each door's client looks like.
// ---------------------------------------------------------------------------------------------------------------

interface Door {
  name: string;
  dialect: DialectName;
  model(url: string, extra?: Record<string, unknown>, key?: string): BaseChatModel;
}

const doors: Door[] = [
  { name: "ChatOpenAI", dialect: "chat", model: (url, extra, key = KEY) => new ChatOpenAI({ model: UPSTREAM_MODEL, apiKey: key, maxRetries: 0, configuration: { baseURL: `${url}/v1` }, ...(extra === undefined ? {} : { modelKwargs: extra }) }) },
  { name: "ChatOpenAI (Responses)", dialect: "responses", model: (url, extra, key = KEY) => new ChatOpenAI({ model: UPSTREAM_MODEL, apiKey: key, maxRetries: 0, useResponsesApi: true, configuration: { baseURL: `${url}/v1` }, ...(extra === undefined ? {} : { modelKwargs: extra }) }) },
  { name: "ChatAnthropic", dialect: "messages", model: (url, extra, key = KEY) => new ChatAnthropic({ model: UPSTREAM_MODEL, apiKey: key, maxRetries: 0, maxTokens: 256, anthropicApiUrl: url, ...(extra === undefined ? {} : { invocationKwargs: extra }) }) },
];

/**
 * `relay`: the upstream speaks the door's dialect. `chat-upstream`: it speaks Chat Completions only (`reflect serve`'s
 * default). `messages-upstream`: it speaks Messages only (`--upstream-api messages`). The gateway knows the upstream's
 * key in each, as `reflect serve` always does for an HTTP upstream, and blanks it in what it answers.
 */
type Mode = "relay" | "chat-upstream" | "messages-upstream";

async function setup(t: TestContext, door: Door, mode: Mode, script: Behaviour | Behaviour[] = polyglot, keys?: string): Promise<{ upstream: FakeUpstream; model: (extra?: Record<string, unknown>) => BaseChatModel; url: string }> {
  process.env[KEY_ENV] = UPSTREAM_KEY;
  t.after(() => delete process.env[KEY_ENV]);
  const upstream = await startUpstream(t, script);
  const model =
    mode === "messages-upstream"
      ? await openModel(`${upstream.baseUrl}#${UPSTREAM_MODEL}`, { api: "messages", apiKeyEnv: KEY_ENV })
      : createHttpModel({ baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV, retry: noRetry });
  const gateway = await startTestGateway(t, {
    upstream: model,
    upstreamHttp: { baseUrl: upstream.baseUrl, model: UPSTREAM_MODEL, apiKeyEnv: KEY_ENV, speaks: [wireIn(door, mode)] },
    ...(keys === undefined ? { apiKey: KEY } : { tenants: parseGatewayKeys(keys) }),
  });
  return { upstream, model: (extra) => door.model(gateway.url, extra), url: gateway.url };
}

/** The wire the upstream is asked on in a setup: the door's own when relayed, else the upstream's one dialect. */
const wireIn = (door: Door, mode: Mode): Wire => (mode === "relay" ? door.dialect : mode === "chat-upstream" ? "chat" : "messages");

const textOf = (message: BaseMessage): string => (typeof message.content === "string" ? message.content : (message.content as Array<{ type: string; text?: string }>).filter((b) => b.type === "text").map((b) => b.text ?? "").join(""));

/** Nothing LangChain returned holds the upstream's key. */
function assertNoKey(value: unknown, what: string): void {
  assert.ok(!JSON.stringify(value).includes(UPSTREAM_KEY), `${what} holds the upstream's key`);
}

/** Every request reached the upstream on `wire`'s path, with the upstream's key, never the gateway's. */
function assertWire(upstream: FakeUpstream, wire: Wire): void {
  assert.ok(upstream.requests.length > 0);
  for (const seen of upstream.requests) {
    assert.equal(wireOf(seen), wire, seen.url);
    assert.equal(keyOf(seen), UPSTREAM_KEY);
    assert.ok(!seen.raw.toString("utf8").includes(KEY) && !JSON.stringify(seen.headers).includes(KEY), "the gateway's key is never forwarded");
  }
}

/** Relayed, and translated for each upstream dialect that is not the door's own. */
const modes = (door: Door): Mode[] => ["relay", ...(["chat-upstream", "messages-upstream"] as const).filter((mode) => wireIn(door, mode) !== door.dialect)];

for (const door of doors) {
  for (const mode of modes(door)) {
    describe(`LangChain ${door.name} through the gateway, ${mode}`, () => {
      const wire = wireIn(door, mode);

      it("invoke: the upstream's text comes back, its key blanked", async (t) => {
        const { upstream, model } = await setup(t, door, mode);
        const answer = await model().invoke([new SystemMessage("Answer briefly."), new HumanMessage("Say hello.")]);
        assert.equal(textOf(answer), `Hello from the upstream. ${redactionMark}`);
        assert.deepEqual([answer.usage_metadata?.input_tokens, answer.usage_metadata?.output_tokens], [12, 4]);
        assert.equal(systemOf(upstream.requests[0] as UpstreamRequest), "Answer briefly.");
        assertNoKey(answer, "the answer");
        assertWire(upstream, wire);
      });

      it("stream: the chunks concatenate to the text", async (t) => {
        const { upstream, model } = await setup(t, door, mode);
        const texts: string[] = [];
        const chunks = [];
        for await (const chunk of await model().stream("Say hello.")) {
          chunks.push(chunk);
          texts.push(textOf(chunk));
        }
        assert.equal(texts.join(""), `Hello from the upstream. ${redactionMark}`);
        const whole = chunks.reduce((a, b) => concat(a, b));
        // ChatAnthropic adds message_start's output_tokens (1 in the relayed upstream's stream; 0 in the gateway's own) to
        // message_delta's.
        const output = mode === "relay" && door.dialect === "messages" ? 1 + 4 : 4;
        // A translated Messages stream starts (message_start) before the upstream has counted the prompt, and says the
        // input tokens on message_delta, where Anthropic's SDK reads them but ChatAnthropic does not: it shows 0.
        const input = mode !== "relay" && door.dialect === "messages" ? 0 : 12;
        assert.deepEqual([whole.usage_metadata?.input_tokens, whole.usage_metadata?.output_tokens], [input, output]);
        assertNoKey(chunks, "the chunks");
        assertWire(upstream, wire);
      });

      it("bindTools: the call comes back parsed; the ToolMessage reaches the upstream as a structured tool result", async (t) => {
        const { upstream, model } = await setup(t, door, mode);
        const bound = model().bindTools?.([weather]);
        assert.ok(bound !== undefined);
        const question = new HumanMessage("Weather in Oslo?");
        const call = await bound.invoke([question]);
        assert.deepEqual(
          (call as AIMessage).tool_calls?.map((c) => [c.name, c.args]),
          [["get_weather", { city: "Oslo" }]],
        );
        const id = (call as AIMessage).tool_calls?.[0]?.id as string;
        const result = new ToolMessage({ tool_call_id: id, content: "Oslo: 4 C" });
        const answer = await bound.invoke([question, call, result]);
        assert.equal(textOf(answer), `It is 4 C in Oslo. ${redactionMark}`);
        assertNoKey([call, answer], "the answers");
        const second = upstream.requests[1] as UpstreamRequest;
        // The result answers the call by the id the upstream gave it, in the upstream's own words.
        assert.deepEqual(asked(second).toolResult, [wire === "messages" ? "toolu_up0" : "call_up0", "Oslo: 4 C"]);
        assert.deepEqual(asked(upstream.requests[0] as UpstreamRequest).tools, ["get_weather"]);
        assertWire(upstream, wire);
      });

      it("bindTools: the upstream's key echoed into a call's arguments comes back blanked, plain and streamed", async (t) => {
        const { upstream, model } = await setup(t, door, mode);
        const whoami = tool(async () => "", { name: "whoami", description: "Who the caller is", schema: z.object({ key: z.string() }) });
        const bound = model().bindTools?.([whoami]);
        assert.ok(bound !== undefined);
        const call = (await bound.invoke("Who am I?")) as AIMessage;
        assert.deepEqual(call.tool_calls?.map((c) => [c.name, c.args]), [["whoami", { key: redactionMark }]]);
        let whole: AIMessageChunk | undefined;
        for await (const chunk of await bound.stream("Who am I?")) whole = whole === undefined ? (chunk as AIMessageChunk) : concat(whole, chunk as AIMessageChunk);
        assert.deepEqual(whole?.tool_calls?.map((c) => [c.name, c.args]), [["whoami", { key: redactionMark }]]);
        assertNoKey([call, whole], "the calls");
        assertWire(upstream, wire);
      });

      it("bindTools, streamed: the chunks concatenate to the parsed call", async (t) => {
        const { upstream, model } = await setup(t, door, mode);
        const bound = model().bindTools?.([weather]);
        assert.ok(bound !== undefined);
        let whole: AIMessageChunk | undefined;
        for await (const chunk of await bound.stream("Weather in Oslo?")) whole = whole === undefined ? (chunk as AIMessageChunk) : concat(whole, chunk as AIMessageChunk);
        assert.deepEqual(whole?.tool_calls?.map((c) => [c.name, c.args]), [["get_weather", { city: "Oslo" }]]);
        // Relayed or translated, the upstream is asked to stream: a translated stream is written event by event.
        assert.equal(upstream.requests[0]?.body.stream, true);
        assertWire(upstream, wire);
      });

      it("withStructuredOutput, function calling: the upstream is forced to the tool, the object comes back", async (t) => {
        const { upstream, model } = await setup(t, door, mode);
        const structured = model().withStructuredOutput(Person, { method: "functionCalling", name: "Person" });
        assert.deepEqual(await structured.invoke("Who wrote the first program?"), ada);
        assert.equal(asked(upstream.requests[0] as UpstreamRequest).forced, "Person");
        assertWire(upstream, wire);
      });

      it("withStructuredOutput, JSON schema: the upstream is asked for the schema, the object comes back", async (t) => {
        const { upstream, model } = await setup(t, door, mode);
        const structured = model().withStructuredOutput(Person, { method: "jsonSchema", name: "Person" });
        assert.deepEqual(await structured.invoke("Who wrote the first program?"), ada);
        const schema = asked(upstream.requests[0] as UpstreamRequest).schema as { properties?: Record<string, unknown> } | undefined;
        assert.deepEqual(Object.keys(schema?.properties ?? {}), ["name", "age"]);
        assertWire(upstream, wire);
      });

      if (door.dialect !== "messages") {
        it("withStructuredOutput, JSON mode: the upstream is asked for a JSON object, the object comes back", async (t) => {
          const { upstream, model } = await setup(t, door, mode);
          const structured = model().withStructuredOutput(Person, { method: "jsonMode", name: "Person" });
          assert.deepEqual(await structured.invoke("Who wrote the first program? Answer in JSON."), ada);
          const seen = asked(upstream.requests[0] as UpstreamRequest);
          // Relayed, `json_object` as LangChain sent it; translated, a JSON schema of any object (Chat's `json_schema`, or
          // on Messages the `json` tool `@ai-sdk/anthropic` forces).
          if (mode === "relay") assert.equal(seen.jsonMode, true);
          else assert.equal((seen.schema as { type?: string } | undefined)?.type, "object");
          assertWire(upstream, wire);
        });
      }
    });
  }

  describe(`LangChain ${door.name} with reflect in its model kwargs`, () => {
    it("gets the reflected answer: a failing draft, a reflection, the retry that passes", async (t) => {
      const { upstream, model } = await setup(t, door, "chat-upstream", [reply("forty-two"), reply("I spelled it out; digits only."), reply("42")]);
      const answer = await model({ reflect: { regex: "^\\d+$" } }).invoke("What is six times seven? Digits only.");
      assert.equal(textOf(answer), "42");
      assert.equal(upstream.requests.length, 3, "attempt, reflection, attempt");
      assert.ok(upstream.requests.every((r) => wireOf(r) === "chat" && r.body.reflect === undefined), "reflect is the gateway's, never sent on");
    });

    it("streams the reflected answer, settled", async (t) => {
      const { upstream, model } = await setup(t, door, "chat-upstream", [reply("forty-two"), reply("I spelled it out; digits only."), reply("42")]);
      let text = "";
      for await (const chunk of await model({ reflect: { regex: "^\\d+$" } }).stream("What is six times seven? Digits only.")) text += textOf(chunk);
      assert.equal(text, "42");
      assert.equal(upstream.requests.length, 3);
    });

    it("a reflected structured output: the forced tool on the attempt, the object back", async (t) => {
      const { upstream, model } = await setup(t, door, "chat-upstream");
      const structured = model({ reflect: { max_turns: 2 } }).withStructuredOutput(Person, { method: "functionCalling", name: "Person" });
      assert.deepEqual(await structured.invoke("Who wrote the first program?"), ada);
      assert.equal(upstream.requests.length, 1, "the first attempt passed the tools check");
      assert.deepEqual(upstream.requests[0]?.body.tool_choice, { type: "function", function: { name: "Person" } });
    });

    it("a bad reflect object is LangChain's 400 error naming the field, and no upstream call", async (t) => {
      const { upstream, model } = await setup(t, door, "chat-upstream");
      await assert.rejects(model({ reflect: { max_turns: "two" } }).invoke("hi"), (error: unknown) => {
        assert.equal((error as { status?: number }).status, 400, String(error));
        assert.match(String(error), /reflect\.max_turns/u);
        assertNoKey(String(error), "the error");
        return true;
      });
      assert.equal(upstream.requests.length, 0);
    });
  });

  describe(`LangChain ${door.name} with parallel tool calls through a translating door`, () => {
    it("two calls in one reply come back parsed; their two ToolMessages reach the upstream as two results", async (t) => {
      const mode = modes(door)[1] as Mode;
      const { upstream, model } = await setup(t, door, mode, [twoCalls, polyglot]);
      const bound = model().bindTools?.([weather]);
      assert.ok(bound !== undefined);
      const question = new HumanMessage("Weather in Oslo and Rome?");
      const call = (await bound.invoke([question])) as AIMessage;
      assert.deepEqual(call.tool_calls?.map((c) => [c.name, c.args]), [["get_weather", { city: "Oslo" }], ["get_weather", { city: "Rome" }]]);
      const results = (call.tool_calls ?? []).map((c) => new ToolMessage({ tool_call_id: c.id as string, content: `${String(c.args.city)}: 4 C` }));
      await bound.invoke([question, call, ...results]);
      const second = upstream.requests[1]?.body as Record<string, any>;
      const sent = wireIn(door, mode) === "chat" ? (second.messages as Array<Record<string, any>>).filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m.content]) : (second.messages as Array<Record<string, any>>).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: Record<string, any>) => b.type === "tool_result").map((b: Record<string, any>) => [b.tool_use_id, typeof b.content === "string" ? b.content : b.content.map((c: { text: string }) => c.text).join("")]);
      assert.deepEqual(sent, [[call.tool_calls?.[0]?.id, "Oslo: 4 C"], [call.tool_calls?.[1]?.id, "Rome: 4 C"]]);
    });
  });

  describe(`LangChain ${door.name} with what a translating door refuses`, () => {
    it("an image part is LangChain's 400 error naming the field, and no upstream call", async (t) => {
      const { upstream, model } = await setup(t, door, modes(door)[1] as Mode);
      const image = new HumanMessage({ content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }] });
      await assert.rejects(model().invoke([image]), (error: unknown) => {
        assert.equal((error as { status?: number }).status, 400, String(error));
        assert.match(String(error), /(messages|input)\[0\]\.content\[1\]/u);
        return true;
      });
      assert.equal(upstream.requests.length, 0);
    });
  });

  describe(`LangChain ${door.name} and the gateway's keys`, () => {
    it("a wrong key is LangChain's 401 error, and no upstream call", async (t) => {
      const { upstream, url } = await setup(t, door, "relay");
      await assert.rejects(door.model(url, undefined, "not-the-key").invoke("hi"), (error: unknown) => (error as { status?: number }).status === 401);
      assert.equal(upstream.requests.length, 0);
    });

    it("two tenants' tool results stay apart through a translating door: each upstream call carries its own only", async (t) => {
      const [keyA, keyB] = ["tenant-a-key-0123456789", "tenant-b-key-0123456789"];
      const { upstream, url } = await setup(t, door, modes(door)[1] as Mode, polyglot, `team-a:${keyA},team-b:${keyB}`);
      const turn = async (key: string, city: string): Promise<string> => {
        const bound = door.model(url, undefined, key).bindTools?.([weather]);
        assert.ok(bound !== undefined);
        const question = new HumanMessage(`Weather in ${city}?`);
        const call = new AIMessage({ content: "", tool_calls: [{ id: `call_${city}`, name: "get_weather", args: { city }, type: "tool_call" }] });
        return textOf(await bound.invoke([question, call, new ToolMessage({ tool_call_id: `call_${city}`, content: `${city}: 4 C` })]));
      };
      assert.deepEqual(await Promise.all([turn(keyA, "Oslo"), turn(keyB, "Rome")]), [`It is 4 C in Oslo. ${redactionMark}`, `It is 4 C in Oslo. ${redactionMark}`]);
      const results = upstream.requests.map((seen) => asked(seen).toolResult?.join("=")).sort();
      assert.deepEqual(results, ["call_Oslo=Oslo: 4 C", "call_Rome=Rome: 4 C"]);
    });
  });
}
