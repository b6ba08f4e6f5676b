import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RequestFieldError } from "../../errors.js";
import type { ToolCall, ToolDefinition } from "../../models/language-model.js";
import { toolCallsCheck } from "./tool-calls.js";

const tools: ToolDefinition[] = [
  {
    name: "get_weather",
    description: "Current weather in a city",
    parameters: { type: "object", properties: { city: { type: "string", minLength: 1 }, unit: { enum: ["celsius", "fahrenheit"] } }, required: ["city"], additionalProperties: false },
  },
  { name: "now", description: "The time" },
];
const call = (name: string, args: string, id = "call_0"): ToolCall => ({ id, name, arguments: args });
const run = async (calls: ToolCall[] | undefined, text = "", options = {}) => await toolCallsCheck(tools, options).run({ text, ...(calls === undefined ? {} : { toolCalls: calls }) });

describe("toolCallsCheck", () => {
  it("passes calls that name offered functions with valid arguments", async () => {
    const result = await run([call("get_weather", '{"city": "Paris", "unit": "celsius"}'), call("now", "{}", "call_1")]);
    assert.deepEqual(result, { source: "tools", pass: true, score: 1, feedback: "All 2 tool calls name an offered function with valid arguments." });
  });

  it("passes a text answer when no call is forced, and fails it with words when one is", async () => {
    assert.equal((await run(undefined, "It is sunny.")).pass, true);
    assert.equal((await run([], "It is sunny.")).pass, true);
    const forced = await run(undefined, "It is sunny.", { required: true });
    assert.equal(forced.pass, false);
    assert.equal(forced.feedback, 'A tool call was required, but the reply made none. Call one of the offered functions: "get_weather", "now".');
  });

  it("names the call index, the function, the JSONPath and the rule; scores the share of good calls", async () => {
    const result = await run([call("get_weather", '{"city": "Paris"}'), call("get_weather", '{"city": "", "unit": "kelvin", "when": 1}', "call_1")]);
    assert.equal(result.pass, false);
    assert.equal(result.score, 0.5);
    assert.match(result.feedback, /^tool call 1 \(get_weather\): its arguments do not match the parameters \(3 violations\):$/m);
    assert.match(result.feedback, /^ {2}\$: must NOT have additional property 'when' \(additionalProperties\)$/m);
    assert.match(result.feedback, /^ {2}\$\.city: must NOT have fewer than 1 characters \(minLength\)$/m);
    assert.match(result.feedback, /^ {2}\$\.unit: must be one of "celsius", "fahrenheit" \(enum\)$/m);
    assert.doesNotMatch(result.feedback, /tool call 0/);
  });

  it("fails an unknown function, arguments that are not JSON or not an object, and extra arguments to a function without parameters", async () => {
    const result = await run([
      call("get_wether", '{"city": "Paris"}'),
      call("get_weather", "{city: Paris}", "b"),
      call("get_weather", '["Paris"]', "c"),
      call("now", '{"tz": "UTC"}', "d"),
      call("get_weather", "", "e"),
    ]);
    assert.equal(result.pass, false);
    assert.equal(result.score, 0);
    assert.match(result.feedback, /^tool call 0 \(get_wether\): no function of that name is offered \(offered: "get_weather", "now"\)$/m);
    assert.match(result.feedback, /^tool call 1 \(get_weather\): its arguments are not JSON: line 1, column 2: expected a key in double quotes/m);
    assert.match(result.feedback, /^tool call 2 \(get_weather\): its arguments must be a JSON object, not an array$/m);
    assert.match(result.feedback, /^tool call 3 \(now\): .*\n {2}\$: must NOT have additional property 'tz'/m);
    assert.match(result.feedback, /^tool call 4 \(get_weather\): .*\n {2}\$: must have required property 'city' \(required\)/m);
  });

  it("treats __proto__ in arguments as plain data: no pollution, and refused where extra keys are", async () => {
    const result = await run([call("get_weather", '{"city": "Paris", "__proto__": {"polluted": true}}')]);
    assert.equal(result.pass, false);
    assert.match(result.feedback, /must NOT have additional property '__proto__'/);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
    const open = toolCallsCheck([{ name: "f", parameters: { type: "object" } }]);
    assert.equal((await open.run({ text: "", toolCalls: [call("f", '{"__proto__": {"polluted": true}, "constructor": 1}')] })).pass, true);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  });

  it("stays bounded on hostile calls: deep nesting, a 1 MB argument, a thousand calls", async () => {
    const t0 = performance.now();
    const deep = await run([call("get_weather", "[".repeat(100_000))]);
    assert.match(deep.feedback, /nested more than 256 deep/);
    assert.equal((await run([call("get_weather", JSON.stringify({ city: "x".repeat(1_000_000) }))])).pass, true);
    const many = await run(Array.from({ length: 64 }, (_, i) => call("nope", "{}", `c${i}`)));
    assert.equal(many.score, 0);
    assert.match(many.feedback, /… and 59 more$/);
    // Past the calls it reads (64 by default), a reply cannot be judged, and the feedback names the limit.
    const tooMany = await run(Array.from({ length: 1000 }, (_, i) => call("get_weather", '{"city": "Paris"}', `c${i}`)));
    assert.equal(tooMany.pass, null);
    assert.match(tooMany.feedback, /made 1000 tool calls; the tools check reads at most 64 \(toolCallsChecked\)/);
    assert.ok(performance.now() - t0 < 5000);
  });

  it("fails a reply whose <tool_call> block could not be read, saying why", async () => {
    const result = await run(undefined, '<tool_call>[{"name": "get_weather", "arguments": {"city": "Par');
    assert.equal(result.pass, false);
    assert.match(result.feedback, /^A tool call could not be read: a <tool_call> block is never closed/);
  });

  it("refuses tools without a name, with a repeated name or a bad parameter schema, naming the field", () => {
    const refuses = (list: unknown, field: string, words: RegExp) =>
      assert.throws(() => toolCallsCheck(list as ToolDefinition[]), (error: unknown) => error instanceof RequestFieldError && error.field === field && words.test(error.detail));
    refuses([], "tools", /at least one function/);
    refuses([{ name: "a" }, { description: "x" }], "tools[1].function.name", /non-empty name/);
    refuses([{ name: "a" }, { name: "a" }], "tools[1].function.name", /offered twice/);
    refuses([{ name: "a" }, { name: "b", parameters: { type: "objekt" } }], "tools[1].function.parameters", /the schema is invalid/);
  });
});
