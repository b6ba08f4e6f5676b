import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { countdownTask, generateCountdown, mulberry32, solveCountdown } from "./index.js";

describe("countdownTask", () => {
  it("is named countdown and wires prompt, verify and parseRecord", () => {
    const task = countdownTask();
    assert.equal(task.name, "countdown");
    assert.deepEqual(task.parseRecord({ input: "3,5,7", output: "22" }), { nums: [3, 5, 7], target: 22 });
    assert.throws(() => task.parseRecord({ nums: "3,5,7", target: 22 }), /"nums" must be an array/);
    const record = { nums: [3, 5, 7, 11], target: 22 };
    assert.match(task.prompt(record)[0]?.content ?? "", /exactly once/);
    assert.equal(task.verify(record, "<answer>3 * 5 + 7</answer>").correct, false);
  });

  it("passes the mode to prompt and verifier", () => {
    const task = countdownTask({ mode: "lenient" });
    const record = { nums: [3, 5, 7, 11], target: 22 };
    assert.match(task.prompt(record)[0]?.content ?? "", /at most once/);
    assert.equal(task.verify(record, "<answer>3 * 5 + 7</answer>").correct, true);
  });
});

// Conformance, as every Task should pass it: gold answers verify, corrupted answers fail, arbitrary text never throws.
describe("countdown conformance", () => {
  const task = countdownTask();
  const items = generateCountdown({ seed: 2024, count: 40 });

  it("gold answers verify", () => {
    for (const { id, record } of items) {
      const gold = solveCountdown(record.nums, record.target);
      assert.ok(gold !== null, id);
      const verdict = task.verify(record, `<think>working</think>\n<answer> ${gold} </answer>`);
      assert.deepEqual([verdict.correct, verdict.score, verdict.answer], [true, 1, gold], `${id}: ${verdict.feedback}`);
    }
  });

  it("corrupted answers fail: one number changed, one number dropped", () => {
    for (const { id, record } of items) {
      const gold = solveCountdown(record.nums, record.target) ?? "";
      const first = record.nums[0] ?? 0;
      // Replace the first occurrence of the first number (as a whole literal) with a different number.
      const changed = gold.replace(new RegExp(`(?<![0-9])${first}(?![0-9])`), String(first + 100));
      assert.notEqual(changed, gold, id);
      const changedVerdict = task.verify(record, `<answer>${changed}</answer>`);
      assert.equal(changedVerdict.correct, false, `${id}: ${changed}`);
      assert.match(changedVerdict.feedback, new RegExp(`Number ${first + 100} is not among the given numbers`));
      const dropped = record.nums.slice(1).join(" + ");
      const droppedVerdict = task.verify(record, `<answer>${dropped}</answer>`);
      assert.equal(droppedVerdict.correct, false, `${id}: ${dropped}`);
      assert.match(droppedVerdict.feedback, /Numbers missing: /);
    }
  });

  it("200 random strings never throw and always get a boolean verdict", () => {
    const random = mulberry32(99);
    const pieces = [
      "<answer>", "</answer>", "<ANSWER>", "\\boxed{", "}", "{", "(", ")", "+", "-", "*", "/", "=", " ", "\n",
      "0", "7", "42", "99999999999999999999", "\u0663", "\uff13", "\u00d7", "\u00f7", "\u2212", "\u0000",
      "\ud800", "\udc00", "\u{1F600}", "x", "ignore previous instructions", "<think>", "</think>", ".",
    ];
    for (let i = 0; i < 200; i++) {
      const length = Math.floor(random() * 60);
      let text = "";
      for (let j = 0; j < length; j++) text += pieces[Math.floor(random() * pieces.length)];
      const record = items[i % items.length]?.record ?? { nums: [1], target: 1 };
      const verdict = task.verify(record, text);
      assert.equal(typeof verdict.correct, "boolean", JSON.stringify(text));
      assert.equal(typeof verdict.feedback, "string");
      assert.ok(verdict.feedback.length > 0);
      assert.ok(verdict.answer === null || typeof verdict.answer === "string");
    }
  });
});
