import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RequestFieldError } from "../../errors.js";
import { cascade } from "../../loops/cascade.js";
import type { LanguageModel } from "../../models/language-model.js";
import { readToolCallBlocks } from "../../models/prompted-tools.js";
import { scriptedModel } from "../../models/scripted.js";
import { buildRequestChecks } from "./build.js";
import { requestTask, type RequestCheckSpec, type RequestRecord } from "./request-task.js";

const weather = { name: "get_weather", description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false } };
const every: RequestCheckSpec = {
  tests: ["assert f() == 1"],
  task: { name: "gsm8k", item: { question: "1 + 1?", answer: "2" } },
  regex: { pattern: "\\d" },
  tools: [weather],
  schema: { name: "s", schema: { type: "object" } },
};

/** Whether `fn` throws a RequestFieldError for `field` whose detail matches `words`. */
const refuses = (fn: () => unknown, field: string, words: RegExp) =>
  assert.throws(fn, (error: unknown) => error instanceof RequestFieldError && error.field === field && words.test(error.detail), `expected a RequestFieldError for ${field}`);

describe("buildRequestChecks", () => {
  it("builds the requested checks in cost order: schema, tools, regex, task, tests", () => {
    assert.deepEqual(buildRequestChecks(every).map((c) => [c.source, c.name]), [["schema", "schema"], ["tools", "tools"], ["regex", "regex"], ["task", "task:gsm8k"], ["tests", "tests"]]);
    assert.deepEqual(buildRequestChecks({}), []);
    assert.deepEqual(buildRequestChecks({ tools: [] }), []);
    assert.deepEqual(buildRequestChecks({ regex: "^a$" as unknown as RequestCheckSpec["regex"] }).map((c) => c.name), ["regex"]);
  });

  it("makes a forced tool call fail a text reply, and refuses tool_choice without tools", async () => {
    const [tools] = buildRequestChecks({ tools: [weather] }, { toolChoiceRequired: true });
    assert.match((await tools?.run({ text: "sunny" }))?.feedback ?? "", /A tool call was required/);
    assert.equal((await buildRequestChecks({ tools: [weather] })[0]?.run({ text: "sunny" }))?.pass, true);
    refuses(() => buildRequestChecks({}, { toolChoiceRequired: true }), "tool_choice", /no tools are offered/);
  });

  it("names the malformed field of each check", () => {
    refuses(() => buildRequestChecks({ schema: { schema: { type: 12 } } }), "response_format.json_schema.schema", /invalid/);
    refuses(() => buildRequestChecks({ schema: null as unknown as RequestCheckSpec["schema"] }), "response_format.json_schema", /JSON Schema object/);
    refuses(() => buildRequestChecks({ tools: [weather, { name: "x", parameters: { required: "city" } }] }), "tools[1].function.parameters", /invalid/);
    refuses(() => buildRequestChecks({ tools: [{ name: "" }] }), "tools[0].function.name", /non-empty name/);
    refuses(() => buildRequestChecks({ regex: { pattern: "[" } }), "reflect.regex", /does not compile/);
    refuses(() => buildRequestChecks({ regex: 7 as unknown as RequestCheckSpec["regex"] }), "reflect.regex", /give a pattern string/);
    refuses(() => buildRequestChecks({ regex: { pattern: undefined as unknown as string } }), "reflect.regex", /must be a string, not undefined/);
    refuses(() => buildRequestChecks({ task: { name: "nope", item: {} } }), "reflect.task", /known tasks/);
    refuses(() => buildRequestChecks({ task: { name: "countdown", item: [1] } }), "reflect.item", /not a countdown record/);
    refuses(() => buildRequestChecks({ tests: [] }), "reflect.tests", /empty/);
  });
});

describe("requestTask(buildRequestChecks(spec)) through cascade", () => {
  const record = (checks: RequestCheckSpec): RequestRecord => ({ messages: [{ role: "user", content: "Give the order as JSON." }], checks });

  it("fails a draft on the schema, reflects with the check's words, and passes the retry; the checks are listed per attempt", async () => {
    const spec: RequestCheckSpec = { schema: { name: "order", schema: { type: "object", properties: { qty: { type: "integer", minimum: 1 } }, required: ["qty"] } }, regex: { pattern: '"qty"' } };
    const task = requestTask(buildRequestChecks(spec));
    const model = scriptedModel(['{"qty": 0}', "qty must be at least 1.", '{"qty": 2}']);
    const episode = await cascade({ model, task, item: { id: "req-1", record: record(spec) }, turns: 2 });
    assert.equal(episode.correct, true);
    assert.equal(episode.solvedAt, 2);
    assert.equal(model.calls.length, 3);
    const [first, second] = episode.attempts;
    assert.deepEqual(first?.checks.map((c) => [c.source, c.pass]), [["schema", false]]);
    assert.match(first?.checks[0]?.feedback ?? "", /\$\.qty: must be >= 1 \(minimum\)/);
    assert.match(first?.reflection?.feedbackShown ?? "", /\$\.qty: must be >= 1 \(minimum\)/);
    assert.match(model.calls[1]?.messages.at(-1)?.content ?? "", /\$\.qty: must be >= 1/);
    assert.deepEqual(second?.checks.map((c) => [c.source, c.pass]), [["schema", true], ["regex", true]]);
    assert.equal(episode.selected, 2);
  });

  it("checks tool calls a model made: a bad argument fails, the retry's calls pass", async () => {
    const spec: RequestCheckSpec = { tools: [weather] };
    const task = requestTask(buildRequestChecks(spec, { toolChoiceRequired: true }));
    // The scripted replies read as a prompted model's would (models/prompted-tools.ts): calls out of the text.
    const scripted = scriptedModel(['<tool_call>[{"name": "get_weather", "arguments": {"town": "Paris"}}]</tool_call>', "The parameter is city.", '<tool_call>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_call>']);
    const model: LanguageModel = {
      ...scripted,
      async doGenerate(request) {
        const result = await scripted.doGenerate(request);
        const read = readToolCallBlocks(result.text);
        return read.toolCalls.length === 0 ? result : { ...result, text: read.text, toolCalls: read.toolCalls };
      },
    };
    const episode = await cascade({ model, task, item: { id: "req-2", record: record(spec) }, turns: 2, attempt: { maxTokens: 512, tools: [weather] } });
    assert.equal(episode.correct, true);
    assert.deepEqual(episode.attempts.map((a) => a.checks.map((c) => [c.source, c.pass])), [[["tools", false]], [["tools", true]]]);
    assert.match(episode.attempts[0]?.checks[0]?.feedback ?? "", /tool call 0 \(get_weather\): .*\n {2}\$: must have required property 'city'/);
    assert.deepEqual(episode.attempts[1]?.call.toolCalls, [{ id: "call_0", name: "get_weather", arguments: '{"city":"Paris"}' }]);
    // every attempt offered the tools
    assert.deepEqual(scripted.calls.filter((_, i) => i !== 1).map((c) => c.tools?.map((t) => t.name)), [["get_weather"], ["get_weather"]]);
  });
});
