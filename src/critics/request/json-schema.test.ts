import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RequestFieldError } from "../../errors.js";
import { jsonSchemaCheck } from "./json-schema.js";

const order = {
  type: "object",
  properties: {
    customer: { type: "string", minLength: 1 },
    items: { type: "array", items: { type: "object", properties: { sku: { type: "string" }, price: { type: "number", minimum: 0 } }, required: ["sku", "price"], additionalProperties: false } },
  },
  required: ["customer", "items"],
  additionalProperties: false,
};
const check = jsonSchemaCheck(order, "order");
const good = { customer: "Ada", items: [{ sku: "a", price: 1 }, { sku: "b", price: 0 }] };

describe("jsonSchemaCheck", () => {
  it("passes a reply that is exactly valid JSON, and says where it read it", async () => {
    assert.deepEqual(await check.run({ text: ` ${JSON.stringify(good)}\n` }), { source: "schema", pass: true, score: 1, feedback: 'The JSON in the reply is valid against the schema "order".' });
    assert.equal(check.source, "schema");
    assert.equal(check.name, "schema");
  });

  it("reads one ```json block when the whole reply is not JSON", async () => {
    const result = await check.run({ text: `Here it is:\n\`\`\`json\n${JSON.stringify(good, null, 2)}\n\`\`\`\nAnything else?` });
    assert.equal(result.pass, true);
    assert.match(result.feedback, /the ```json block is valid/);
  });

  it("names the JSONPath and the rule of each violation", async () => {
    const bad = { customer: "", items: [{ sku: "a", price: 1 }, { sku: "b", price: 2 }, { sku: "c", price: -3 }, { sku: 4, price: 1, colour: "red" }, { sku: "e" }], extra: true };
    const result = await check.run({ text: JSON.stringify(bad) });
    assert.equal(result.pass, false);
    assert.equal(result.score, 0);
    assert.match(result.feedback, /^The JSON in the reply does not match the schema "order" \(6 violations\):/);
    assert.match(result.feedback, /^\$\.items\[3\]: must NOT have additional property 'colour' \(additionalProperties\)$/m);
    assert.match(result.feedback, /^\$: must NOT have additional property 'extra' \(additionalProperties\)$/m);
    assert.match(result.feedback, /^\$\.customer: must NOT have fewer than 1 characters \(minLength\)$/m);
    assert.match(result.feedback, /^\$\.items\[2\]\.price: must be >= 0 \(minimum\)$/m);
    assert.match(result.feedback, /^\$\.items\[3\]\.sku: must be string \(type\)$/m);
    // at most five listed
    assert.match(result.feedback, /… and 1 more$/);
  });

  it("quotes odd keys in the path and reports a missing property at its parent", async () => {
    const schema = { type: "object", properties: { "a b": { type: "object", required: ["x"] } } };
    const result = await jsonSchemaCheck(schema).run({ text: '{"a b": {}}' });
    assert.match(result.feedback, /^\$\["a b"\]: must have required property 'x' \(required\)$/m);
    assert.match(result.feedback, /does not match the schema \(1 violation\)/);
  });

  it("fails a reply that is not JSON with the line and column, and a bad ```json block likewise", async () => {
    const prose = await check.run({ text: "Sure! The order is for Ada." });
    assert.equal(prose.pass, false);
    assert.match(prose.feedback, /^The reply is not JSON: line 1, column 1: expected a value, found "Sure! The "/);
    assert.match(prose.feedback, /Reply with the JSON value only, valid against the schema "order"\.$/);
    const fenced = await check.run({ text: "```json\n{\"customer\": \"Ada\",\n \"items\": [1,]}\n```" });
    assert.match(fenced.feedback, /^The JSON in the ```json block does not parse: line 2, column 13: a trailing comma/);
  });

  it("stays linear and bounded on hostile replies: 2 MB, 100,000 open brackets", async () => {
    const t0 = performance.now();
    const huge = await check.run({ text: JSON.stringify({ customer: "x".repeat(2_000_000), items: [] }) });
    assert.equal(huge.pass, true);
    const deep = await check.run({ text: "[".repeat(100_000) });
    assert.equal(deep.pass, false);
    assert.match(deep.feedback, /nested more than 256 deep/);
    assert.ok(performance.now() - t0 < 5000);
  });

  it("treats __proto__ and constructor keys as plain data: no pollution, and reported as additional properties", async () => {
    const result = await check.run({ text: '{"customer": "Ada", "items": [], "__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}' });
    assert.equal(result.pass, false);
    assert.match(result.feedback, /must NOT have additional property '__proto__'/);
    assert.match(result.feedback, /must NOT have additional property 'constructor'/);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  });

  it("stops a schema whose pattern backtracks catastrophically: cannot judge, within the time limit", async () => {
    const hostile = jsonSchemaCheck({ type: "string", pattern: "^(a+)+$" });
    const t0 = performance.now();
    const result = await hostile.run({ text: JSON.stringify("a".repeat(40) + "b") });
    assert.equal(result.pass, null);
    assert.match(result.feedback, /^Cannot judge: validating took longer than 100 ms and was stopped/);
    assert.ok(performance.now() - t0 < 2000);
    assert.equal((await hostile.run({ text: '"aaa"' })).pass, true);
  });

  it("refuses a schema that does not compile, naming response_format.json_schema.schema", () => {
    const refuses = (schema: unknown, words: RegExp) =>
      assert.throws(() => jsonSchemaCheck(schema), (error: unknown) => error instanceof RequestFieldError && error.field === "response_format.json_schema.schema" && words.test(error.detail));
    refuses({ type: "strin" }, /the schema is invalid/);
    refuses({ type: "string", pattern: "(" }, /not a valid regular expression/);
    refuses({ $schema: "http://json-schema.org/draft-04/schema#" }, /draft-04 and older/);
    refuses([1, 2], /an object or a boolean, not an array/);
    refuses({ $ref: "#/definitions/missing" }, /can't resolve reference|does not compile/);
  });
});

describe("jsonSchemaCheck's vacuity", () => {
  it("marks a schema that accepts every value (true, {}, annotations only) as vacuous, and one keyword that constrains as not", () => {
    for (const schema of [true, {}, { title: "t", description: "d" }, { $schema: "https://json-schema.org/draft/2020-12/schema", $defs: { a: { type: "string" } }, default: 1 }]) {
      assert.match(jsonSchemaCheck(schema).vacuous ?? "", /constrains nothing/, JSON.stringify(schema));
    }
    for (const schema of [{ type: "object" }, { properties: { a: { type: "string" } } }, { not: {} }, { format: "email" }, { enum: [1] }, false]) {
      assert.equal(jsonSchemaCheck(schema).vacuous, undefined, JSON.stringify(schema));
    }
  });
});
