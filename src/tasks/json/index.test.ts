import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hostileOutputs } from "../choice/hostile-outputs.js";
import { generateJsonCases, jsonFamily, jsonPrompt, jsonTask, SchemaCache } from "./index.js";
import type { JsonRecord } from "./record.js";

describe("jsonFamily", () => {
  it("is a TaskFamily with a generator and a loader", () => {
    assert.equal(jsonFamily.name, "json");
    assert.equal(typeof jsonFamily.load, "function");
    assert.equal(jsonFamily.defaultData, undefined);
    const items = jsonFamily.generate?.(5, 12) ?? [];
    assert.equal(items.length, 12);
    assert.deepEqual(items, generateJsonCases({ seed: 5, count: 12 }).map(({ id, record }) => ({ id, record })));
    assert.equal(jsonFamily.create({}).name, "json");
  });

  it("prompts with the facts, the schema and the answer format", () => {
    const [first] = generateJsonCases({ seed: 5, count: 1 });
    const [message] = jsonPrompt(first?.record as JsonRecord);
    assert.equal(message?.role, "user");
    assert.ok(message?.content.startsWith(first?.record.prompt as string));
    assert.ok(message?.content.includes(JSON.stringify(first?.record.schema, null, 2)));
    assert.match(message?.content ?? "", /only the JSON value inside <answer><\/answer> tags/);
  });

  it("conforms: gold answers verify, corrupted answers fail, arbitrary text never throws, records round-trip", () => {
    const schemas = new SchemaCache();
    const task = jsonTask({ schemas });
    for (const c of generateJsonCases({ seed: 11, count: 1000 })) {
      assert.equal(task.verify(c.record, `<answer>${JSON.stringify(c.gold)}</answer>`).correct, true, c.id);
      assert.equal(task.verify(c.record, `<answer>${JSON.stringify({ wrong: c.gold })}</answer>`).correct, false, c.id);
      assert.deepEqual(task.parseRecord(JSON.parse(JSON.stringify(c.record))), c.record);
    }
    assert.equal(schemas.compileCount, 5, "a thousand items over five schemas compile five times");
    const [item] = generateJsonCases({ seed: 11, count: 1 });
    for (const { name, text } of hostileOutputs()) {
      const verdict = task.verify(item?.record as JsonRecord, text);
      assert.equal(verdict.correct, false, name);
    }
  });

  it("gives each task its own validator cache unless one is shared", () => {
    const shared = new SchemaCache();
    const [item] = generateJsonCases({ seed: 1, count: 1 });
    jsonTask({ schemas: shared }).verify(item?.record as JsonRecord, "{}");
    jsonTask({ schemas: shared }).verify(item?.record as JsonRecord, "{}");
    assert.equal(shared.compileCount, 1);
  });
});
