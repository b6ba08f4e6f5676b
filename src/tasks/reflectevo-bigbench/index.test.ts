import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { reflectevoBigbenchFamily, reflectevoBigbenchTask } from "./index.js";

describe("reflectevoBigbenchFamily", () => {
  it("points at ReflectEvo's file and builds a task", () => {
    assert.equal(reflectevoBigbenchFamily.name, "reflectevo-bigbench");
    assert.equal(reflectevoBigbenchFamily.defaultData, "reflectevo/bigbench_test.jsonl");
    assert.equal(reflectevoBigbenchFamily.create({}).name, "reflectevo-bigbench");
  });

  it("asks for a short answer, or a letter when the item lists options", () => {
    const task = reflectevoBigbenchTask();
    assert.match(task.prompt({ question: "Q?", answers: ["x"] })[0]?.content ?? "", /^Q\?\n\nAnswer with a short phrase.*<answer><\/answer> tags\.$/u);
    assert.match(task.prompt({ question: "Q?\nOptions:\nA. Yes\nB. No", answers: ["a"] })[0]?.content ?? "", /letter of your final choice/);
  });

  it("conforms: records parse and round-trip", () => {
    const task = reflectevoBigbenchTask();
    const record = task.parseRecord({ id: 4, question: "Q?", answer: "x" });
    assert.deepEqual(record, { question: "Q?", answers: ["x"] });
    assert.deepEqual(task.parseRecord(JSON.parse(JSON.stringify(record))), record);
    assert.deepEqual(task.parseRecord({ question: "Q?", answer: ["x", "y"] }), { question: "Q?", answers: ["x", "y"] });
    assert.throws(() => task.parseRecord(null), /must be an object/);
  });

  it("loads its default data (500 items)", async (t) => {
    const path = join(resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data"), reflectevoBigbenchFamily.defaultData ?? "");
    if (!existsSync(path)) return t.skip(`shared data not found at ${path}; set REFLECTKIT_DATA`);
    const task = reflectevoBigbenchFamily.create({});
    const items = await reflectevoBigbenchFamily.load(path, task);
    assert.equal(items.length, 500);
    for (const item of items.slice(0, 20)) assert.deepEqual(task.parseRecord(JSON.parse(JSON.stringify(item.record))), item.record);
  });
});
