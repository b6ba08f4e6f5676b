import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { logiqaFamily, logiqaTask } from "./index.js";

describe("logiqaFamily", () => {
  it("points at ReflectEvo's file and builds a task", () => {
    assert.equal(logiqaFamily.name, "logiqa");
    assert.equal(logiqaFamily.defaultData, "reflectevo/logiqa_test.jsonl");
    assert.equal(logiqaFamily.generate, undefined);
    assert.equal(logiqaFamily.create({}).name, "logiqa");
  });

  it("prompts with the passage, the labelled options and the answer format", () => {
    const task = logiqaTask();
    const record = task.parseRecord({ question: "All A are B.\nWhat follows?\nA.one\nB.two\nC.three\nD.four", answer: "a" });
    const [message, ...rest] = task.prompt(record);
    assert.equal(rest.length, 0);
    assert.equal(message?.role, "user");
    assert.match(message?.content ?? "", /Passage: All A are B\.\n\nQuestion: What follows\?\n\nA\. one\nB\. two\nC\. three\nD\. four\n\n/);
    assert.match(message?.content ?? "", /Reason briefly, then give the letter of your final choice \(A, B, C or D\) inside <answer><\/answer> tags\.$/);
  });

  it("conforms: gold answers verify, corrupted answers fail, arbitrary text never throws", () => {
    const task = logiqaTask();
    const record = task.parseRecord({ context: "C", question: "Q?", options: ["w", "x", "y", "z"], gold: "c" });
    assert.equal(task.verify(record, "<answer>C</answer>").correct, true);
    assert.equal(task.verify(record, "<answer>D</answer>").correct, false);
    for (const text of ["", "\u0000", "\ud800", "<answer>", "((((", "Option"]) assert.equal(task.verify(record, text).correct, false);
  });

  it("loads its default data (500 items)", async (t) => {
    const path = join(resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data"), logiqaFamily.defaultData ?? "");
    if (!existsSync(path)) return t.skip(`shared data not found at ${path}; set REFLECTKIT_DATA`);
    const task = logiqaFamily.create({});
    const items = await logiqaFamily.load(path, task);
    assert.equal(items.length, 500);
    for (const item of items.slice(0, 20)) assert.deepEqual(task.parseRecord(JSON.parse(JSON.stringify(item.record))), item.record);
  });
});
