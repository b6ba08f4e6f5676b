import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool } from "@openai/agents";
import OpenAI, { APIError } from "openai";
import { z } from "zod";
import { RequestFieldError } from "../../errors.js";
import type { ChatRequest, RequestBounds } from "../loop-request.js";
import { parseChatRequest } from "./chat.js";
import type { CompletionMeta, CompletionReply, ReflectExtension } from "../response.js";
import type { GatewayError } from "./dialect.js";
import { responseEvents, responseObject, responsesDialect, type ResponsesObject } from "./responses.js";

const bounds: RequestBounds = { maxTurns: 4, budget: { tokens: 1000, calls: 6, seconds: 30 }, defaultMaxTokens: 64 };
const parse = (body: unknown) => responsesDialect.parse(body, bounds);

function fieldOf(body: unknown): string {
  try {
    parse(body);
  } catch (error) {
    assert.ok(error instanceof RequestFieldError, String(error));
    return error.field;
  }
  assert.fail("expected a RequestFieldError");
}

const meta: CompletionMeta = { id: "resp_abc123", created: 1_790_000_000, model: "upstream-model" };
const usage = { promptTokens: 120, completionTokens: 30, evaluatedPromptTokens: 100 };
const reflect: ReflectExtension = {
  attempts: 2,
  decision: "verified",
  rolled_back: false,
  stopped_by: "verified",
  selected: 1,
  passed: true,
  checks: [
    { turn: 0, source: "schema", pass: false, score: 0, feedback: "missing a" },
    { turn: 1, source: "schema", pass: true, score: 1, feedback: "ok" },
  ],
  usage_by_role: {} as ReflectExtension["usage_by_role"],
};

/** Server-sent events as `{ event, data }`, the way an SSE client splits them (comments skipped). */
function parseSse(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        if (line.startsWith("event: ")) event = line.slice("event: ".length);
        else if (line.startsWith("data: ")) data.push(line.slice("data: ".length));
        else assert.fail(`unexpected SSE line ${JSON.stringify(line)}`);
      }
      return { event, data: JSON.parse(data.join("\n")) as Record<string, unknown> };
    });
}

/** An OpenAI client whose requests are answered in memory with `body`, so the SDK's own parsers read the gateway's bytes. */
function clientAnswering(body: string, contentType: string, status = 200): OpenAI {
  return new OpenAI({
    apiKey: "sk-test",
    baseURL: "http://gateway.test/v1",
    maxRetries: 0,
    fetch: async () => new Response(body, { status, headers: { "content-type": contentType } }),
  });
}

describe("the Responses dialect: parse", () => {
  it("reads a string input as one user message, instructions as the system message before it", () => {
    const chat = parse({ model: "m", instructions: "Be brief.", input: "What is 2+2?" });
    assert.deepEqual(chat.messages, [
      { role: "system", content: "Be brief." },
      { role: "user", content: "What is 2+2?" },
    ]);
    assert.deepEqual(chat.sampling, { maxTokens: 64 });
    assert.equal(chat.stream, false);
    assert.equal(chat.reflect, undefined);
    assert.deepEqual(chat.checks, {});
  });

  it("reads message items of every role and text parts, developer as system", () => {
    const chat = parse({
      input: [
        { role: "developer", content: "Rules." },
        { type: "message", role: "system", content: [{ type: "input_text", text: "More " }, { type: "input_text", text: "rules." }] },
        { role: "user", content: [{ type: "input_text", text: "Hi" }] },
        { type: "message", id: "msg_1", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Hello", annotations: [] }] },
        { role: "user", content: "Again" },
      ],
    });
    assert.deepEqual(chat.messages, [
      { role: "system", content: "Rules." },
      { role: "system", content: "More rules." },
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello" },
      { role: "user", content: "Again" },
    ]);
  });

  it("reads function calls and their outputs as chat's tool calls and tool messages are read", () => {
    const items = [
      { role: "user", content: "Weather in Oslo and Rome?" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Looking it up." }] },
      { type: "function_call", id: "fc_1", call_id: "call_1", name: "weather", arguments: '{"city":"Oslo"}', status: "completed" },
      { type: "function_call", call_id: "call_2", name: "weather", arguments: '{"city":"Rome"}' },
      { type: "function_call_output", call_id: "call_1", output: "4 C" },
      { type: "function_call_output", call_id: "call_2", output: [{ type: "input_text", text: "21 C" }] },
      { type: "function_call", call_id: "call_3", name: "weather", arguments: "{}" },
      { type: "function_call_output", call_id: "call_3", output: "?" },
    ];
    const chatBody = {
      messages: [
        { role: "user", content: "Weather in Oslo and Rome?" },
        {
          role: "assistant",
          content: "Looking it up.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
            { id: "call_2", type: "function", function: { name: "weather", arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "4 C" },
        { role: "tool", tool_call_id: "call_2", content: "21 C" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_3", type: "function", function: { name: "weather", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_3", content: "?" },
      ],
    };
    const messages = parse({ input: items }).messages;
    assert.deepEqual(messages, parseChatRequest(chatBody, bounds).messages);
    assert.equal(messages.length, 6);
    assert.deepEqual(messages[1], {
      role: "assistant",
      content: "Looking it up.",
      toolCalls: [
        { id: "call_1", name: "weather", arguments: '{"city":"Oslo"}' },
        { id: "call_2", name: "weather", arguments: '{"city":"Rome"}' },
      ],
    });
    assert.deepEqual(messages[3], { role: "tool", toolCallId: "call_2", content: "21 C" });
  });

  it("maps text.format, tools and tool_choice as chat maps response_format, tools and tool_choice", () => {
    const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["a"] };
    const parameters = { type: "object", properties: { city: { type: "string" } } };
    const pairs: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ text: { format: { type: "json_schema", name: "out", schema, strict: true } } }, { response_format: { type: "json_schema", json_schema: { name: "out", schema, strict: true } } }],
      [{ text: { format: { type: "json_object" } } }, { response_format: { type: "json_object" } }],
      [{ text: { format: { type: "text" } } }, { response_format: { type: "text" } }],
      [
        { tools: [{ type: "function", name: "weather", description: "Look up", parameters, strict: true }, { type: "function", name: "time" }] },
        { tools: [{ type: "function", function: { name: "weather", description: "Look up", parameters, strict: true } }, { type: "function", function: { name: "time" } }] },
      ],
      [
        { tools: [{ type: "function", name: "weather", parameters }], tool_choice: "required" },
        { tools: [{ type: "function", function: { name: "weather", parameters } }], tool_choice: "required" },
      ],
      [
        { tools: [{ type: "function", name: "weather", parameters }, { type: "function", name: "time" }], tool_choice: { type: "function", name: "time" } },
        { tools: [{ type: "function", function: { name: "weather", parameters } }, { type: "function", function: { name: "time" } }], tool_choice: { type: "function", function: { name: "time" } } },
      ],
      [
        { tools: [{ type: "function", name: "weather", parameters }], tool_choice: "none" },
        { tools: [{ type: "function", function: { name: "weather", parameters } }], tool_choice: "none" },
      ],
      [
        { max_output_tokens: 40, temperature: 0.5, top_p: 0.9, stream: true },
        { max_tokens: 40, temperature: 0.5, top_p: 0.9, stream: true },
      ],
      [
        { reflect: { max_turns: 3, feedback: "binary", budget: { calls: 4 }, regex: { pattern: "^a", flags: "i" }, tests: "assert f() == 1", on_failure: "error" } },
        { reflect: { max_turns: 3, feedback: "binary", budget: { calls: 4 }, regex: { pattern: "^a", flags: "i" }, tests: "assert f() == 1", on_failure: "error" } },
      ],
    ];
    for (const [responses, chat] of pairs) {
      const got = parse({ input: "hi", ...responses });
      const want = parseChatRequest({ messages: [{ role: "user", content: "hi" }], ...chat }, bounds);
      const label = JSON.stringify(responses);
      assert.deepEqual(got.sampling, want.sampling, label);
      assert.deepEqual(got.checks, want.checks, label);
      assert.equal(got.toolChoiceRequired, want.toolChoiceRequired, label);
      assert.equal(got.stream, want.stream, label);
      assert.deepEqual(got.reflect, want.reflect, label);
    }
    // Spot checks of what the table compares.
    const structured = parse({ input: "hi", text: { format: { type: "json_schema", name: "out", schema } } });
    assert.deepEqual(structured.checks.schema, { name: "out", schema });
    assert.deepEqual(structured.sampling.responseFormat, { type: "json", schema });
    const forced = parse({ input: "hi", tools: [{ type: "function", name: "a" }, { type: "function", name: "b" }], tool_choice: { type: "function", name: "b" } });
    assert.deepEqual(forced.checks.tools, [{ name: "b" }]);
    assert.equal(forced.checks.toolsRequired, true);
  });

  it("asks for reflection only with a reflect object", () => {
    assert.equal(responsesDialect.asksForReflection({ input: "x", reflect: {} }), true);
    assert.equal(responsesDialect.asksForReflection({ input: "x", reflect: null }), false);
    assert.equal(responsesDialect.asksForReflection({ input: "x" }), false);
    assert.deepEqual(parse({ input: "x", reflect: {} }).reflect, parseChatRequest({ messages: [{ role: "user", content: "x" }], reflect: {} }, bounds).reflect);
  });

  it("accepts what a stateless gateway can honour: store (as false), empty include, disabled truncation, metadata, user", () => {
    const chat = parse({
      model: "m",
      input: "x",
      store: true,
      include: [],
      truncation: "disabled",
      parallel_tool_calls: false,
      metadata: { team: "a" },
      user: "u1",
      background: false,
      previous_response_id: null,
      reasoning: null,
      stream_options: { include_obfuscation: false },
      top_logprobs: 0,
    });
    assert.deepEqual(chat.messages, [{ role: "user", content: "x" }]);
    const answer = responseObject({ ...meta, ...(chat.echo === undefined ? {} : { echo: chat.echo }) }, { text: "y", finishReason: "stop" }, usage);
    assert.equal(answer.store, false);
    assert.equal(answer.parallel_tool_calls, false);
    assert.deepEqual(answer.metadata, { team: "a" });
    assert.equal(answer.user, "u1");
  });

  it("refuses what it cannot honour, naming the field as the client wrote it", () => {
    const cases: Array<[unknown, string]> = [
      [[], "body"],
      [{}, "input"],
      [{ input: [] }, "input"],
      [{ input: 3 }, "input"],
      [{ input: ["hi"] }, "input[0]"],
      [{ input: [{ role: "user", content: [{ type: "input_text", text: "a" }, { type: "input_image", image_url: "https://x/y.png" }] }] }, "input[0].content[1]"],
      [{ input: [{ role: "user", content: "a" }, { role: "user", content: [{ type: "input_file", file_id: "f" }] }] }, "input[1].content[0]"],
      [{ input: [{ role: "user", content: "a" }, { type: "reasoning", id: "rs_1", summary: [] }, 7] }, "input[2]"],
      [{ input: [{ type: "item_reference", id: "msg_1" }] }, "input[0]"],
      [{ input: [{ type: "web_search_call", id: "ws_1" }] }, "input[0]"],
      [{ input: [{ role: "tool", content: "a" }] }, "input[0].role"],
      [{ input: [{ role: "user", content: 5 }] }, "input[0].content"],
      [{ input: [{ type: "function_call", name: "f", arguments: "{}" }] }, "input[0].call_id"],
      [{ input: [{ type: "function_call", call_id: "c", arguments: "{}" }] }, "input[0].name"],
      [{ input: [{ type: "function_call", call_id: "c", name: "f", arguments: { a: 1 } }] }, "input[0].arguments"],
      [{ input: [{ type: "function_call_output", output: "x" }] }, "input[0].call_id"],
      [{ input: [{ type: "function_call_output", call_id: "c", output: [{ type: "input_text", text: "a" }, { type: "input_image", image_url: "x" }] }] }, "input[0].output[1]"],
      [{ input: "x", instructions: 3 }, "instructions"],
      [{ input: "x", previous_response_id: "resp_1" }, "previous_response_id"],
      [{ input: "x", conversation: "conv_1" }, "conversation"],
      [{ input: "x", background: true }, "background"],
      [{ input: "x", reasoning: [] }, "reasoning"],
      [{ input: "x", reasoning: "high" }, "reasoning"],
      [{ input: "x", reasoning: { effort: "huge" } }, "reasoning.effort"],
      [{ input: "x", reasoning: { summary: 3 } }, "reasoning.summary"],
      [{ input: "x", reasoning: { effort: "low", budget: 9 } }, "reasoning.budget"],
      [{ input: "x", prompt: { id: "pmpt_1" } }, "prompt"],
      [{ input: "x", truncation: "auto" }, "truncation"],
      [{ input: "x", include: "reasoning.encrypted_content" }, "include"],
      [{ input: "x", include: ["reasoning.encrypted_content", "message.output_text.logprobs"] }, "include[1]"],
      [{ input: "x", user: 5 }, "user"],
      [{ input: "x", store: "yes" }, "store"],
      [{ input: "x", frobnicate: 1 }, "frobnicate"],
      [{ input: "x", stream_options: true }, "stream_options"],
      [{ input: "x", stream_options: { include_usage: true } }, "stream_options.include_usage"],
      [{ input: "x", model: 7 }, "model"],
      [{ input: "x", top_logprobs: 3 }, "top_logprobs"],
      [{ input: "x", max_output_tokens: 0 }, "max_output_tokens"],
      [{ input: "x", temperature: 3 }, "temperature"],
      [{ input: "x", top_p: -1 }, "top_p"],
      [{ input: "x", metadata: { a: 1 } }, "metadata.a"],
      [{ input: "x", text: { format: { type: "xml" } } }, "text.format.type"],
      [{ input: "x", text: { format: { type: "json_schema", name: "o" } } }, "text.format.schema"],
      [{ input: "x", text: { format: { type: "json_schema", schema: {} } } }, "text.format.name"],
      [{ input: "x", text: { verbosity: "loud" } }, "text.verbosity"],
      [{ input: "x", text: { other: 1 } }, "text.other"],
      [{ input: "x", tools: {} }, "tools"],
      [{ input: "x", tools: [{ type: "function", name: "a" }, { type: "mystery" }] }, "tools[1].type"],
      [{ input: "x", tools: [{ type: "custom", name: "apply patch" }] }, "tools[0].name"],
      [{ input: "x", tools: [{ type: "mcp", server_label: "a\nb" }] }, "tools[0].server_label"],
      [{ input: "x", tools: [{ type: "file_search", vector_store_ids: ["v"] }], tool_choice: "required" }, "tool_choice"],
      [{ input: "x", tools: [{ type: "function", name: "a" }, { type: "custom", name: "apply_patch" }], tool_choice: { type: "custom", name: "apply_patch" } }, "tool_choice"],
      [{ input: "x", tools: [{ type: "function", function: { name: "a" } }] }, "tools[0].function"],
      [{ input: "x", tools: [{ type: "function", name: "a b" }] }, "tools[0].name"],
      [{ input: "x", tools: [{ type: "function", name: "a", parameters: "{}" }] }, "tools[0].parameters"],
      [{ input: "x", tools: [{ type: "function", name: "a", strict: "yes" }] }, "tools[0].strict"],
      [{ input: "x", tool_choice: "required" }, "tool_choice"],
      [{ input: "x", tools: [{ type: "function", name: "a" }], tool_choice: { type: "function", name: "b" } }, "tool_choice"],
      [{ input: "x", tools: [{ type: "function", name: "a" }], tool_choice: { type: "web_search_preview" } }, "tool_choice"],
      [{ input: "x", reflect: [] }, "reflect"],
      [{ input: "x", reflect: { nope: 1 } }, "reflect.nope"],
      [{ input: "x", reflect: { max_turns: 9 } }, "reflect.max_turns"],
      [{ input: "x", reflect: { budget: { calls: 99 } } }, "reflect.budget.calls"],
    ];
    for (const [body, field] of cases) assert.equal(fieldOf(body), field, JSON.stringify(body));
  });

  it("says what to do instead of a stored response", () => {
    assert.throws(() => parse({ input: "x", previous_response_id: "resp_1" }), /stateless.*send the whole conversation in input/u);
  });
});

describe("the Responses dialect: answer", () => {
  it("answers text as one assistant message, with ids from the answer's id and usage over the episode", () => {
    const body = responsesDialect.answer(meta, { text: "4", finishReason: "stop" }, usage);
    assert.deepEqual(body, {
      id: "resp_abc123",
      object: "response",
      created_at: 1_790_000_000,
      status: "completed",
      model: "upstream-model",
      output: [{ type: "message", id: "msg_abc123_0", status: "completed", role: "assistant", content: [{ type: "output_text", text: "4", annotations: [], logprobs: [] }] }],
      usage: { input_tokens: 120, input_tokens_details: { cached_tokens: 20, cache_write_tokens: 0 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 150 },
      error: null,
      incomplete_details: null,
      access_programs: null,
      background: false,
      previous_response_id: null,
      reasoning: null,
      store: false,
      truncation: "disabled",
      instructions: null,
      max_output_tokens: null,
      metadata: null,
      parallel_tool_calls: true,
      temperature: null,
      top_p: null,
      tool_choice: "auto",
      tools: [],
      text: { format: { type: "text" } },
    });
  });

  it("answers tool calls as function_call items after the text, and echoes the request's fields", () => {
    const chat = parse({
      instructions: "Use tools.",
      input: "Weather?",
      tools: [{ type: "function", name: "weather", parameters: { type: "object" } }],
      tool_choice: "required",
      temperature: 0.2,
      max_output_tokens: 50,
      text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } },
    });
    const reply: CompletionReply = {
      text: "Checking.",
      toolCalls: [
        { id: "call_9", name: "weather", arguments: '{"city":"Oslo"}' },
        { id: "call_10", name: "weather", arguments: '{"city":"Rome"}' },
      ],
      finishReason: "stop",
    };
    const body = responseObject({ ...meta, ...(chat.echo === undefined ? {} : { echo: chat.echo }) }, reply, usage, reflect);
    assert.deepEqual(
      body.output.map((item) => [item.type, item.id]),
      [
        ["message", "msg_abc123_0"],
        ["function_call", "fc_abc123_1"],
        ["function_call", "fc_abc123_2"],
      ],
    );
    assert.deepEqual(body.output[1], { type: "function_call", id: "fc_abc123_1", call_id: "call_9", name: "weather", arguments: '{"city":"Oslo"}', status: "completed" });
    assert.equal(body.instructions, "Use tools.");
    assert.equal(body.temperature, 0.2);
    assert.equal(body.max_output_tokens, 50);
    assert.equal(body.tool_choice, "required");
    assert.deepEqual(body.tools, [{ type: "function", name: "weather", description: null, parameters: { type: "object" }, strict: null }]);
    assert.deepEqual(body.text, { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } });
    assert.deepEqual(body.reflect, reflect);
    // Tool calls alone: no empty message item.
    const callsOnly = responseObject(meta, { ...reply, text: "" }, usage);
    assert.deepEqual(
      callsOnly.output.map((item) => item.id),
      ["fc_abc123_0", "fc_abc123_1"],
    );
  });

  it("marks a reply cut at the token limit incomplete, as OpenAI does", () => {
    const body = responseObject(meta, { text: "It was a dark and", finishReason: "length" }, usage);
    assert.equal(body.status, "incomplete");
    assert.deepEqual(body.incomplete_details, { reason: "max_output_tokens" });
    assert.equal(body.output[0]?.status, "incomplete");
    // An empty reply is still a message: a Response always says what the model wrote.
    assert.deepEqual(responseObject(meta, { text: "", finishReason: "stop" }, usage).output[0], {
      type: "message",
      id: "msg_abc123_0",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "", annotations: [], logprobs: [] }],
    });
  });

  it("is the openai package's Response type (drift from the official shape fails the build)", () => {
    const body: ResponsesObject = responseObject(meta, { text: "4", toolCalls: [{ id: "c", name: "f", arguments: "{}" }], finishReason: "stop" }, usage, reflect);
    // `output_text` is computed by the SDKs, never sent.
    const typed: Omit<OpenAI.Responses.Response, "output_text"> = body;
    assert.equal(typed.object, "response");
    assert.equal("output_text" in body, false);
  });

  it("reads back through the openai client as a Response with its output_text", async () => {
    const body = responsesDialect.answer(meta, { text: "4", finishReason: "stop" }, usage, reflect);
    const response = await clientAnswering(JSON.stringify(body), "application/json").responses.create({ model: "m", input: "2+2?" });
    assert.equal(response.id, "resp_abc123");
    assert.equal(response.output_text, "4");
    assert.equal(response.usage?.total_tokens, 150);
    assert.deepEqual((response as unknown as { reflect: ReflectExtension }).reflect, reflect);
  });
});

describe("the Responses dialect: events", () => {
  const reply: CompletionReply = { text: "Checking the weather.", toolCalls: [{ id: "call_9", name: "weather", arguments: '{"city":"Oslo"}' }], finishReason: "stop" };

  it("streams the Responses event sequence whose last response equals the answer", () => {
    const events = parseSse(responsesDialect.events(meta, reply, usage, { includeUsage: false }, reflect));
    assert.deepEqual(
      events.map((e) => e.event),
      [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
      ],
    );
    events.forEach((e, i) => {
      assert.equal(e.data.type, e.event);
      assert.equal(e.data.sequence_number, i);
    });
    const created = events[0]?.data.response as Record<string, unknown>;
    assert.equal(created.status, "in_progress");
    assert.deepEqual(created.output, []);
    assert.equal(created.usage, null);
    assert.equal(created.id, meta.id);
    assert.deepEqual(events.at(-1)?.data.response, responsesDialect.answer(meta, reply, usage, reflect));
    const deltas = events.filter((e) => e.event === "response.output_text.delta").map((e) => e.data.delta);
    assert.equal(deltas.join(""), reply.text);
    assert.deepEqual(events[4]?.data, { type: "response.output_text.delta", sequence_number: 4, item_id: "msg_abc123_0", output_index: 0, content_index: 0, delta: reply.text, logprobs: [] });
    assert.deepEqual(events[8]?.data.item, { type: "function_call", id: "fc_abc123_1", call_id: "call_9", name: "weather", arguments: "", status: "in_progress" });
    assert.deepEqual(events[10]?.data, { type: "response.function_call_arguments.done", sequence_number: 10, item_id: "fc_abc123_1", output_index: 1, arguments: '{"city":"Oslo"}' });
  });

  it("ends a stream cut at the token limit with response.incomplete", () => {
    const events = parseSse(responseEvents(meta, { text: "It was", finishReason: "length" }, usage));
    assert.equal(events.at(-1)?.event, "response.incomplete");
    assert.deepEqual(events.at(-1)?.data.response, responseObject(meta, { text: "It was", finishReason: "length" }, usage));
  });

  it("reads back through the openai client's stream and its accumulating ResponseStream", async () => {
    const sse = responsesDialect.events(meta, reply, usage, { includeUsage: false }, reflect);
    const client = clientAnswering(sse, "text/event-stream");
    const types: string[] = [];
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of await client.responses.create({ model: "m", input: "Weather?", stream: true })) {
      types.push(event.type);
      if (event.type === "response.completed") completed = event.response;
    }
    assert.equal(types.length, 13);
    assert.equal(completed?.usage?.input_tokens, 120);
    const final = await client.responses.stream({ model: "m", input: "Weather?" }).finalResponse();
    assert.equal(final.id, meta.id);
    assert.equal(final.output_text, reply.text);
    const call = final.output.find((item) => item.type === "function_call");
    assert.deepEqual(call === undefined ? undefined : [call.call_id, call.name, call.arguments], ["call_9", "weather", '{"city":"Oslo"}']);
  });
});

describe("the Responses dialect: errors", () => {
  const error: GatewayError = { status: 422, message: "the answer failed its checks after 2 attempts", type: "invalid_request_error", param: null, code: "checks_failed", reflect: { ...reflect, passed: false } };

  it("writes errors in OpenAI's shape, with reflect on failed checks", () => {
    assert.deepEqual(responsesDialect.error(error), { error: { message: error.message, type: "invalid_request_error", param: null, code: "checks_failed" }, reflect: error.reflect });
    assert.deepEqual(responsesDialect.error({ status: 400, message: "input: must be …", type: "invalid_request_error", param: "input", code: null }), {
      error: { message: "input: must be …", type: "invalid_request_error", param: "input", code: null },
    });
  });

  it("ends a stream with an error event the openai client raises as an APIError", async () => {
    const sse = responsesDialect.keepAlive + responsesDialect.keepAlive + responsesDialect.errorEvent(error);
    const [event] = parseSse(responsesDialect.errorEvent(error));
    assert.deepEqual(event, {
      event: "error",
      data: {
        type: "error",
        sequence_number: 0,
        code: "checks_failed",
        message: error.message,
        param: null,
        error: { type: "invalid_request_error", code: "checks_failed", message: error.message, param: null },
        reflect: error.reflect,
      },
    });
    const client = clientAnswering(sse, "text/event-stream");
    await assert.rejects(
      async () => {
        for await (const _ of await client.responses.create({ model: "m", input: "x", stream: true })) assert.fail("no event precedes the error");
      },
      (e: unknown) => e instanceof APIError && e.code === "checks_failed" && e.type === "invalid_request_error" && e.message.includes("failed its checks"),
    );
    await assert.rejects(client.responses.stream({ model: "m", input: "x" }).finalResponse(), (e: unknown) => e instanceof APIError && e.code === "checks_failed");
  });
});

describe("the Responses dialect: an @openai/agents Agent", () => {
  /** A client whose requests the dialect parses and answers with `replies` in turn, in memory. */
  function dialectClient(replies: CompletionReply[], seen: ChatRequest[]): OpenAI {
    return new OpenAI({
      apiKey: "sk-test",
      baseURL: "http://gateway.test/v1",
      maxRetries: 0,
      fetch: async (_url, init) => {
        const chat = responsesDialect.parse(JSON.parse(String(init?.body)), bounds);
        seen.push(chat);
        const reply = replies[seen.length - 1] ?? assert.fail(`no reply scripted for request ${seen.length}`);
        const turnMeta = { ...meta, id: `resp_turn${seen.length}`, ...(chat.echo === undefined ? {} : { echo: chat.echo }) };
        if (chat.stream) return new Response(responsesDialect.events(turnMeta, reply, usage, chat), { headers: { "content-type": "text/event-stream" } });
        return Response.json(responsesDialect.answer(turnMeta, reply, usage));
      },
    });
  }

  const replies: CompletionReply[] = [
    { text: "", toolCalls: [{ id: "call_w1", name: "weather", arguments: '{"city":"Oslo"}' }], finishReason: "stop" },
    { text: "It is 4 C in Oslo.", finishReason: "stop" },
  ];

  for (const stream of [false, true]) {
    it(`runs a function tool and answers from its output${stream ? ", streamed" : ""}`, async () => {
      setTracingDisabled(true);
      const seen: ChatRequest[] = [];
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
      const agent = new Agent({ name: "forecaster", instructions: "Use the weather tool.", tools: [weather], model: new OpenAIResponsesModel(dialectClient(replies, seen), "fake") });
      const result = stream ? await run(agent, "Weather in Oslo?", { stream: true }) : await run(agent, "Weather in Oslo?");
      if (stream && "completed" in result) {
        for await (const _ of result.toStream()) {
          // drained
        }
        await result.completed;
      }
      assert.equal(result.finalOutput, "It is 4 C in Oslo.");
      assert.deepEqual(calls, ["Oslo"]);
      assert.equal(seen.length, 2);
      assert.deepEqual(seen.map((c) => c.stream), [stream, stream]);
      // The agent's tool became the tools check; its call and output came back as structured turns of the conversation.
      assert.deepEqual(seen[0]?.checks.tools?.map((t) => t.name), ["weather"]);
      assert.equal(seen[0]?.messages[0]?.content, "Use the weather tool.");
      assert.deepEqual(
        seen[1]?.messages.map((m) => m.role),
        ["system", "user", "assistant", "tool"],
      );
      assert.deepEqual(seen[1]?.messages[3], { role: "tool", toolCallId: "call_w1", content: "4 C" });
    });
  }
});
