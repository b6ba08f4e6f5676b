import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { replyText } from "../loops/reflect-retry.js";
import type { ChatMessage } from "./language-model.js";
import { MAX_PROMPTED_CALLS, promptedReplyText, readToolCallBlocks, readUntaggedCalls, toolsSystemPrompt, toolTurnsAsText, withToolsPrompt } from "./prompted-tools.js";

const weather = { name: "get_weather", description: "Current weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } };

describe("toolsSystemPrompt / withToolsPrompt", () => {
  it("lists each function's name, description and parameter schema as JSON, and the call format", () => {
    const prompt = toolsSystemPrompt([weather, { name: "now" }]);
    assert.ok(prompt.includes(`<tools>[${JSON.stringify(weather)}, {"name":"now","description":"","parameters":{"type":"object","properties":{}}}]</tools>`));
    assert.match(prompt, /<tool_call>\[\{"name": "function_name", "arguments": \{"argument_name": "value"\}\}\]<\/tool_call>/);
    assert.match(prompt, /answer in plain text instead/);
  });

  it("puts the tools first in the system message, keeping the caller's own system text and the turns", () => {
    const user = { role: "user" as const, content: "Weather in Paris?" };
    const plain = withToolsPrompt([user], [weather]);
    assert.equal(plain.length, 2);
    assert.equal(plain[0]?.role, "system");
    assert.deepEqual(plain[1], user);
    const merged = withToolsPrompt([{ role: "system", content: "Be brief." }, user], [weather]);
    assert.equal(merged.length, 2);
    assert.match(merged[0]?.content ?? "", /<\/tools>[^]*\n\nBe brief\.$/);
  });
});

describe("readToolCallBlocks", () => {
  it("reads SmolLM2's form: a JSON list of calls in one block, leaving the rest as text", () => {
    const read = readToolCallBlocks('Let me check.\n<tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "now", "arguments": {}}]</tool_call>');
    assert.deepEqual(read, {
      text: "Let me check.",
      toolCalls: [
        { id: "call_0", name: "get_weather", arguments: '{"city":"Paris"}' },
        { id: "call_1", name: "now", arguments: "{}" },
      ],
      problems: [],
    });
  });

  it("reads the Hermes form (one object per block), `parameters`, a fenced block, and arguments given as a JSON string", () => {
    const read = readToolCallBlocks('<tool_call>\n{"name": "a", "parameters": {"x": 1}}\n</tool_call>\n<tool_call>```json\n{"name": "b"}\n```</tool_call><tool_call>{"name": "c", "arguments": "{\\"y\\": 2}"}</tool_call>');
    assert.deepEqual(read.toolCalls, [
      { id: "call_0", name: "a", arguments: '{"x":1}' },
      { id: "call_1", name: "b", arguments: "{}" },
      { id: "call_2", name: "c", arguments: '{"y": 2}' },
    ]);
    assert.equal(read.text, "");
  });

  it("reads back what the loop writes into a conversation (replyText)", () => {
    const calls = [{ id: "x", name: "get_weather", arguments: '{"city": "Oslo"}' }];
    assert.deepEqual(readToolCallBlocks(replyText({ output: "", toolCalls: calls })).toolCalls, [{ ...calls[0], id: "call_0" }]);
  });

  it("leaves blocks it cannot read in the text and says why", () => {
    const cases: Array<[string, RegExp]> = [
      ['<tool_call>{"name": "a", "arguments": {"x": 1</tool_call>', /is not JSON: line 1, column \d+/],
      ['<tool_call>{"arguments": {}}</tool_call>', /has no "name" string/],
      ['<tool_call>[{"name": "a"}, 3]</tool_call>', /call 1 of a <tool_call> list is not an object/],
      ['<tool_call>{"name": "a", "arguments": [1]}</tool_call>', /"arguments" of a <tool_call> block must be an object, not an array/],
      ['<tool_call>{"name": "a", "arguments": {}}', /never closed/],
    ];
    for (const [reply, words] of cases) {
      const read = readToolCallBlocks(`Hi ${reply}`);
      assert.deepEqual(read.toolCalls, [], reply);
      assert.equal(read.text, `Hi ${reply}`);
      assert.match(read.problems[0] ?? "", words);
    }
  });

  it("keeps a good block and reports a bad one beside it", () => {
    const read = readToolCallBlocks('<tool_call>{"name": "a"}</tool_call> and <tool_call>oops</tool_call>');
    assert.deepEqual(read.toolCalls.map((c) => c.name), ["a"]);
    assert.equal(read.text, "and <tool_call>oops</tool_call>");
    assert.equal(read.problems.length, 1);
  });

  it("leaves a reply without blocks untouched, and stays linear on hostile text", () => {
    assert.deepEqual(readToolCallBlocks("  plain answer  "), { text: "  plain answer  ", toolCalls: [], problems: [] });
    const t0 = performance.now();
    const open = readToolCallBlocks("<tool_call>".repeat(50_000));
    assert.equal(open.toolCalls.length, 0);
    const many = readToolCallBlocks(`<tool_call>[${Array(MAX_PROMPTED_CALLS + 1).fill('{"name": "a"}').join(",")}]</tool_call>`);
    assert.equal(many.toolCalls.length, 0);
    assert.match(many.problems[0] ?? "", /more than 64 tool calls/);
    const deep = readToolCallBlocks(`<tool_call>${"[".repeat(100_000)}</tool_call>`);
    assert.match(deep.problems[0] ?? "", /nested more than 256 deep/);
    assert.ok(performance.now() - t0 < 5000);
  });
});

describe("promptedReplyText", () => {
  it("writes calls as the tools prompt asks (one block, a JSON list, object arguments), which the reader reads back to the same calls", () => {
    const calls = [
      { id: "call_0", name: "get_weather", arguments: '{"city":"Paris"}' },
      { id: "call_1", name: "get_weather", arguments: '{"city":"Rome"}' },
    ];
    const text = promptedReplyText("Checking both.", calls);
    assert.equal(text, 'Checking both.\n<tool_call>[{"name":"get_weather","arguments":{"city":"Paris"}},{"name":"get_weather","arguments":{"city":"Rome"}}]</tool_call>');
    assert.deepEqual(readToolCallBlocks(text), { text: "Checking both.", toolCalls: calls, problems: [] });
    // Arguments that are not a JSON object stay the string the model wrote; the reader keeps a string as it is.
    const odd = promptedReplyText("", [{ id: "call_0", name: "now", arguments: "soon" }]);
    assert.equal(odd, '<tool_call>[{"name":"now","arguments":"soon"}]</tool_call>');
    assert.deepEqual(readToolCallBlocks(odd).toolCalls, [{ id: "call_0", name: "now", arguments: "soon" }]);
    assert.equal(promptedReplyText("Just text.", []), "Just text.");
  });
});

describe("toolTurnsAsText: tool turns for a backend without a tool API", () => {
  const calls = [{ id: "call_a", name: "get_weather", arguments: '{"city":"Oslo"}' }];
  const conversation: ChatMessage[] = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Weather in Oslo?" },
    { role: "assistant", content: "Looking.", toolCalls: calls },
    { role: "tool", toolCallId: "call_a", content: "4 C" },
    { role: "tool", toolCallId: "call_b", content: "no such city", isError: true },
  ];

  it("writes calls after the text as <tool_call> blocks and results as <tool_response> user turns", () => {
    assert.deepEqual(toolTurnsAsText(conversation), [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in Oslo?" },
      { role: "assistant", content: 'Looking.\n<tool_call>{"name":"get_weather","arguments":"{\\"city\\":\\"Oslo\\"}"}</tool_call>' },
      { role: "user", content: '<tool_response id="call_a">\n4 C\n</tool_response>' },
      { role: "user", content: '<tool_response id="call_b" is_error="true">\nno such city\n</tool_response>' },
    ]);
  });

  it("is the form the loop writes its own attempts back in, and reads back to the same calls", () => {
    const [, , assistant] = toolTurnsAsText(conversation);
    assert.equal(assistant?.content, replyText({ output: "Looking.", toolCalls: calls }));
    const read = readToolCallBlocks(assistant?.content ?? "");
    assert.deepEqual([read.text, read.toolCalls.map((c) => [c.name, c.arguments])], ["Looking.", [["get_weather", '{"city":"Oslo"}']]]);
  });

  it("leaves text-only turns as they are, and a call-only turn as its blocks", () => {
    assert.deepEqual(toolTurnsAsText([{ role: "user", content: "hi" }]), [{ role: "user", content: "hi" }]);
    assert.equal(toolTurnsAsText([{ role: "assistant", content: "", toolCalls: calls }])[0]?.content, '<tool_call>{"name":"get_weather","arguments":"{\\"city\\":\\"Oslo\\"}"}</tool_call>');
  });

  it("withToolsPrompt frames the tool turns too, and asks in the prompt for a forced tool", () => {
    const framed = withToolsPrompt(conversation, [weather], { type: "tool", name: "get_weather" });
    assert.ok(framed.every((m) => m.role !== ("tool" as string)));
    assert.match(framed[0]?.content ?? "", /You must call at least one of these functions/u);
    assert.match(framed[0]?.content ?? "", /\n\nBe brief\.$/u);
    assert.match(withToolsPrompt([{ role: "user", content: "hi" }], [weather], { type: "required" })[0]?.content ?? "", /You must call at least one of these functions/u);
    assert.doesNotMatch(withToolsPrompt([{ role: "user", content: "hi" }], [weather])[0]?.content ?? "", /You must call/u);
  });
});

describe("readUntaggedCalls", () => {
  it("reads a reply that is only calls without the tags — fenced or bare, one or a list — when every name is offered", () => {
    const fenced = '```json\n[\n  {"name": "cd", "arguments": {"folder": "workspace"}},\n  {"name": "ls", "arguments": {}}\n]\n```';
    assert.deepEqual(readUntaggedCalls(fenced, ["cd", "ls"])?.toolCalls, [
      { id: "call_0", name: "cd", arguments: '{"folder":"workspace"}' },
      { id: "call_1", name: "ls", arguments: "{}" },
    ]);
    assert.deepEqual(readUntaggedCalls(' {"name": "pwd"} ', ["pwd"])?.toolCalls, [{ id: "call_0", name: "pwd", arguments: "{}" }]);
  });

  it("reads a name not offered as a call only in the exact call form, so the caller can answer it with an error", () => {
    assert.deepEqual(readUntaggedCalls('```json\n[{"name": "move", "arguments": {"source": "a.pdf"}}]\n```', ["mv"])?.toolCalls, [
      { id: "call_0", name: "move", arguments: '{"source":"a.pdf"}' },
    ]);
    // Another shape with a name not offered is an answer that happens to be JSON.
    assert.equal(readUntaggedCalls('{"name": "Alice", "age": 30}', ["ls"]), undefined);
    assert.equal(readUntaggedCalls('{"name": "Alice"}', ["ls"]), undefined);
    assert.equal(readUntaggedCalls('[{"name": "rm", "arguments": {}}, {"name": "x", "arguments": {}, "id": 1}]', ["ls"]), undefined);
  });

  it("leaves as text: a name not offered in another shape, text around the JSON, bad JSON, an answer that is merely JSON", () => {
    assert.equal(readUntaggedCalls('[{"name": "rm", "parameters": {}}]', ["ls"]), undefined);
    assert.equal(readUntaggedCalls('Here: {"name": "ls", "arguments": {}}', ["ls"]), undefined);
    assert.equal(readUntaggedCalls('```json\n{"name": "ls", "arguments": \n```', ["ls"]), undefined);
    assert.equal(readUntaggedCalls('{"city": "Oslo"}', ["ls"]), undefined);
    assert.equal(readUntaggedCalls("[]", ["ls"]), undefined);
  });
});
