import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SchemaCache, schemaDialect, type CompiledSchema } from "./schema-cache.js";

function validator(compiled: CompiledSchema): (value: unknown) => string[] {
  assert.ok(compiled.ok, compiled.ok ? "" : compiled.problem);
  return (value) => compiled.validate(value).map((e) => `${e.instancePath}:${e.keyword}`);
}

function problem(compiled: CompiledSchema): string {
  assert.equal(compiled.ok, false);
  return (compiled as { problem: string }).problem;
}

const person = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };

describe("SchemaCache", () => {
  it("compiles a schema once for any number of items sharing its JSON text", () => {
    const cache = new SchemaCache();
    for (let i = 0; i < 1000; i++) {
      const validate = validator(cache.get(JSON.parse(JSON.stringify(person))));
      assert.deepEqual(validate({ name: "Ada" }), []);
    }
    assert.equal(cache.compileCount, 1);
    cache.get({ ...person, required: [] });
    assert.equal(cache.compileCount, 2);
    assert.equal(cache.size, 2);
  });

  it("caches a schema that fails to compile as its problem", () => {
    const cache = new SchemaCache();
    for (let i = 0; i < 100; i++) problem(cache.get({ type: "strin" }));
    assert.equal(cache.compileCount, 1);
  });

  it("keeps the most recently used schemas when full", () => {
    const cache = new SchemaCache({ maxEntries: 2 });
    const a = { type: "string" };
    const b = { type: "number" };
    const c = { type: "boolean" };
    cache.get(a);
    cache.get(b);
    cache.get(a);
    cache.get(c); // evicts b, the least recently used
    assert.equal(cache.size, 2);
    cache.get(a);
    assert.equal(cache.compileCount, 3);
    cache.get(b);
    assert.equal(cache.compileCount, 4);
  });

  it("reads the dialect from $schema: 2020-12 by default, draft-07 for tuple items", () => {
    const cache = new SchemaCache();
    const tuple07 = { $schema: "http://json-schema.org/draft-07/schema#", type: "array", items: [{ type: "string" }, { type: "integer" }], additionalItems: false };
    assert.deepEqual(validator(cache.get(tuple07))(["a", 1]), []);
    assert.deepEqual(validator(cache.get(tuple07))(["a", "b", 3]), [":additionalItems", "/1:type"]);
    const tuple2020 = { $schema: "https://json-schema.org/draft/2020-12/schema", type: "array", prefixItems: [{ type: "string" }], items: false };
    assert.deepEqual(validator(cache.get(tuple2020))(["a"]), []);
    assert.deepEqual(validator(cache.get(tuple2020))(["a", 1]), [":items"]);
    // Without $schema, 2020-12: the draft-07 array form of `items` is not a schema there.
    assert.match(problem(cache.get({ type: "array", items: [{ type: "string" }] })), /schema is invalid: schema\/items must be object,boolean/);
    assert.deepEqual(validator(cache.get({ $schema: "https://json-schema.org/draft/2019-09/schema#", type: "object", unevaluatedProperties: false }))({ a: 1 }), [":unevaluatedProperties"]);
    assert.deepEqual(validator(cache.get({ $schema: "http://json-schema.org/draft-06/schema#", const: 3 }))(4), [":const"]);
    assert.deepEqual(validator(cache.get({ $schema: "https://json-schema.org/draft-07/schema", type: "string" }))(1), [":type"]);
    assert.deepEqual(validator(cache.get(true))(1), []);
    assert.deepEqual(validator(cache.get(false))(1), [":false schema"]);
  });

  it("refuses draft-04, unknown and malformed $schema values", () => {
    assert.equal(schemaDialect(undefined), "2020-12");
    assert.equal(schemaDialect("http://json-schema.org/schema#"), "2020-12");
    const cache = new SchemaCache();
    assert.match(problem(cache.get({ $schema: "http://json-schema.org/draft-04/schema#", type: "string" })), /draft-04.*is not supported/);
    assert.match(problem(cache.get({ $schema: "https://example.com/my-meta", type: "string" })), /unknown "\$schema"/);
    assert.match(problem(cache.get({ $schema: 7 })), /must be a URI string/);
    assert.match(problem(cache.get([{ type: "string" }])), /object or a boolean, not an array/);
    assert.match(problem(cache.get(null)), /not null/);
  });

  it("names the problem of a schema that does not compile", () => {
    const cache = new SchemaCache();
    assert.match(problem(cache.get({ type: "string", pattern: "([a-z]" })), /"pattern" .*not a valid regular expression/);
    assert.match(problem(cache.get({ properties: { a: { $ref: "#/$defs/missing" } } })), /does not compile: can't resolve reference #\/\$defs\/missing/);
    assert.match(problem(cache.get({ $ref: "https://example.com/remote.json" })), /can't resolve reference/);
    assert.match(problem(cache.get({ type: "object", required: "name" })), /schema\/required must be array/);
    assert.match(problem(cache.get({ $async: true, type: "object" })), /asynchronous schemas/);
  });

  it("compiles different schemas that share an $id, and validates each by its own", () => {
    const cache = new SchemaCache();
    const first = validator(cache.get({ $id: "https://example.com/item", type: "string" }));
    const second = validator(cache.get({ $id: "https://example.com/item", type: "integer" }));
    assert.deepEqual(first("a"), []);
    assert.deepEqual(second("a"), [":type"]);
    assert.deepEqual(second(1), []);
  });

  it("accepts real-world schemas: unknown keywords, formats, recursive $defs", () => {
    const cache = new SchemaCache();
    const schema = {
      title: "Order",
      "x-internal": true,
      type: "object",
      properties: { email: { type: "string", format: "email" }, when: { type: "string", format: "date" }, tree: { $ref: "#/$defs/node" } },
      $defs: { node: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/node" } } } } },
    };
    const validate = validator(cache.get(schema));
    assert.deepEqual(validate({ email: "ada@example.com", when: "2024-02-29", tree: { children: [{ children: [] }] } }), []);
    assert.deepEqual(validate({ email: "not an email", when: "2023-02-30", tree: { children: [1] } }), ["/email:format", "/when:format", "/tree/children/0:type"]);
    assert.equal(validator(cache.get({ type: "string", format: "no-such-format" }))("x").length, 0);
  });
});
