import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import { RequestFieldError } from "../../errors.js";
import type { RequestBounds } from "../loop-request.js";
import { parseChatRequest } from "./chat.js";
import type { CompletionMeta, CompletionReply, ReflectExtension } from "../response.js";
import type { GatewayError } from "./dialect.js";
import { anthropicErrorType, anthropicMessage, maxStopSequences, messagesDialect, toolInput } from "./messages.js";

const bounds: RequestBounds = { maxTurns: 4, budget: { tokens: 1000, calls: 6, seconds: 30 }, defaultMaxTokens: 64 };
const base = { model: "claude-test", max_tokens: 32, messages: [{ role: "user", content: "hi" }] };
const meta: CompletionMeta = { id: "msg_abc", created: 1_700_000_000, model: "claude-test" };
const usage = { promptTokens: 20, completionTokens: 7, evaluatedPromptTokens: 12 };
const reflect: ReflectExtension = {
  attempts: 2,
  decision: "verified",
  rolled_back: false,
  stopped_by: "verified",
  selected: 2,
  passed: true,
  checks: [
    { turn: 1, source: "tools", pass: false, score: 0, feedback: "missing city" },
    { turn: 2, source: "tools", pass: true, score: 1, feedback: "ok" },
  ],
  usage_by_role: { attempt: { promptTokens: 15, completionTokens: 5, calls: 2 } } as unknown as ReflectExtension["usage_by_role"],
};
const weather = { name: "get_weather", description: "Weather of a city", input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };

const parse = (body: unknown) => messagesDialect.parse(body, bounds);

function refusal(body: unknown): RequestFieldError {
  try {
    parse(body);
  } catch (error) {
    assert.ok(error instanceof RequestFieldError, String(error));
    return error;
  }
  assert.fail("expected a RequestFieldError");
}

/** A server-sent event stream as `{ event, data }` pairs (the data parsed as JSON). */
function parseSse(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  assert.ok(text.endsWith("\n\n"), "a stream ends with a blank line");
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((frame) => {
      const lines = frame.split("\n");
      const event = lines.find((l) => l.startsWith("event: "))?.slice(7);
      const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
      assert.ok(event !== undefined, `a frame without an event: ${frame}`);
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

/** Accumulates Anthropic's stream events into the Message they describe, as a client that reads raw events does. */
function accumulate(text: string): Record<string, unknown> {
  const frames = parseSse(text);
  for (const { event, data } of frames) assert.equal(data.type, event, "each event's data names its own type");
  assert.deepEqual(
    frames.map((f) => f.event).filter((e) => !e.startsWith("content_block")),
    ["message_start", "ping", "message_delta", "message_stop"],
  );
  const message = structuredClone(frames[0]!.data.message) as Record<string, any>;
  const json: string[] = [];
  for (const { event, data } of frames) {
    const index = data.index as number;
    if (event === "content_block_start") {
      assert.equal(index, message.content.length, "blocks start in order");
      message.content.push(structuredClone(data.content_block));
      json.push("");
    } else if (event === "content_block_delta") {
      const delta = data.delta as Record<string, string>;
      if (delta.type === "text_delta") message.content[index].text += delta.text;
      else if (delta.type === "input_json_delta") json[index] = `${json[index] ?? ""}${delta.partial_json ?? ""}`;
      else assert.fail(`unexpected delta ${delta.type}`);
    } else if (event === "content_block_stop") {
      if (message.content[index].type === "tool_use") message.content[index].input = JSON.parse(json[index]!);
    } else if (event === "message_delta") {
      const delta = data.delta as Record<string, unknown>;
      message.stop_reason = delta.stop_reason;
      message.stop_sequence = delta.stop_sequence;
      for (const [key, value] of Object.entries(data.usage as Record<string, unknown>)) if (value !== null) message.usage[key] = value;
      if (data.reflect !== undefined) assert.deepEqual(data.reflect, message.reflect, "message_delta's reflect is message_start's");
    }
  }
  return message;
}

/** The official client over a fetch that answers every request with `respond` and records what it sent (no network). */
function sdkClient(respond: (body: Record<string, unknown>) => Response): { client: Anthropic; sent: Array<{ url: string; headers: Headers; body: Record<string, unknown> }> } {
  const sent: Array<{ url: string; headers: Headers; body: Record<string, unknown> }> = [];
  const fetch = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
    sent.push({ url: String(url), headers: new Headers(init?.headers), body });
    return respond(body);
  };
  return { client: new Anthropic({ apiKey: "gateway-key", baseURL: "http://gateway.test", fetch, maxRetries: 0 }), sent };
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
const sse = (text: string) => new Response(text, { headers: { "content-type": "text/event-stream" } });

describe("messages dialect: parse", () => {
  it("names its route, upstream path and id prefix", () => {
    assert.deepEqual([messagesDialect.name, messagesDialect.route, messagesDialect.upstreamPath, messagesDialect.idPrefix], ["messages", "/v1/messages", "/messages", "msg_"]);
  });

  it("maps Anthropic's fields onto the loop's request", () => {
    const parsed = parse({
      ...base,
      system: [{ type: "text", text: "Be brief. ", cache_control: { type: "ephemeral" } }, { type: "text", text: "Use tools." }],
      max_tokens: 40,
      temperature: 0.5,
      top_p: 0.9,
      top_k: null,
      stop_sequences: ["END", "STOP"],
      stream: true,
      metadata: { user_id: "u1" },
      service_tier: "auto",
      thinking: { type: "disabled" },
    });
    assert.deepEqual(parsed.messages, [
      { role: "system", content: "Be brief. Use tools." },
      { role: "user", content: "hi" },
    ]);
    // The user rides on the attempt's sampling; each model's upstream sends it only where its `send` names it.
    assert.deepEqual(parsed.sampling, { maxTokens: 40, temperature: 0.5, topP: 0.9, stop: ["END", "STOP"], user: "u1" });
    assert.equal(parsed.stream, true);
    assert.equal(parsed.includeUsage, true, "Anthropic's stream always carries usage");
    assert.deepEqual(parsed.checks, {});
    assert.equal(parsed.toolChoiceRequired, false);
    assert.equal(parsed.reflect, undefined);
    assert.equal(parse({ ...base, system: "Sys" }).messages[0]?.content, "Sys");
    assert.equal(parse({ ...base, system: "" }).messages.length, 1, "an empty system prompt adds no message");
  });

  it("reads tool use and tool results as the chat door reads the same conversation: structured turns", () => {
    const anthropic = {
      ...base,
      system: "Be brief.",
      messages: [
        { role: "user", content: [{ type: "text", text: "Weather in " }, { type: "text", text: "Paris?" }] },
        { role: "assistant", content: [{ type: "text", text: "Let me look." }, { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18 C" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_2", name: "get_weather", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "20 " }, { type: "text", text: "C" }] }, { type: "text", text: "Thanks." }] },
      ],
    };
    const chat = {
      model: "m",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: "Let me look.", tool_calls: [{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
        { role: "tool", tool_call_id: "toolu_1", content: "18 C" },
        { role: "assistant", content: null, tool_calls: [{ id: "toolu_2", type: "function", function: { name: "get_weather", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "toolu_2", content: "20 C" },
        { role: "user", content: "Thanks." },
      ],
    };
    const messages = parse(anthropic).messages;
    assert.deepEqual(messages, parseChatRequest(chat, bounds).messages);
    assert.deepEqual(messages[2], { role: "assistant", content: "Let me look.", toolCalls: [{ id: "toolu_1", name: "get_weather", arguments: '{"city":"Paris"}' }] });
    assert.deepEqual(messages[3], { role: "tool", toolCallId: "toolu_1", content: "18 C" });
  });

  it("says a failed tool result failed, and keeps block order within a user turn", () => {
    const messages = parse({
      ...base,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Before." },
            { type: "tool_result", tool_use_id: "t1", is_error: true, content: "no such city" },
            { type: "tool_result", tool_use_id: "t2" },
            { type: "text", text: "After." },
          ],
        },
      ],
    }).messages;
    assert.deepEqual(messages, [
      { role: "user", content: "Before." },
      { role: "tool", toolCallId: "t1", content: "no such city", isError: true },
      { role: "tool", toolCallId: "t2", content: "" },
      { role: "user", content: "After." },
    ]);
  });

  it("accepts a system turn among the messages, as the SDK's types allow", () => {
    const messages = parse({ ...base, messages: [{ role: "system", content: [{ type: "text", text: "Rules." }] }, { role: "user", content: "hi" }] }).messages;
    assert.deepEqual(messages, [{ role: "system", content: "Rules." }, { role: "user", content: "hi" }]);
  });

  it("offers custom tools to the model and checks its calls against them", () => {
    const parsed = parse({ ...base, tools: [weather, { name: "noop", input_schema: { type: "object" }, type: "custom", cache_control: { type: "ephemeral" }, strict: true }] });
    const tools = [
      { name: "get_weather", description: "Weather of a city", parameters: weather.input_schema },
      { name: "noop", parameters: { type: "object" }, strict: true },
    ];
    assert.deepEqual(parsed.sampling.tools, tools);
    assert.deepEqual(parsed.checks, { tools });
    assert.equal(parsed.toolChoiceRequired, false);
  });

  it("maps tool_choice as the chat door maps its own: any is required, tool forces one, none offers none", () => {
    const tools = [weather, { name: "noop", input_schema: { type: "object" } }];
    const auto = parse({ ...base, tools, tool_choice: { type: "auto", disable_parallel_tool_use: true } });
    assert.deepEqual([auto.sampling.tools?.length, auto.toolChoiceRequired, auto.checks.toolsRequired], [2, false, undefined]);
    const any = parse({ ...base, tools, tool_choice: { type: "any" } });
    assert.deepEqual([any.sampling.tools?.length, any.toolChoiceRequired, any.checks.toolsRequired], [2, true, true]);
    const forced = parse({ ...base, tools, tool_choice: { type: "tool", name: "noop" } });
    assert.deepEqual([forced.sampling.tools?.map((t) => t.name), forced.checks.tools?.map((t) => t.name), forced.toolChoiceRequired], [["noop"], ["noop"], true]);
    const none = parse({ ...base, tools, tool_choice: { type: "none" } });
    assert.deepEqual([none.sampling.tools, none.checks.tools, none.toolChoiceRequired], [undefined, undefined, false]);
    // The same choices through the chat door give the same requests.
    const chatTools = tools.map((t) => ({ type: "function", function: { name: t.name, ...("description" in t ? { description: t.description } : {}), parameters: t.input_schema } }));
    const chat = (tool_choice: unknown) => parseChatRequest({ model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 32, tools: chatTools, tool_choice }, bounds);
    for (const [mine, theirs] of [[auto, chat("auto")], [any, chat("required")], [forced, chat({ type: "function", function: { name: "noop" } })], [none, chat("none")]] as const) {
      assert.deepEqual([mine.sampling, mine.checks, mine.toolChoiceRequired], [theirs.sampling, theirs.checks, theirs.toolChoiceRequired]);
    }
  });

  it("checks structured output (output_config.format) against its schema and asks the upstream for JSON", () => {
    const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
    const parsed = parse({ ...base, output_config: { format: { type: "json_schema", schema } } });
    assert.deepEqual(parsed.checks, { schema: { schema } });
    assert.deepEqual(parsed.sampling.responseFormat, { type: "json", schema });
  });

  it("reads the reflect object as the chat door does", () => {
    const spec = { max_turns: 3, feedback: "binary", budget: { calls: 4 }, regex: "^ok", on_failure: "error" };
    const parsed = parse({ ...base, reflect: spec });
    const chat = parseChatRequest({ model: "m", messages: base.messages, max_tokens: 32, reflect: spec }, bounds);
    assert.deepEqual(parsed.reflect, chat.reflect);
    assert.deepEqual(parsed.checks, { regex: { pattern: "^ok" } });
    assert.equal(messagesDialect.asksForReflection({ ...base, reflect: {} }), true);
    assert.equal(messagesDialect.asksForReflection({ ...base, reflect: null }), false);
    assert.equal(messagesDialect.asksForReflection(base), false);
    assert.equal(refusal({ ...base, reflect: { max_turns: 9 } }).field, "reflect.max_turns");
  });

  it("refuses what it cannot honour with a 400 naming the field as the client wrote it", () => {
    const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } };
    const cases: Array<[unknown, string, RegExp?]> = [
      [[], "body"],
      [{ ...base, max_tokens: undefined }, "max_tokens", /required/],
      [{ ...base, max_tokens: 0 }, "max_tokens"],
      [{ ...base, max_tokens: 2.5 }, "max_tokens"],
      [{ ...base, model: undefined }, "model"],
      [{ ...base, messages: [] }, "messages"],
      [{ ...base, messages: [{ role: "tool", content: "x" }] }, "messages[0].role"],
      [{ ...base, messages: [{ role: "user", content: [] }] }, "messages[0].content"],
      [{ ...base, messages: [{ role: "user", content: 3 }] }, "messages[0].content"],
      [{ ...base, messages: [base.messages[0], { role: "user", content: [{ type: "text", text: "see" }, image] }] }, "messages[1].content[1]", /"image"/],
      [{ ...base, messages: [{ role: "user", content: [{ type: "document", source: {} }] }] }, "messages[0].content[0]", /"document"/],
      [{ ...base, messages: [{ role: "user", content: [{ type: "thinking", thinking: "hm", signature: "s" }] }] }, "messages[0].content[0]", /"thinking"/],
      [{ ...base, messages: [{ role: "assistant", content: [{ type: "server_tool_use", id: "s", name: "web_search", input: {} }] }] }, "messages[0].content[0]", /"server_tool_use"/],
      [{ ...base, messages: [{ role: "user", content: [{ type: "text" }] }] }, "messages[0].content[0].text"],
      [{ ...base, messages: [{ role: "user", content: ["hi"] }] }, "messages[0].content[0]"],
      [{ ...base, messages: [{ role: "user", content: [{ type: "tool_use", id: "t", name: "n", input: {} }] }] }, "messages[0].content[0]", /assistant turn/],
      [{ ...base, messages: [{ role: "assistant", content: [{ type: "tool_result", tool_use_id: "t" }] }] }, "messages[0].content[0]", /user turn/],
      [{ ...base, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "n", input: [1] }] }] }, "messages[0].content[0].input"],
      [{ ...base, messages: [{ role: "assistant", content: [{ type: "tool_use", name: "n", input: {} }] }] }, "messages[0].content[0].id"],
      [{ ...base, messages: [{ role: "user", content: [{ type: "tool_result", content: "x" }] }] }, "messages[0].content[0].tool_use_id"],
      [{ ...base, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [image] }] }] }, "messages[0].content[0].content[0]", /"image"/],
      [{ ...base, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", is_error: "yes" }] }] }, "messages[0].content[0].is_error"],
      [{ ...base, system: [image] }, "system[0]"],
      [{ ...base, system: 5 }, "system"],
      [{ ...base, temperature: 1.5 }, "temperature"],
      [{ ...base, top_p: 2 }, "top_p"],
      [{ ...base, top_k: 40 }, "top_k", /not honoured/],
      [{ ...base, stream: "yes" }, "stream"],
      [{ ...base, stop_sequences: "END" }, "stop_sequences"],
      [{ ...base, stop_sequences: [""] }, "stop_sequences"],
      [{ ...base, stop_sequences: Array.from({ length: maxStopSequences + 1 }, (_, i) => `s${i}`) }, "stop_sequences", new RegExp(`at most ${maxStopSequences}`)],
      [{ ...base, thinking: "x" }, "thinking"],
      [{ ...base, thinking: [] }, "thinking"],
      [{ ...base, thinking: { type: "sometimes" } }, "thinking.type"],
      [{ ...base, thinking: { type: "enabled" } }, "thinking.budget_tokens", /required/],
      [{ ...base, thinking: { type: "enabled", budget_tokens: "big" } }, "thinking.budget_tokens"],
      [{ ...base, thinking: { type: "adaptive", budget_tokens: 2048 } }, "thinking.budget_tokens", /only with/],
      [{ ...base, thinking: { type: "adaptive", depth: 3 } }, "thinking.depth"],
      [{ ...base, context_management: "x" }, "context_management"],
      [{ ...base, context_management: { edits: "all" } }, "context_management.edits"],
      [{ ...base, metadata: "u" }, "metadata"],
      [{ ...base, metadata: { user_id: 5 } }, "metadata.user_id"],
      [{ ...base, metadata: { user_id: "u".repeat(257) } }, "metadata.user_id"],
      [{ ...base, speed: "fast" }, "speed"],
      [{ ...base, container: "c1" }, "container"],
      [{ ...base, inference_geo: "eu" }, "inference_geo"],
      [{ ...base, frequency_penalty: 0.5 }, "frequency_penalty"],
      [{ ...base, tools: {} }, "tools"],
      [{ ...base, tools: [weather, { type: "web_search_20250305", name: "web_search" }], tool_choice: { type: "tool", name: "web_search" } }, "tool_choice", /server tool.*auto/],
      [{ ...base, tools: [{ type: "bash_20250124", name: "bash" }], tool_choice: { type: "any" } }, "tool_choice", /every tool offered/],
      [{ ...base, tools: [{ type: "bash 2025", name: "bash" }] }, "tools[0].type"],
      [{ ...base, tools: [{ type: "bash_20250124", name: "bash\r\nx-evil: 1" }] }, "tools[0].name"],
      [{ ...base, tools: [{ name: "bad name", input_schema: { type: "object" } }] }, "tools[0].name"],
      [{ ...base, tools: [weather, weather] }, "tools[1].name", /unique/],
      [{ ...base, tools: [{ name: "x" }] }, "tools[0].input_schema"],
      [{ ...base, tools: [{ ...weather, input_examples: [{ city: "Oslo" }] }] }, "tools[0].input_examples"],
      [{ ...base, tools: [{ ...weather, description: 4 }] }, "tools[0].description"],
      [{ ...base, tools: [weather], tool_choice: "auto" }, "tool_choice"],
      [{ ...base, tools: [weather], tool_choice: { type: "required" } }, "tool_choice"],
      [{ ...base, tools: [weather], tool_choice: { type: "tool" } }, "tool_choice.name"],
      [{ ...base, tools: [weather], tool_choice: { type: "tool", name: "other" } }, "tool_choice.name"],
      [{ ...base, tools: [weather], tool_choice: { type: "auto", name: "get_weather" } }, "tool_choice.name"],
      [{ ...base, tools: [weather], tool_choice: { type: "auto", parallel: false } }, "tool_choice.parallel"],
      [{ ...base, tools: [weather], tool_choice: { type: "any", disable_parallel_tool_use: "no" } }, "tool_choice.disable_parallel_tool_use"],
      [{ ...base, tool_choice: { type: "any" } }, "tool_choice", /needs tools/],
      [{ ...base, output_config: { format: { type: "json_object" } } }, "output_config.format"],
      [{ ...base, output_config: { format: { type: "json_schema", schema: "x" } } }, "output_config.format.schema"],
      [{ ...base, output_config: { effort: "extreme" } }, "output_config.effort"],
      [{ ...base, output_config: { effort: 3 } }, "output_config.effort"],
      [{ ...base, output_config: { verbosity: "low" } }, "output_config.verbosity"],
      [{ ...base, reflect: 1 }, "reflect"],
      [{ ...base, reflect: { bogus: 1 } }, "reflect.bogus"],
    ];
    for (const [body, field, message] of cases) {
      const error = refusal(body);
      assert.equal(error.field, field, `${JSON.stringify(body).slice(0, 160)} → ${error.message}`);
      if (message !== undefined) assert.match(error.message, message);
    }
  });
});

describe("messages dialect: answer", () => {
  const text: CompletionReply = { text: "It is 18 C.", finishReason: "stop" };
  const called: CompletionReply = {
    text: "",
    finishReason: "stop",
    toolCalls: [
      { id: "call_1", name: "get_weather", arguments: '{"city": "Paris"}' },
      { id: "", name: "noop", arguments: "" },
      { id: "call_3", name: "get_weather", arguments: '{"city": "Par' },
      { id: "call_4", name: "get_weather", arguments: "[1]" },
    ],
  };

  it("answers a text reply as Anthropic's Message, usage split into evaluated and cached input", () => {
    assert.deepEqual(messagesDialect.answer(meta, text, usage), {
      id: "msg_abc",
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: [{ type: "text", text: "It is 18 C.", citations: null }],
      stop_reason: "end_turn",
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: {
        input_tokens: 12,
        output_tokens: 7,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 8,
        cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
        inference_geo: null,
        output_tokens_details: null,
        server_tool_use: null,
        service_tier: null,
        speed: null,
      },
    });
    const plain = messagesDialect.answer(meta, text, { promptTokens: 20, completionTokens: 7 }).usage as Record<string, number>;
    assert.deepEqual([plain.input_tokens, plain.cache_read_input_tokens], [20, 0], "no cache figure: every prompt token was evaluated");
  });

  it("answers tool calls as tool_use blocks, keeping the call's id and the arguments the model wrote", () => {
    const body = messagesDialect.answer(meta, called, usage, reflect);
    assert.equal(body.stop_reason, "tool_use");
    assert.deepEqual(body.content, [
      { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" }, caller: { type: "direct" } },
      { type: "tool_use", id: "toolu_abc_1", name: "noop", input: {}, caller: { type: "direct" } },
      { type: "tool_use", id: "call_3", name: "get_weather", input: '{"city": "Par', caller: { type: "direct" } },
      { type: "tool_use", id: "call_4", name: "get_weather", input: "[1]", caller: { type: "direct" } },
    ]);
    assert.deepEqual(body.reflect, reflect);
    const withText = messagesDialect.answer(meta, { ...called, text: "Checking.", toolCalls: called.toolCalls!.slice(0, 1) }, usage);
    assert.deepEqual((withText.content as Array<{ type: string }>).map((b) => b.type), ["text", "tool_use"]);
  });

  it("says max_tokens when the reply was cut, and keeps an empty text block when nothing else came", () => {
    assert.equal(messagesDialect.answer(meta, { text: "It is", finishReason: "length" }, usage).stop_reason, "max_tokens");
    assert.deepEqual(messagesDialect.answer(meta, { text: "", finishReason: "stop" }, usage).content, [{ type: "text", text: "", citations: null }]);
  });

  it("reads a call's arguments as an object, or keeps the text the model wrote", () => {
    assert.deepEqual(toolInput('{"a":[1,2]}'), { a: [1, 2] });
    assert.deepEqual(toolInput("  "), {});
    assert.equal(toolInput("null"), "null");
    assert.equal(toolInput("{oops"), "{oops");
  });

  it("reads its own answer back as the same assistant turn when a client sends it with the conversation", () => {
    const body = messagesDialect.answer(meta, { ...called, text: "Checking." }, usage);
    const sentBack = parse({ ...base, messages: [base.messages[0], { role: "assistant", content: body.content }] }).messages[1];
    const calls = called.toolCalls!.map((c, i) => ({ ...c, id: i === 1 ? "toolu_abc_1" : c.id, arguments: i === 0 ? '{"city":"Paris"}' : i === 1 ? "{}" : c.arguments }));
    assert.deepEqual(sentBack, { role: "assistant", content: "Checking.", toolCalls: calls });
  });

  it("is the SDK's Message type (a compile-time check: drift from the official shape fails the build)", () => {
    const typed: Anthropic.Message = anthropicMessage(meta, called, usage, reflect);
    const first = typed.content[0];
    assert.ok(first?.type === "tool_use");
    assert.equal(first.name, "get_weather");
    const usageTyped: Anthropic.Usage = typed.usage;
    assert.equal(usageTyped.output_tokens, 7);
  });
});

describe("messages dialect: events", () => {
  const replies: Array<[string, CompletionReply]> = [
    ["text", { text: "It is 18 C.\nNice.", finishReason: "stop" }],
    ["empty", { text: "", finishReason: "stop" }],
    ["cut", { text: "It is", finishReason: "length" }],
    ["tools", { text: "Checking.", finishReason: "stop", toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }, { id: "", name: "noop", arguments: "not json" }] }],
  ];

  it("streams a settled answer as Anthropic's event sequence, which accumulates back to the answer", () => {
    for (const [name, reply] of replies) {
      for (const extension of [undefined, reflect]) {
        const text = messagesDialect.events(meta, reply, usage, { includeUsage: true }, extension);
        assert.deepEqual(accumulate(text), messagesDialect.answer(meta, reply, usage, extension), name);
      }
    }
  });

  it("opens with the message and its input usage, ends with the stop reason and output usage", () => {
    const frames = parseSse(messagesDialect.events(meta, replies[3]![1], usage, { includeUsage: true }, reflect));
    const start = frames[0]!.data.message as Record<string, any>;
    assert.deepEqual([start.content, start.stop_reason, start.usage.input_tokens, start.usage.output_tokens], [[], null, 12, 0]);
    const delta = frames.find((f) => f.event === "message_delta")!.data;
    assert.deepEqual(delta.delta, { stop_reason: "tool_use", stop_sequence: null, stop_details: null, container: null });
    assert.equal((delta.usage as Record<string, number>).output_tokens, 7);
    assert.deepEqual(delta.reflect, reflect);
    const starts = frames.filter((f) => f.event === "content_block_start").map((f) => f.data.content_block);
    assert.deepEqual(starts[1], { type: "tool_use", id: "call_1", name: "get_weather", caller: { type: "direct" }, input: {} });
  });

  it("keeps a stream alive with Anthropic's ping event", () => {
    assert.deepEqual(parseSse(messagesDialect.keepAlive), [{ event: "ping", data: { type: "ping" } }]);
  });
});

describe("messages dialect: errors", () => {
  const error = (status: number, extra: Partial<GatewayError> = {}): GatewayError => ({ status, message: `failed with ${status}`, type: "invalid_request_error", param: null, code: null, ...extra });

  it("maps the gateway's statuses onto Anthropic's error types", () => {
    const table: Array<[number, string]> = [
      [400, "invalid_request_error"],
      [401, "authentication_error"],
      [403, "permission_error"],
      [404, "not_found_error"],
      [409, "invalid_request_error"],
      [413, "request_too_large"],
      [415, "invalid_request_error"],
      [422, "invalid_request_error"],
      [429, "rate_limit_error"],
      [500, "api_error"],
      [502, "api_error"],
      [503, "overloaded_error"],
      [504, "timeout_error"],
      [529, "overloaded_error"],
    ];
    assert.deepEqual(table.map(([status]) => [status, anthropicErrorType(status)]), table);
  });

  it("writes an error in Anthropic's shape, the field and the gateway's code beside the message", () => {
    assert.deepEqual(messagesDialect.error(error(400, { param: "max_tokens", code: null })), {
      type: "error",
      error: { type: "invalid_request_error", message: "failed with 400", param: "max_tokens" },
      request_id: null,
    });
    const failed = messagesDialect.error(error(422, { code: "checks_failed", reflect: { ...reflect, decision: "failed", passed: false } }));
    assert.deepEqual(failed.error, { type: "invalid_request_error", message: "failed with 422", code: "checks_failed" });
    assert.equal((failed.reflect as ReflectExtension).passed, false);
    assert.deepEqual(parseSse(messagesDialect.errorEvent(error(429))), [{ event: "error", data: messagesDialect.error(error(429)) }]);
  });
});

describe("messages dialect: the official client reads what it writes", () => {
  const request = { model: "claude-test", max_tokens: 32, messages: [{ role: "user" as const, content: "Weather in Paris?" }], tools: [weather as Anthropic.Tool] };
  const reply: CompletionReply = { text: "Checking.", finishReason: "stop", toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }] };

  it("sends a body the dialect parses, and reads the answer as a Message", async () => {
    const { client, sent } = sdkClient((body) => {
      const parsed = messagesDialect.parse(body, bounds);
      assert.deepEqual(parsed.checks.tools?.map((t) => t.name), ["get_weather"]);
      return json(messagesDialect.answer(meta, reply, usage, reflect));
    });
    const message = await client.messages.create(request);
    assert.equal(sent[0]?.url, "http://gateway.test/v1/messages");
    // This version of the SDK sends its apiKey as `Authorization: Bearer`; older ones (and the Python client) as `x-api-key`.
    const headers = sent[0]!.headers;
    assert.equal(headers.get("x-api-key") ?? headers.get("authorization")?.replace(/^Bearer /u, ""), "gateway-key");
    assert.ok(sent[0]?.headers.get("anthropic-version"));
    assert.equal(message.stop_reason, "tool_use");
    assert.deepEqual(message.content.map((b) => (b.type === "tool_use" ? b.input : b.type === "text" ? b.text : b.type)), ["Checking.", { city: "Paris" }]);
    assert.deepEqual((message as unknown as { reflect: ReflectExtension }).reflect, reflect);
  });

  it("accumulates the stream into the answer, reflect included, through messages.stream", async () => {
    const { client } = sdkClient(() => sse(messagesDialect.events(meta, reply, usage, { includeUsage: true }, reflect)));
    const stream = client.messages.stream(request);
    const texts: string[] = [];
    stream.on("text", (delta) => texts.push(delta));
    const final = await stream.finalMessage();
    assert.deepEqual(texts, ["Checking."]);
    // The SDK adds `parsed_output` (null: the request asked for no output format).
    const { parsed_output: parsed, ...message } = JSON.parse(JSON.stringify(final)) as Record<string, unknown>;
    assert.equal(parsed, null);
    assert.deepEqual(message, messagesDialect.answer(meta, reply, usage, reflect));
  });

  it("yields every raw event of stream: true, the ping left out by the SDK", async () => {
    const { client } = sdkClient(() => sse(messagesDialect.events(meta, reply, usage, { includeUsage: true }, reflect)));
    const events: string[] = [];
    for await (const event of await client.messages.create({ ...request, stream: true })) events.push(event.type);
    assert.deepEqual(events, ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
  });

  it("raises an error answer as its APIError class, with the body's type, code and reflect", async () => {
    const failed: GatewayError = { status: 422, message: "the answer failed its checks", type: "invalid_request_error", param: null, code: "checks_failed", reflect: { ...reflect, decision: "failed", passed: false } };
    const { client } = sdkClient(() => json(messagesDialect.error(failed), 422));
    const error = await client.messages.create(request).then(
      () => assert.fail("expected an error"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof Anthropic.UnprocessableEntityError, String(error));
    assert.equal(error.type, "invalid_request_error");
    const body = error.error as { error: { code: string }; reflect: ReflectExtension };
    assert.equal(body.error.code, "checks_failed");
    assert.equal(body.reflect.passed, false);
    const limited = sdkClient(() => json(messagesDialect.error({ ...failed, status: 429, code: "queue_full", reflect: undefined as never }), 429));
    await assert.rejects(limited.client.messages.create(request), (e: unknown) => e instanceof Anthropic.RateLimitError && e.type === "rate_limit_error");
  });

  it("raises an error event in a stream already under way, after the keep-alive pings", async () => {
    const late: GatewayError = { status: 502, message: "the upstream failed", type: "server_error", param: null, code: "upstream_failed" };
    const { client } = sdkClient(() => sse(messagesDialect.keepAlive + messagesDialect.keepAlive + messagesDialect.errorEvent(late)));
    await assert.rejects(client.messages.stream(request).finalMessage(), (e: unknown) => e instanceof Anthropic.APIError && e.type === "api_error" && /the upstream failed/.test(e.message));
  });
});
