import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { bbhFamily, bbhTask } from "./index.js";

describe("bbhFamily", () => {
  it("points at the bbh folder and builds a task", () => {
    assert.equal(bbhFamily.name, "bbh");
    assert.equal(bbhFamily.defaultData, "bbh");
    assert.equal(bbhFamily.create({}).name, "bbh");
  });

  it("prompts with the input and the answer format of its kind", () => {
    const task = bbhTask();
    const prompt = (target: string, task_ = "t") => task.prompt(task.parseRecord({ task: task_, input: "IN", target }))[0]?.content;
    assert.equal(prompt("(A)"), "IN\n\nThink step by step, then give your final answer inside <answer></answer> tags: the letter of the correct option.");
    assert.match(prompt("True") ?? "", /: True or False\.$/);
    assert.match(prompt("] )", "dyck_languages") ?? "", /closing brackets/);
  });

  it("conforms: records parse and round-trip, bad ones are refused", () => {
    const task = bbhTask();
    const record = { task: "navigate", input: "Do you return?", target: "No" };
    assert.deepEqual(task.parseRecord(JSON.parse(JSON.stringify(record))), record);
    assert.equal(task.verify(record, "<answer>No</answer>").correct, true);
    assert.equal(task.verify(record, "<answer>Yes</answer>").correct, false);
    assert.throws(() => task.parseRecord({ input: "x", target: "y" }), /"task" must be/);
    assert.throws(() => task.parseRecord({ task: "t", input: "x", target: "" }), /"target" must be/);
    assert.throws(() => task.parseRecord("x"), /must be an object/);
  });

  it("loads its default data (6511 items)", async (t) => {
    const path = join(resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data"), bbhFamily.defaultData ?? "");
    if (!existsSync(path)) return t.skip(`shared data not found at ${path}; set REFLECTKIT_DATA`);
    const task = bbhFamily.create({});
    const items = await bbhFamily.load(path, task);
    assert.equal(items.length, 6511);
    for (const item of items.slice(0, 20)) assert.deepEqual(task.parseRecord(JSON.parse(JSON.stringify(item.record))), item.record);
  });
});
